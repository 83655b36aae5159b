"""The reference's translations of a corpus split and their corpus BLEU
(bleu.py) and chrF (chrf.py), both directions: the training log's valid
curve, export's eval.json, eval_checkpoint's tables, compare_styles' figures."""
from . import bleu
from . import chrf
from . import reference as R
from .corpus import DIRECTIONS, LANG_TOKENS, read_split


def translate(model, srcs, beam=R.SEARCH["beam"], batch_size=64, **search):
    """srcs: id lists including the language token, without eos. Returns the
    best hypothesis's ids per source, in input order; batches are built from
    length-sorted inputs (a sentence's result does not depend on its batch).
    search: beam_search's other keywords, its defaults where absent."""
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
    out = [None] * len(srcs)
    device = next(model.parameters()).device
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        src = R.pad_batch([srcs[i] for i in idx], model.cfg).to(device)
        hyps = [h[0][0] for h in R.beam_search(model, src, beam=beam, **search)]
        for i, h in zip(idx, hyps):
            out[i] = h
    return out


def source_ids(cfg, ids, target):
    """A source sentence's ids as the model reads them: its target's language
    token first (the model's own, else the corpus'), cut to the positions left."""
    tokens = (cfg.languages or {}).get("target_lang_tokens") or LANG_TOKENS
    return [tokens[target]] + ids[:cfg.max_positions - 3]


def evaluate_split(model, data_dir, split, pieces, beam=1, limit=None, batch_size=64):
    """Corpus BLEU and chrF per direction on a split (its first `limit`
    pairs); pieces decodes ids (corpus.Pieces or spm.Decoder).  Returns
    ({direction: {"bleu": score, "chrf": score}}, {direction: hypotheses})."""
    ids = read_split(data_dir, split)
    txt = read_split(data_dir, split, suffix="")
    scores, outputs = {}, {}
    model.eval()
    for s, t in DIRECTIONS:
        n = len(ids[s]) if limit is None else min(limit, len(ids[s]))
        srcs = [source_ids(model.cfg, ids[s][i], t) for i in range(n)]
        hyps = pieces.decode_many(translate(model, srcs, beam=beam, batch_size=batch_size))
        refs = txt[t][:n]
        scores[s + "-" + t] = {"bleu": bleu.corpus_bleu(hyps, refs)["score"], "chrf": chrf.corpus_chrf(hyps, refs)}
        outputs[s + "-" + t] = hyps
    return scores, outputs


def evaluate_bleu(model, data_dir, split, pieces, beam=1, limit=None, batch_size=64):
    """evaluate_split's BLEU alone: ({direction: score}, {direction: hypotheses})."""
    scores, outputs = evaluate_split(model, data_dir, split, pieces, beam, limit, batch_size)
    return {d: v["bleu"] for d, v in scores.items()}, outputs
