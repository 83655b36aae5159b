#!/usr/bin/env python3
"""Builds the language identifier's training data from Debian packages: the command line of residual_mt/langid/build_data.py."""
from residual_mt.langid.build_data import main

main()
