#!/usr/bin/env python3
"""Converts a Marian model (OPUS-MT, Firefox Translations) to a model directory: the command line of residual_mt/marian.py, kept where the docs call it."""
import sys

from residual_mt.marian import main

sys.exit(main(sys.argv[1:]))
