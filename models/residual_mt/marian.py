#!/usr/bin/env python3
"""Converts a Marian transformer (OPUS-MT .npz, Firefox Translations / Bergamot
.bin) into a residual-mt model directory: config.json, model.safetensors,
spm.model and manifest.json.

    python3 models/convert_marian.py --model model.bin --vocab vocab.spm --out DIR \\
        [--shortlist lex.s2t.bin] [--source-language es --target-language en] [--max-positions 512]
    python3 models/convert_marian.py --model opus.npz --vocab opus.vocab.yml \\
        --source-spm source.spm --target-spm target.spm --out DIR           (OPUS-MT)

The standard library and PyYAML (Debian's python3-yaml) are used (the .npz
is a zip of .npy files; every input may be gzipped, as Firefox Translations
ships them). The architecture comes from the model's embedded
"special:model.yml"; anything the engine does not compute exactly as Marian
does is refused with a message naming the option and its value, before
anything is written. js/marian/convert.js is the same mapping in JavaScript, and
writes the same files to the byte (tests/marian-js.test.js).

Formats and names, as read in marian-dev's sources: src/common/binary.cpp
(.bin), src/common/types.h (type codes), src/models/transformer.h and
src/rnn/cells.h (parameter names), src/layers/generic.h (LN names, eps 1e-6),
src/tensors/cpu/integer_common.h (intgemm8: int8 values stored transposed,
then one float32 quantisation multiplier; value = q * (1 / multiplier)).
"""
import argparse
import decimal
import gzip
import io
import json
import math
import os
import re
import struct
import sys
import zipfile
import zlib
from array import array

try:
    import yaml
except ImportError:
    sys.exit("convert_marian: needs PyYAML (Debian: apt-get install python3-yaml; elsewhere: pip install pyyaml)")

from . import manifest as make_manifest

TYPE_INT8 = 0x0101
TYPE_UINT8 = 0x0201
TYPE_FLOAT32 = 0x0404
TYPE_INTGEMM8 = 0x4101
TYPE_NAMES = {0x0102: "int16", 0x0104: "int32", 0x0402: "float16", 0x0408: "float64", 0x4102: "intgemm16"}

# Size limits: every size read from a file is checked against them before use.
MAX_ITEMS = 100000
MAX_DIMS = 8
MAX_NAME = 4096


class ConversionError(Exception):
    pass


class Item:
    def __init__(self, name, type_, shape, data):
        self.name, self.type, self.shape, self.data = name, type_, shape, data

    def elements(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


def read_bin(data):
    """Items of Marian's binary format (src/common/binary.cpp)."""
    def u64(pos):
        if pos + 8 > len(data):
            raise ConversionError("model.bin: truncated header")
        return struct.unpack_from("<Q", data, pos)[0]

    if u64(0) != 1:
        raise ConversionError(f"model.bin: binary format version {u64(0)} (only version 1 is known)")
    count = u64(8)
    if count > MAX_ITEMS:
        raise ConversionError(f"model.bin: {count} items is not a plausible model")
    pos = 16
    headers = []
    for _ in range(count):
        headers.append([u64(pos + 8 * k) for k in range(4)])  # name length, type, shape length, data length
        pos += 32
    names = []
    for name_len, _, _, _ in headers:
        if name_len < 1 or name_len > MAX_NAME or pos + name_len > len(data):
            raise ConversionError("model.bin: bad item name")
        names.append(data[pos:pos + name_len - 1].decode("utf-8", "replace"))
        pos += name_len
    shapes = []
    for _, _, dims, _ in headers:
        if dims > MAX_DIMS or pos + 4 * dims > len(data):
            raise ConversionError("model.bin: bad item shape")
        shapes.append(list(struct.unpack_from(f"<{dims}i", data, pos)))
        pos += 4 * dims
    pad = u64(pos)
    pos += 8 + pad
    items = {}
    for (_, type_, _, length), name, shape in zip(headers, names, shapes):
        if pos + length > len(data):
            raise ConversionError(f"model.bin: item {name} runs past the end of the file")
        if any(d < 0 for d in shape):
            raise ConversionError(f"model.bin: item {name} has a negative dimension")
        items[name] = Item(name, type_, shape, memoryview(data)[pos:pos + length])
        pos += length
    return items


NPY_TYPES = {"<f4": TYPE_FLOAT32, "|i1": TYPE_INT8, "<i1": TYPE_INT8, "|u1": TYPE_UINT8}


def read_npz(data, path):
    """Items of a Marian .npz (a zip of .npy files)."""
    items = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[:-4]
            raw = z.read(info)
            if raw[:6] != b"\x93NUMPY":
                raise ConversionError(f"{path}: {info.filename} is not a .npy array")
            major = raw[6]
            header_len = struct.unpack_from("<H" if major == 1 else "<I", raw, 8)[0]
            start = 10 if major == 1 else 12
            header = raw[start:start + header_len].decode("latin1")
            try:
                import ast
                meta = ast.literal_eval(header)
            except (ValueError, SyntaxError):
                raise ConversionError(f"{path}: {info.filename}: unreadable .npy header")
            shape = meta.get("shape") if isinstance(meta, dict) else None
            if not isinstance(shape, tuple) or not all(isinstance(d, int) and 0 <= d < 1 << 31 for d in shape):
                raise ConversionError(f"{path}: {info.filename}: .npy header without a valid shape")
            if meta.get("fortran_order"):
                raise ConversionError(f"{path}: {info.filename}: Fortran-ordered arrays are not supported")
            descr = meta.get("descr")
            if descr not in NPY_TYPES:
                raise ConversionError(f"{path}: {name} has dtype {descr} (float32 and int8 are supported)")
            items[name] = Item(name, NPY_TYPES[descr], list(shape), memoryview(raw)[start + header_len:])
    return items


def read_file(path):
    """A file's bytes, gunzipped when they are gzip's (Firefox Translations
    ships every file as .gz)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise ConversionError(f"{path}: a damaged gzip file ({e})")
    return data


def read_model(path):
    data = read_file(path)
    return read_npz(data, path) if data[:2] == b"PK" else read_bin(data)


class MarianYamlLoader(yaml.BaseLoader):
    """YAML with every scalar a string, as Marian reads its options (yaml-cpp
    converts a value when an option is used: flag() and integer() do that
    here), and a key given twice refused (which value Marian took is not
    certain)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                raise ConversionError("special:model.yml: a key that is not a string")
            if key in seen:
                raise ConversionError(f"special:model.yml: {key} is given twice")
            seen.add(key)
        return super().construct_mapping(node, deep)


def parse_yml(text):
    """special:model.yml, a YAML mapping as Marian's writer (yaml-cpp's
    emitter) produces it: block lists ("- item"), an empty list as "[]" on
    the key's line or on a line of its own, lists in flow style ("[a, b]")
    where the training config had them so, quoted empty strings, the
    "version:" line. Values: a string, or a list of them."""
    try:
        doc = yaml.load(text, Loader=MarianYamlLoader)
    except yaml.YAMLError as e:
        raise ConversionError(f"special:model.yml is not YAML: {' '.join(str(e).split())}")
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConversionError("special:model.yml is not a mapping of options")
    return doc


def shown(value):
    """A config value as the converter's messages name it: 'text', [a, b]."""
    if isinstance(value, list):
        return "[" + ", ".join(v if isinstance(v, str) else shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {shown(v)}" for k, v in value.items()) + "}"
    return f"'{value}'"


def unsupported(key, value, why=""):
    return ConversionError(f"unsupported model: {key} is {shown(value)}" + (f" ({why})" if why else ""))


# YAML's null (yaml-cpp's emitter writes "~"): the option is unset.
NULL_WORDS = ("~", "null", "Null", "NULL")


def scalar(yml, key, default):
    """An option's one value, a string ("" is a value: the empty string)."""
    value = yml.get(key)
    if value is None or value in NULL_WORDS:
        return default
    if not isinstance(value, str):
        raise unsupported(key, value, "expected one value")
    return value


# The spellings of true and false yaml-cpp's as<bool>() accepts.
TRUE_WORDS, FALSE_WORDS = ("true", "yes", "on", "y"), ("false", "no", "off", "n")


def flag(yml, key, default=False):
    value = scalar(yml, key, None)
    if value is None:
        return default
    if value in (value.lower(), value.upper(), value.capitalize()):
        if value.lower() in TRUE_WORDS:
            return True
        if value.lower() in FALSE_WORDS:
            return False
    raise ConversionError(f"special:model.yml: {key} is {shown(value)}, not true or false")


def integer(yml, key, default):
    value = scalar(yml, key, None)
    if value is None:
        return default
    if not re.fullmatch(r"[-+]?[0-9]+", value):
        raise ConversionError(f"special:model.yml: {key} is {shown(value)}, not an integer")
    return int(value)


def empty_list(yml, key, why):
    """An option that must be an empty list (or unset)."""
    value = yml.get(key)
    if value not in (None, "", [], *NULL_WORDS):
        raise unsupported(key, value, why)


def f32_values(item, transpose_intgemm=True):
    """The item's values as float32, row-major in its Marian shape."""
    n = item.elements()
    if item.type == TYPE_FLOAT32:
        if len(item.data) < 4 * n:
            raise ConversionError(f"{item.name}: {len(item.data)} bytes for {n} float32 values")
        values = array("f")
        values.frombytes(bytes(item.data[:4 * n]))
        if sys.byteorder != "little":
            values.byteswap()
        return values
    if item.type == TYPE_INTGEMM8:
        w = int8_weights(item)
        values = array("f", (v * w.scale for v in w.q))  # Marian multiplies by float(1/m)
        # Weights (not embeddings) are stored transposed: shape [K, N] as N rows of K.
        if transpose_intgemm and len(item.shape) == 2 and "Wemb" not in item.name:
            rows, cols = item.shape[0], item.shape[1]
            return transpose(values, cols, rows)
        return values
    kind = TYPE_NAMES.get(item.type, hex(item.type))
    raise ConversionError(f"{item.name} is {kind}: float32 and intgemm8 weights are supported")


class Int8Weights:
    """An intgemm8 weight kept as int8 (safetensors I8 + "<name>.qscale"):
    q in our layout (Marian stores weights as [out][in] already, embeddings
    row-major) and the float32 scale 1 / multiplier the engine multiplies by."""
    typecode = "b"

    def __init__(self, q, scale):
        self.q, self.scale = q, scale

    def __len__(self):
        return len(self.q)


def int8_weights(item):
    n = item.elements()
    if len(item.data) < n + 4:
        raise ConversionError(f"{item.name}: {len(item.data)} bytes for {n} int8 values and their multiplier")
    quant_mult = struct.unpack_from("<f", item.data, n)[0]
    if not (quant_mult > 0 and math.isfinite(quant_mult)):
        raise ConversionError(f"{item.name}: quantisation multiplier {quant_mult} is not a positive number")
    q = array("b")
    q.frombytes(bytes(item.data[:n]))
    return Int8Weights(q, struct.unpack("<f", struct.pack("<f", 1.0 / quant_mult))[0])


def transpose(values, rows, cols):
    """(rows, cols) row-major -> (cols, rows) row-major."""
    out = array("f", bytes(4 * rows * cols))
    for c in range(cols):
        out[c * rows:(c + 1) * rows] = values[c::cols]
    return out


PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER, PIECE_UNUSED = 1, 2, 3, 4, 5


def pb_fields(data, start, end, what):
    """(field, wire, value, raw) of each protobuf field in data[start:end]:
    value is an int (varint), bytes (length-delimited) or the raw 4/8 bytes;
    raw is the field's whole encoding, to copy it unchanged."""
    def varint(pos):
        result = shift = 0
        while True:
            if pos >= end or shift > 63:
                raise ConversionError(f"{what}: not a SentencePiece model (bad protobuf)")
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return result, pos

    pos = start
    while pos < end:
        begin = pos
        key, pos = varint(pos)
        wire = key & 7
        if wire == 0:
            value, pos = varint(pos)
        elif wire == 2:
            n, pos = varint(pos)
            value = data[pos:pos + n]
            pos += n
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value = data[pos:pos + size]
            pos += size
        else:
            raise ConversionError(f"{what}: not a SentencePiece model (bad protobuf)")
        if pos > end:
            raise ConversionError(f"{what}: truncated SentencePiece model")
        yield key >> 3, wire, value, data[begin:pos]


def read_spm(data, what):
    """A SentencePiece model: its pieces [(piece, score, type)], the other
    top-level fields (raw) and the trainer's eos piece name."""
    pieces, others, eos_piece = [], [], b"</s>"
    for field, wire, value, raw in pb_fields(data, 0, len(data), what):
        if field == 1 and wire == 2:
            piece, score, type_ = b"", 0.0, PIECE_NORMAL
            for f, w, v, _ in pb_fields(value, 0, len(value), what):
                if f == 1 and w == 2:
                    piece = bytes(v)
                elif f == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif f == 3 and w == 0:
                    type_ = v
            pieces.append((piece, score, type_))
            continue
        if field == 2 and wire == 2:
            for f, w, v, _ in pb_fields(value, 0, len(value), what):
                if f == 47 and w == 2:
                    eos_piece = bytes(v)
        others.append(raw)
    if not pieces:
        raise ConversionError(f"{what}: not a SentencePiece model (no pieces)")
    return pieces, others, eos_piece


def spm_special_ids(data, what="vocabulary"):
    """(eos, unk, size) of a SentencePiece model, as Marian's vocabulary takes
    them (sentencepiece_vocab.cpp: spm's eos_id() and unk_id(), i.e. the
    control piece named by trainer_spec.eos_piece and the unknown piece)."""
    pieces, _, eos_piece = read_spm(data, what)
    unk = [i for i, (_, _, t) in enumerate(pieces) if t == PIECE_UNKNOWN]
    eos = [i for i, (p, _, t) in enumerate(pieces) if p == eos_piece and t == PIECE_CONTROL]
    if not unk or not eos:
        raise ConversionError(f"{what}: the SentencePiece model has no <unk> or no </s> control piece")
    return eos[0], unk[0], len(pieces)


YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
                "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
                "L": "\u2028", "P": "\u2029"}


def yaml_unescape(text, number):
    """A YAML double-quoted scalar's escapes (\\n, \\xHH, \\uHHHH, \\UHHHHHHHH ...)."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = text[i + 1:i + 2]
        width = {"x": 2, "u": 4, "U": 8}.get(e)
        if width:
            digits = text[i + 2:i + 2 + width]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise ConversionError(f"vocab.yml line {number}: bad escape \\{e}{digits}")
            i += 2 + width
        elif e in YAML_ESCAPES:
            out.append(YAML_ESCAPES[e])
            i += 2
        else:
            raise ConversionError(f"vocab.yml line {number}: unknown escape \\{e}")
    return "".join(out)


def read_vocab_yml(text):
    """Marian's vocabulary file (OPUS-MT's *.vocab.yml): "piece: id" lines,
    the piece plain, 'single-' or "double-quoted" (JSON-style escapes)."""
    pieces, ids = {}, set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.rpartition(":")
        try:
            index = int(value)
        except ValueError:
            index = -1
        if not sep or index < 0:
            raise ConversionError(f"vocab.yml line {number}: expected \"piece: id\", got {line!r}")
        key = key.strip()
        if key.startswith('"') and key.endswith('"') and len(key) >= 2:
            key = yaml_unescape(key[1:-1], number)
        elif key.startswith("'") and key.endswith("'") and len(key) >= 2:
            key = key[1:-1].replace("''", "'")
        if index in ids or key in pieces:
            raise ConversionError(f"vocab.yml line {number}: piece or id given twice")
        pieces[key] = index
        ids.add(index)
    ids = sorted(pieces.values())
    if ids != list(range(len(ids))):
        raise ConversionError("vocab.yml: the ids must be 0 .. size - 1, each once")
    by_id = [None] * len(ids)
    for piece, index in pieces.items():
        by_id[index] = piece
    return by_id


def pb_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def merged_spm(vocab_pieces, source_spm, target_spm):
    """One SentencePiece model whose ids are a Marian vocab.yml's: each piece
    scored and typed as in the source model, so that text is segmented as
    there; a piece only the target model has is UNUSED (decoded, never
    produced by encoding). The rest (normalizer, trainer) is the source's."""
    src_pieces, others, _ = read_spm(source_spm, "source spm")
    tgt_pieces, _, _ = read_spm(target_spm, "target spm") if target_spm else ([], [], None)
    src = {p: (score, t) for p, score, t in src_pieces}
    tgt = {p: score for p, score, _ in tgt_pieces}
    out = bytearray()
    for piece in vocab_pieces:
        raw = piece.encode("utf-8")
        if piece == "<unk>":
            score, type_ = 0.0, PIECE_UNKNOWN
        elif piece in ("</s>", "<s>"):
            score, type_ = 0.0, PIECE_CONTROL
        elif raw in src and src[raw][1] in (PIECE_NORMAL, PIECE_USER, PIECE_CONTROL):
            score, type_ = src[raw]
        else:
            score, type_ = tgt.get(raw, 0.0), PIECE_UNUSED
        body = b"\x0a" + pb_varint(len(raw)) + raw + b"\x15" + struct.pack("<f", score) + b"\x18" + pb_varint(type_)
        out += b"\x0a" + pb_varint(len(body)) + body
    for raw in others:
        out += raw
    return bytes(out)


SHORTLIST_MAGIC = 0xF11A48D5013417F5


def read_shortlist(data, vocab_size):
    """Bergamot's binary lexical shortlist (marian-dev data/shortlist.cpp):
    six u64 (magic, checksum, firstNum, bestNum, offsets length, targets
    length), u64 offsets, u32 target ids. Returns (first, offsets, targets),
    checked: one offset per source id and one more, non-decreasing from 0 to
    the number of targets, targets below the vocabulary size."""
    if len(data) < 48:
        raise ConversionError("shortlist: too short for a header")
    magic, _checksum, first, best, n_offsets, n_targets = struct.unpack_from("<6Q", data, 0)
    if magic != SHORTLIST_MAGIC:
        raise ConversionError("shortlist: not a binary lexical shortlist (wrong magic; text shortlists are not supported)")
    if n_offsets != vocab_size + 1:
        raise ConversionError(f"shortlist: {n_offsets} offsets for a vocabulary of {vocab_size} (expected {vocab_size + 1})")
    if n_targets > (1 << 31) - 1 or 48 + 8 * n_offsets + 4 * n_targets != len(data):
        raise ConversionError(f"shortlist: the header's sizes do not match the file's {len(data)} bytes")
    if first > vocab_size:
        first = vocab_size  # Marian takes the ids below min(firstNum, V)
    offsets = array("q")
    offsets.frombytes(data[48:48 + 8 * n_offsets])
    targets = array("I")
    targets.frombytes(data[48 + 8 * n_offsets:])
    if sys.byteorder != "little":
        offsets.byteswap()
        targets.byteswap()
    if offsets[0] != 0 or offsets[-1] != n_targets or any(a > b for a, b in zip(offsets, offsets[1:])):
        raise ConversionError("shortlist: offsets must rise from 0 to the number of targets")
    if targets and max(targets) >= vocab_size:
        raise ConversionError(f"shortlist: a target id is outside the vocabulary ({vocab_size})")
    return first, array("i", offsets), array("i", targets)


def architecture(yml):
    """What special:model.yml says the engine computes, as a dict (the
    config.json fields it decides and the options the mapping reads);
    refuses, naming the option and its value, what the engine does not
    compute as Marian does."""
    def need(key, allowed, default):
        value = scalar(yml, key, default)
        if value not in allowed:
            raise unsupported(key, value, f"supported: {', '.join(shown(a) for a in allowed)}")
        return value

    need("type", ["transformer"], "transformer")
    need("transformer-preprocess", [""], "")
    need("transformer-postprocess", ["dan"], "dan")
    need("transformer-postprocess-emb", ["d", ""], "d")
    need("transformer-postprocess-top", [""], "")
    need("transformer-ffn-depth", ["2"], "2")
    need("transformer-decoder-ffn-depth", ["0", "2"], "0")
    activation = need("transformer-ffn-activation", ["relu", "swish"], "swish")
    autoreg = need("transformer-decoder-autoreg", ["self-attention", "rnn"], "self-attention")
    if autoreg == "rnn":
        need("dec-cell", ["ssru"], "ssru")
        if flag(yml, "layer-normalization"):
            raise unsupported("layer-normalization", yml["layer-normalization"], "inside the SSRU cell")
    for key in ("transformer-train-position-embeddings", "transformer-no-projection", "transformer-pool",
                "output-omit-bias", "ulr", "right-left"):
        if flag(yml, key):
            raise unsupported(key, yml[key])
    empty_list(yml, "transformer-tied-layers", "layers that share weights; [] (none) is supported")
    if integer(yml, "lemma-dim-emb", 0) != 0:
        raise unsupported("lemma-dim-emb", yml["lemma-dim-emb"], "a factored vocabulary")
    ffn = integer(yml, "transformer-dim-ffn", 2048)
    if integer(yml, "transformer-decoder-dim-ffn", 0) not in (0, ffn):
        raise unsupported("transformer-decoder-dim-ffn", yml["transformer-decoder-dim-ffn"],
                          f"the decoder's FFN must be transformer-dim-ffn's {ffn}")
    return {
        "heads": integer(yml, "transformer-heads", 8),
        "ffn": ffn,
        "enc_depth": integer(yml, "enc-depth", 6),
        "dec_depth": integer(yml, "dec-depth", 6),
        "activation": activation,
        "ssru": autoreg == "rnn",
        "tied_all": flag(yml, "tied-embeddings-all"),
        "tied": flag(yml, "tied-embeddings"),
        "tied_src": flag(yml, "tied-embeddings-src"),
    }


def convert(model_path, vocab_path, out_dir, target_vocab=None, source_language=None, target_language=None,
            max_positions=512, shortlist_path=None, source_spm=None, target_spm=None, dtype="auto"):
    items = read_model(model_path)
    yml_item = items.pop("special:model.yml", None)
    if yml_item is None:
        raise ConversionError(f"{model_path}: no special:model.yml (not a Marian model, or saved without its config)")
    arch = architecture(parse_yml(bytes(yml_item.data).split(b"\0")[0].decode("utf-8")))
    if any(n.startswith("encoder2_") or "_enc2" in n for n in items):
        raise ConversionError("unsupported model: more than one encoder")
    ssru = arch["ssru"]
    vocab = read_vocabulary(vocab_path, target_vocab, source_spm, target_spm)
    eos, unk, n_pieces = spm_special_ids(vocab)

    used = set()

    def item(name):
        if name not in items:
            raise ConversionError(f"{model_path}: missing parameter {name}")
        used.add(name)
        return items[name]

    def checked(name, shape):
        it = item(name)
        if it.elements() != math.prod(shape) or (len(it.shape) == 2 and it.shape != list(shape)
                                                 and it.shape != [1, shape[-1]]):
            raise ConversionError(f"{name} has shape {it.shape}, expected {list(shape)}")
        return it

    def values(name, shape):
        return f32_values(checked(name, shape))

    # intgemm8 weights stay int8 with --dtype auto (a quarter of float32's size, the same values).
    def embedding(name, shape):
        it = checked(name, shape)
        return int8_weights(it) if dtype == "auto" and it.type == TYPE_INTGEMM8 else f32_values(it)

    def linear_weight(name, n_in, n_out):
        # Marian: x W with W (in, out); ours: torch's (out, in), which is how intgemm8 stores it.
        it = checked(name, (n_in, n_out))
        if dtype == "auto" and it.type == TYPE_INTGEMM8:
            return int8_weights(it)
        return transpose(f32_values(it), n_in, n_out)

    tied_all, tied = arch["tied_all"], arch["tied"]
    emb_name = "Wemb" if tied_all or arch["tied_src"] else "encoder_Wemb"
    if emb_name not in items:
        raise ConversionError(f"{model_path}: missing parameter {emb_name}")
    V, D = items[emb_name].shape
    heads, F, enc_depth, dec_depth = arch["heads"], arch["ffn"], arch["enc_depth"], arch["dec_depth"]
    if V != n_pieces:
        raise ConversionError(f"the vocabulary has {n_pieces} pieces but the model's embedding has {V} rows "
                              "(an OPUS-MT model's ids come from its vocab.yml: --vocab vocab.yml --source-spm ...)")
    if D % heads:
        raise ConversionError(f"dim-emb {D} is not divisible by transformer-heads {heads}")

    tensors = []

    def put(name, vals, shape):
        tensors.append((name, list(shape), vals))

    put("encoder.embed_tokens.weight", embedding(emb_name, (V, D)), (V, D))
    dec_emb = "Wemb" if tied_all else "decoder_Wemb"
    if not tied_all and dec_emb in items and items[dec_emb].shape[:1] != [V]:
        raise ConversionError(f"unsupported model: separate source and target vocabularies ({V} and "
                              f"{items[dec_emb].shape[0]} entries); one vocabulary serves both sides")
    if not tied_all:
        dec = embedding(dec_emb, (V, D))
        put("decoder.embed_tokens.weight", dec, (V, D))
        if tied:
            put("decoder.output_projection.weight", dec, (V, D))
        else:
            put("decoder.output_projection.weight", linear_weight("decoder_ff_logit_out_W", D, V), (V, D))
    elif "decoder_ff_logit_out_W" in items:
        raise ConversionError("unsupported model: tied-embeddings-all with an output matrix of its own")
    put("decoder.output_projection.bias", values("decoder_ff_logit_out_b", (1, V)), (V,))

    def norm(ours, marian):
        put(f"{ours}.weight", values(f"{marian}_ln_scale", (1, D)), (D,))
        put(f"{ours}.bias", values(f"{marian}_ln_bias", (1, D)), (D,))

    def attention(ours, marian):
        for o, m in (("q_proj", "q"), ("k_proj", "k"), ("v_proj", "v"), ("out_proj", "o")):
            put(f"{ours}.{o}.weight", linear_weight(f"{marian}_W{m}", D, D), (D, D))
            put(f"{ours}.{o}.bias", values(f"{marian}_b{m}", (1, D)), (D,))

    def ffn(ours, marian):
        put(f"{ours}.fc1.weight", linear_weight(f"{marian}_W1", D, F), (F, D))
        put(f"{ours}.fc1.bias", values(f"{marian}_b1", (1, F)), (F,))
        put(f"{ours}.fc2.weight", linear_weight(f"{marian}_W2", F, D), (D, F))
        put(f"{ours}.fc2.bias", values(f"{marian}_b2", (1, D)), (D,))
        norm(f"{ours}.final_layer_norm", f"{marian}_ffn")

    for i in range(enc_depth):
        p, m = f"encoder.layers.{i}", f"encoder_l{i + 1}"
        attention(f"{p}.self_attn", f"{m}_self")
        norm(f"{p}.self_attn_layer_norm", f"{m}_self_Wo")
        ffn(p, f"{m}_ffn")
    for i in range(dec_depth):
        p, m = f"decoder.layers.{i}", f"decoder_l{i + 1}"
        if ssru:
            put(f"{p}.ssru.in_proj.weight", linear_weight(f"{m}_rnn_W", D, D), (D, D))
            put(f"{p}.ssru.forget_proj.weight", linear_weight(f"{m}_rnn_Wf", D, D), (D, D))
            put(f"{p}.ssru.forget_proj.bias", values(f"{m}_rnn_bf", (1, D)), (D,))
            norm(f"{p}.ssru_layer_norm", f"{m}_rnn_ffn")
        else:
            attention(f"{p}.self_attn", f"{m}_self")
            norm(f"{p}.self_attn_layer_norm", f"{m}_self_Wo")
        attention(f"{p}.encoder_attn", f"{m}_context")
        norm(f"{p}.encoder_attn_layer_norm", f"{m}_context_Wo")
        ffn(p, f"{m}_ffn")

    shortlist_first = None
    if shortlist_path:
        shortlist_first, offsets, targets = read_shortlist(read_file(shortlist_path), V)
        put("shortlist.offsets", offsets, (V + 1,))
        put("shortlist.targets", targets, (len(targets),))

    # Activation-quantisation scales of int8 models (Bergamot's "alphas")
    # serve only int8 arithmetic; the weights are dequantised here.
    leftover = sorted(n for n in items if n not in used and not n.endswith("_QuantMultA"))
    if leftover:
        raise ConversionError(f"unsupported model: parameters this converter does not know: {', '.join(leftover[:8])}"
                              + (" ..." if len(leftover) > 8 else ""))

    config = marian_config(arch, D, F, V, max_positions, eos, unk, shortlist_first, os.path.basename(model_path))
    if source_language and target_language:
        config["languages"] = {"source": [source_language], "target": [target_language]}
    write_model_dir(out_dir, tensors, dtype, config, vocab)
    return config


def read_vocabulary(vocab_path, target_vocab, source_spm, target_spm):
    """The one spm.model both sides use: the given one, or for OPUS-MT's
    vocab.yml (Marian's ids) its spm models merged under those ids."""
    vocab = read_file(vocab_path)
    if target_vocab and read_file(target_vocab) != vocab:
        raise ConversionError("unsupported model: separate source and target vocabularies (one spm.model is used)")
    if re.sub(r"\.gz$", "", vocab_path).endswith((".yml", ".yaml")):
        # OPUS-MT: Marian's ids come from vocab.yml, the segmentation from the spm models.
        if not source_spm:
            raise ConversionError("a vocab.yml needs --source-spm (and --target-spm when the target has its own)")
        vocab = merged_spm(read_vocab_yml(vocab.decode("utf-8")), read_file(source_spm),
                           read_file(target_spm) if target_spm else None)
    elif source_spm or target_spm:
        raise ConversionError("--source-spm and --target-spm go with a vocab.yml")
    return vocab


def marian_config(arch, D, F, V, max_positions, eos, unk, shortlist_first, file_name):
    """config.json of a converted model (Post-LN, Marian's positions, decoder start and search)."""
    return {
        "format": "residual-mt/1",
        "style": "post",
        "d_model": D,
        "ffn_dim": F,
        "n_heads": arch["heads"],
        "encoder_layers": arch["enc_depth"],
        "decoder_layers": arch["dec_depth"],
        "vocab_size": V,
        "max_positions": max_positions,
        "bos_id": None,
        "pad_id": None,
        "eos_id": eos,
        "unk_id": unk,
        "activation": arch["activation"],
        "ln_eps": 1e-6,
        "share_embeddings": arch["tied_all"],
        "output_bias": True,
        "positions": "marian",
        "decoder_start": "zeros",
        "decoder_self": "ssru" if arch["ssru"] else "attention",
        "search": "marian",
        "shortlist_first": shortlist_first,
        "converted_from": {"format": "marian", "file": file_name},
    }


def write_model_dir(out_dir, tensors, dtype, config, vocab):
    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors, dtype)
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as f:
        f.write(json_text(config) + "\n")
    with open(os.path.join(out_dir, "spm.model"), "wb") as f:
        f.write(vocab)
    make_manifest.write(out_dir)


def js_number(x):
    """A float as JavaScript writes it (Number.prototype.toString: the
    shortest digits that read back, in JS's choice of fixed or exponent
    form), so that js/marian/convert.js writes config.json byte for byte as here."""
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    t = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    digits, k = "".join(map(str, t.digits)), len(t.digits)
    n = k + t.exponent  # the value is 0.digits * 10^n
    sign = "-" if x < 0 else ""
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = f"{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + e


def json_text(value, indent=""):
    """JSON as JavaScript's JSON.stringify(value, null, 2) writes it."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        fields = (f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {json_text(v, inner)}" for k, v in value.items())
        return "{\n" + ",\n".join(fields) + "\n" + indent + "}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + json_text(v, inner) for v in value) + "\n" + indent + "]"
    if isinstance(value, float):
        return js_number(value)
    return json.dumps(value, ensure_ascii=False)


def write_safetensors(path, tensors, dtype="auto"):
    """Index tables as I32, kept intgemm8 weights as I8 with their scale,
    other weights as F32 (auto, f32) or F16 (the engine widens F16 at load).
    I32 first, I8 last, so that every offset stays aligned."""
    def floats(vals):
        if dtype != "f16":
            if sys.byteorder != "little":
                vals = array(vals.typecode, vals)
                vals.byteswap()
            return "F32", vals.tobytes()
        out = bytearray()
        for i in range(0, len(vals), 1 << 16):
            chunk = vals[i:i + (1 << 16)]
            try:
                out += struct.pack(f"<{len(chunk)}e", *chunk)
            except (OverflowError, struct.error):
                raise ConversionError("a weight is beyond float16's range: convert with --dtype f32")
        return "F16", bytes(out)

    entries = []  # (order, name, kind, shape, blob)
    for name, shape, vals in tensors:
        if isinstance(vals, Int8Weights):
            entries.append((2, name, "I8", shape, vals.q.tobytes()))
            entries.append((1, f"{name}.qscale", "F32", [1], struct.pack("<f", vals.scale)))
        elif vals.typecode == "i":
            ints = array("i", vals)
            if sys.byteorder != "little":
                ints.byteswap()
            entries.append((0, name, "I32", shape, ints.tobytes()))
        else:
            kind, blob = floats(vals)
            entries.append((1, name, kind, shape, blob))
    header, offset = {}, 0
    entries.sort(key=lambda e: e[0])
    for _, name, kind, shape, blob in entries:
        header[name] = {"dtype": kind, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)  # data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for entry in entries:
            f.write(entry[4])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="Marian model: .npz or .bin (float32 or intgemm8)")
    parser.add_argument("--vocab", required=True,
                        help="its SentencePiece vocabulary (.spm), or Marian's vocab.yml (OPUS-MT) with --source-spm")
    parser.add_argument("--source-spm", help="with a vocab.yml: the source SentencePiece model (OPUS-MT source.spm)")
    parser.add_argument("--target-spm", help="with a vocab.yml: the target SentencePiece model (OPUS-MT target.spm)")
    parser.add_argument("--target-vocab", help="the target vocabulary, when the model has its own")
    parser.add_argument("--shortlist", help="its binary lexical shortlist (lex.*.s2t.bin), stored in model.safetensors")
    parser.add_argument("--out", required=True, help="model directory to write")
    parser.add_argument("--source-language", help="BCP 47 tag of the source language (config.json languages)")
    parser.add_argument("--target-language", help="BCP 47 tag of the target language")
    parser.add_argument("--dtype", choices=["auto", "f32", "f16"], default="auto",
                        help="weights in model.safetensors: auto (intgemm8 weights stay int8 with their scale, "
                             "others float32: exact), f32 (exact), or f16 (half the download; rounded)")
    parser.add_argument("--max-positions", type=int, default=512,
                        help="longest sentence in tokens the engine accepts (Marian has no limit; default 512)")
    args = parser.parse_args(argv)
    try:
        if not 2 <= args.max_positions <= 65536:
            raise ConversionError("--max-positions must be in [2, 65536]")
        config = convert(args.model, args.vocab, args.out, args.target_vocab, args.source_language,
                         args.target_language, args.max_positions, args.shortlist, args.source_spm, args.target_spm,
                         args.dtype)
    except (ConversionError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        print(f"convert_marian: {e}", file=sys.stderr)
        return 1
    print(f"convert_marian: wrote {args.out} ({config['encoder_layers']}+{config['decoder_layers']} layers, "
          f"d {config['d_model']}, {config['decoder_self']} decoder, {config['activation']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
