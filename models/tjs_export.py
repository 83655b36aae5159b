#!/usr/bin/python3
"""Writes the transformers.js benchmark's model for both runtimes: the command line of residual_mt/tjs_export.py."""
from residual_mt.tjs_export import main

main()
