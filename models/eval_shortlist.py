#!/usr/bin/env python3
"""BLEU of the engine with and without the lexical shortlist: the command line of residual_mt/eval_shortlist.py, kept where the docs call it."""
from residual_mt.eval_shortlist import main

main()
