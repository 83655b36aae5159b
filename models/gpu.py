#!/usr/bin/env python3
"""The GPU run (pack here, run there, join here): the command line of residual_mt/gpu.py, kept where the docs call it."""
from residual_mt.gpu import main

main()
