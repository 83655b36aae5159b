"""The repository's folders and files the pipeline reads and writes by
default, each named once (the scripts' --data, --model, --out defaults)."""
import os

PACKAGE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(PACKAGE)
ROOT = os.path.dirname(MODELS)
CORPUS = os.path.join(MODELS, "data", "work")  # models/data/build_corpus.py's output
GETTEXT_PACKAGES = os.path.join(MODELS, "data", "gettext-packages.txt")
EVERYDAY = os.path.join(MODELS, "everyday")  # our everyday dev and test sets
SHIPPED = os.path.join(MODELS, "es-en")
RUNS = os.path.join(MODELS, "runs")
ANALYSIS = os.path.join(MODELS, "analysis")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
CLI = os.path.join(ROOT, "js", "cli.js")
LANGID = os.path.join(MODELS, "langid")  # the shipped language identifier (npm package residual-mt-langid)
