#!/usr/bin/env python3
"""BLEU of the engine on two model directories side by side (float and int8): the command line of residual_mt/eval_engine.py, kept where the docs call it."""
from residual_mt.eval_engine import main

main()
