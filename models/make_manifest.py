#!/usr/bin/env python3
"""Writes (or --check-s) a model directory's manifest.json: the command line of residual_mt/manifest.py, kept where the docs call it."""
import sys

from residual_mt.manifest import main

sys.exit(main(sys.argv[1:]))
