#!/usr/bin/env python3
"""Adds the language identifier's everyday strings (CLDR, Tux Paint, KDE, Minetest, GCompris): the command line of residual_mt/langid/everyday_sources.py."""
from residual_mt.langid.everyday_sources import main

main()
