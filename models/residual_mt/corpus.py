"""The built corpus (models/data/build_corpus.py's output folder) as
training examples and batches.

One bidirectional model: the source starts with the target-language token
(<2en> or <2es>), so src = [<2xx>] + spm ids + [</s>], target = spm ids +
[</s>], prev_output_tokens = [</s>] + spm ids (fairseq teacher forcing).
"""
import os
import random

LANG_TOKENS = {"en": 4, "es": 5}  # user-defined symbols of the joint spm model
# <s>: never in a source the engine writes, so after the language token it can
# mark a back-translated source in training (make_examples' bt_tag) and every
# source at inference reads as human text
BT_TAG = 0
DIRECTIONS = (("es", "en"), ("en", "es"))


def read_ids(path):
    with open(path, encoding="utf-8") as f:
        return [[int(t) for t in line.split()] for line in f]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def read_split(data_dir, split, suffix=".ids"):
    """{lang: lines} of a split, ids (suffix ".ids") or text (suffix "")."""
    read = read_ids if suffix == ".ids" else read_lines
    return {lang: read(os.path.join(data_dir, "%s.%s%s" % (split, lang, suffix))) for lang in ("es", "en")}



def has_split(data_dir, split):
    return os.path.exists(os.path.join(data_dir, split + ".es.ids"))


class Pieces:
    """ids -> text with the spm vocabulary (unigram: concatenate the pieces,
    '\u2581' becomes a space); enough for BLEU without the spm library."""

    def __init__(self, vocab_path):
        self.pieces = [line.split("\t")[0] for line in read_lines(vocab_path)]

    def decode(self, ids):
        out = []
        for i in ids:
            if i < 6:  # specials and language tokens
                continue
            out.append(self.pieces[i])
        return "".join(out).replace("\u2581", " ").strip()

    def decode_many(self, id_lists):
        return [self.decode(ids) for ids in id_lists]


def source_has_direction(source, direction):
    """A source named 'name:es-en' (a back-translation: its Spanish side is
    Apertium's, its English side human) is used only in that direction, so
    that synthetic text is never a target; other sources in both."""
    return ":" not in source or source.rsplit(":", 1)[1] == direction


def is_back_translated(source):
    """'austen-bt:es-en': its source side is Apertium's ('asterisk:es-en' is
    human on both sides, one way only for other reasons)."""
    return source.rpartition(":")[0].endswith("-bt")


def forward_name(source):
    """'austen-bt:es-en' -> 'austen-ft:en-es': the same synthetic pairs used
    the other way (human source, Apertium's target: forward translation,
    Apertium as a teacher); None for a source that is not back-translated."""
    if not is_back_translated(source):
        return None
    name, _, direction = source.rpartition(":")
    s, _, t = direction.partition("-")
    return "%s-ft:%s-%s" % (name[:-3], t, s)


def make_examples(data_dir, split, max_len, forward=(), bt_tag=None):
    """[(src, tgt, direction, source)] for both directions; pairs longer than
    max_len pieces on either side are dropped (there are very few).  source
    is the corpus the pair came from (split.src, one name per line), or
    'all' when the data has no such file.  Back-translated sources
    ('name:es-en', 'name:en-es') give examples in their direction only,
    and also the other way, as forward_name(source), when that name is in
    forward (opt-in: a synthetic target is used only when asked for).
    bt_tag (BT_TAG, or None: none): a token put after the language token of
    each back-translated source (tagged back-translation)."""
    ids = read_split(data_dir, split)
    src_path = os.path.join(data_dir, split + ".src")
    tags = read_lines(src_path) if os.path.exists(src_path) else ["all"] * len(ids["es"])
    out = []
    for s, t in DIRECTIONS:
        for a, b, tag in zip(ids[s], ids[t], tags):
            if not source_has_direction(tag, s + "-" + t):
                tag = forward_name(tag)  # the other direction's name, or None
                if tag not in forward:
                    continue
            if 0 < len(a) <= max_len and 0 < len(b) <= max_len:
                mark = [bt_tag] if bt_tag is not None and is_back_translated(tag) else []
                out.append(([LANG_TOKENS[t]] + mark + a, b, s + "-" + t, tag))
    return out


def parse_weights(text):
    """'bible=1,gettext=0.5' -> {'bible': 1.0, 'gettext': 0.5}."""
    out = {}
    for item in filter(None, (text or "").split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = float(value)
    return out


def epoch_selection(examples, weights, seed):
    """Indices of the examples used in one epoch: a source with weight w
    contributes floor(w) copies of each example plus a random fraction
    w - floor(w) of them (drawn anew each epoch); sources not named have
    weight 1."""
    rng = random.Random(seed)
    chosen = []
    for i, ex in enumerate(examples):
        w = weights.get(ex[3], 1.0)
        n = int(w)
        if rng.random() < w - n:
            n += 1
        chosen.extend([i] * n)
    return chosen


def make_batches(examples, max_tokens, seed, selection=None):
    """Length-sorted batches; a batch's cost is (longest source + longest
    target) * sentences, kept at or under max_tokens."""
    rng = random.Random(seed)
    order = list(range(len(examples))) if selection is None else list(selection)
    rng.shuffle(order)  # random tie-break among equal lengths
    order.sort(key=lambda i: (len(examples[i][0]), len(examples[i][1])))
    batches, cur, ms, mt = [], [], 0, 0
    for i in order:
        s, t = len(examples[i][0]) + 1, len(examples[i][1]) + 1
        nms, nmt = max(ms, s), max(mt, t)
        if cur and (nms + nmt) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, nms, nmt = [], s, t
        cur.append(i)
        ms, mt = nms, nmt
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


class Epochs:
    """Batches epoch after epoch without end, each epoch a fresh weighted
    selection (epoch_selection) in fresh batches.  state holds "epoch" and
    "batch" (the batches of this epoch handed out so far) and is the
    training checkpoint's, so a resumed run goes on where it stopped."""

    def __init__(self, examples, max_tokens, seed, state, weights=None):
        self.examples, self.max_tokens, self.seed, self.state = examples, max_tokens, seed, state
        self.weights = weights or {}
        self.batches = []

    def __iter__(self):
        while True:
            epoch = self.state["epoch"]
            selection = epoch_selection(self.examples, self.weights, self.seed * 1000 + epoch)
            self.batches = make_batches(self.examples, self.max_tokens, self.seed + epoch, selection)
            while self.state["batch"] < len(self.batches):
                self.state["batch"] += 1
                yield self.batches[self.state["batch"] - 1]
            self.state["epoch"] += 1
            self.state["batch"] = 0

    def progress(self):
        """Epochs done, as a fraction."""
        return self.state["epoch"] + self.state["batch"] / max(1, len(self.batches))


def collate(examples, idx, cfg, device):
    """(src, prev_output_tokens, target) tensors of the examples idx."""
    import torch  # here, so that the data side reads without torch (npm test)

    from . import reference as R
    srcs = [examples[i][0] for i in idx]
    tgts = [examples[i][1] for i in idx]
    src = R.pad_batch(srcs, cfg)
    T = max(len(t) for t in tgts) + 1
    prev = torch.full((len(idx), T), cfg.pad_id, dtype=torch.long)
    target = torch.full((len(idx), T), cfg.pad_id, dtype=torch.long)
    for k, t in enumerate(tgts):
        prev[k, :len(t) + 1] = torch.tensor([cfg.eos_id] + t)
        target[k, :len(t) + 1] = torch.tensor(t + [cfg.eos_id])
    return src.to(device), prev.to(device), target.to(device)
