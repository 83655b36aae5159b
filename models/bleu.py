#!/usr/bin/env python3
"""Corpus BLEU (sacreBLEU's defaults) of stdin against a reference file: the command line of residual_mt/bleu.py, kept where the docs call it."""
import sys

from residual_mt.bleu import main

sys.exit(main(sys.argv))
