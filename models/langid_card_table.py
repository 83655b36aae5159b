#!/usr/bin/env python3
"""The language identifier's card table from its eval.json: the command line of residual_mt/langid/card_table.py."""
from residual_mt.langid.card_table import main

main()
