#!/usr/bin/env python3
"""The everyday sentences: the model card's table, or chrF/BLEU beside Apertium: the command line of residual_mt/everyday.py, kept where the docs call it."""
from residual_mt.everyday import main

main()
