#!/usr/bin/env python3
"""Builds the corpus: the command line of residual_mt/data/build_corpus.py, kept where the docs call it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # models/, the package's folder
from residual_mt.data.build_corpus import main  # noqa: E402

main()
