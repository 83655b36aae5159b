"""The language identifier of residual-mt's LanguageDetector: its training data
(build_data, everyday_sources), features (features: the C core's, through
ctypes), training and evaluation (train, three_words, card_table), and the
checks of its evaluation text (check_overlap).  The shipped model is
models/langid/ (paths.LANGID); the command lines are models/langid_*.py."""
