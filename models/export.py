#!/usr/bin/env python3
"""Exports a training run as a model directory: the command line of residual_mt/export.py, kept where the docs call it."""
from residual_mt.export import main

main()
