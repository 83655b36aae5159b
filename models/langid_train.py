#!/usr/bin/env python3
"""Trains (or, with --from, evaluates) the language identifier: the command line of residual_mt/langid/train.py."""
from residual_mt.langid.train import main

main()
