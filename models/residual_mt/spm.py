"""Debian's SentencePiece tools (spm_encode, spm_decode, spm_export_vocab),
run as the engine's tests run them: the pipeline's tokenizer, independent
of the engine's."""
import subprocess


def run(tool, model_path, args, lines):
    """tool's output lines for the input lines, one for one."""
    out = subprocess.run([tool, "--model=" + model_path, *args], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:len(lines)]


def encode(model_path, texts):
    """ids of each text (a line break inside one is read as a space)."""
    if not texts:
        return []
    lines = run("spm_encode", model_path, ["--output_format=id"], [t.replace("\n", " ") for t in texts])
    return [[int(x) for x in line.split()] for line in lines]


def decode(model_path, id_lists):
    return run("spm_decode", model_path, ["--input_format=id"], [" ".join(map(str, ids)) for ids in id_lists])


def pieces(model_path):
    """The model's pieces, in id order."""
    out = subprocess.run(["spm_export_vocab", "--model=" + model_path], capture_output=True,
                         text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines()]


class Decoder:
    """ids -> text by spm_decode, for evaluate.bleu_of_split (corpus.Pieces
    is the same without the tool, for the training log)."""

    def __init__(self, model_path):
        self.model_path = model_path

    def decode_many(self, id_lists):
        return decode(self.model_path, id_lists)
