#!/usr/bin/env python3
"""Corpus chrF2 (sacreBLEU's defaults) of stdin against a reference file, or two systems compared by paired bootstrap: the command line of residual_mt/chrf.py, kept where the docs call it."""
from residual_mt.chrf import main

main()
