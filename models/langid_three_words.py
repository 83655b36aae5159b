#!/usr/bin/env python3
"""The language identifier's accuracy on text cut to three words: the command line of residual_mt/langid/three_words.py."""
from residual_mt.langid.three_words import main

main()
