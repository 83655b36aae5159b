#!/usr/bin/env python3
"""Scores a training run's snapshots on the test and everyday sets: the command line of residual_mt/eval_checkpoint.py, kept where the docs call it."""
from residual_mt.eval_checkpoint import main

main()
