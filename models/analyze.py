#!/usr/bin/env python3
"""Gradient norms and layer cosines of the three residual styles: the command line of residual_mt/analysis.py, kept where the docs call it."""
from residual_mt.analysis import main

main()
