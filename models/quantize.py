#!/usr/bin/env python3
"""Writes a model directory's int8 copy: the command line of residual_mt/quantize.py, kept where the docs call it."""
from residual_mt.quantize import main

main()
