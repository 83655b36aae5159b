#!/usr/bin/env python3
"""Romanized Greek, Hindi and Japanese for the language identifier: the command line of residual_mt/langid/romanize.py."""
from residual_mt.langid.romanize import main

main()
