#!/usr/bin/env python3
"""Adds the lexical shortlist to a model directory: the command line of residual_mt/shortlist.py, kept where the docs call it."""
from residual_mt.shortlist import main

main()
