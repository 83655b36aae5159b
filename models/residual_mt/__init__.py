"""residual-mt's model pipeline: the PyTorch reference that defines correct,
the corpus, training, export, quantization, evaluation and Marian conversion.
The command-line entry points are the scripts in models/ (each a few lines
calling one module's main) or `python3 -m residual_mt.MODULE` from models/."""
