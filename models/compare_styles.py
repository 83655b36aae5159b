#!/usr/bin/env python3
"""Post-LN, Pre-LN and ResiDual trained at equal budget: the command line of residual_mt/compare_styles.py, kept where the docs call it."""
from residual_mt.compare_styles import main

main()
