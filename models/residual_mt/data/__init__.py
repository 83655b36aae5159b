"""The corpus build: one module per source (its download and cleaning
rules), their shared cleaning and alignment, and build_corpus (the splits,
the tokenizer, the ids)."""
