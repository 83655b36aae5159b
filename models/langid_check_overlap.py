#!/usr/bin/env python3
"""Looks for evaluation sentences in the language identifier's training text: the command line of residual_mt/langid/check_overlap.py."""
from residual_mt.langid.check_overlap import main

main()
