#!/usr/bin/env python3
"""Trains the reference model on the corpus (resumable): the command line of residual_mt/train.py, kept where the docs call it."""
from residual_mt.train import main

main()
