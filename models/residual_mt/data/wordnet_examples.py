"""English example sentences of WordNet 3.0 (Debian package wordnet-base;
licence: WordNet 3.0, a permissive Princeton licence).  Monolingual: the
human English side of back-translated es->en pairs (apertium_bt.py).

A line of /usr/share/wordnet/data.{noun,verb,adj,adv} is a synset: offsets
and pointers, then "| gloss; "example one"; "example two"".  Only the
quoted examples are used (glosses are definitions, not sentences).

Cleaning: the examples are written in lower case without final
punctuation ("the dog barked all night"): the first letter is capitalised
and, for an example of MIN_SENTENCE_WORDS words or more, a full stop added
when it has no final punctuation, so that it reads as a written sentence.
Dropped: fewer than MIN_WORDS or more than MAX_WORDS words, unbalanced
quotes or brackets, ellipses (fragments of a quotation), text with digits
only or no letters, anything not in plain Latin-1 letters, and
attributions ("- Shakespeare").  Duplicates are kept once, in file order.
"""
import re

LICENCE = "WordNet 3.0 licence (Princeton University; permissive)"
WORDNET_DIR = "/usr/share/wordnet"
FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
MIN_WORDS = 3
MAX_WORDS = 25
MIN_SENTENCE_WORDS = 4
EXAMPLE_RE = re.compile(r'"([^"]+)"')
PLAIN_RE = re.compile(r"^[A-Za-z0-9À-ÿ ,;:.!?'()\-]+$")


def gloss_examples(line):
    """The quoted examples of one data.* line ([] for the licence header)."""
    if line.startswith("  ") or "|" not in line:
        return []
    gloss = line.split("|", 1)[1]
    return [m.group(1).strip() for m in EXAMPLE_RE.finditer(gloss)]


def clean_example(text):
    """The example as a sentence, or None when it is dropped."""
    text = " ".join(text.split())
    words = text.split()
    if not (MIN_WORDS <= len(words) <= MAX_WORDS):
        return None
    if "..." in text or " - " in text or "--" in text or not PLAIN_RE.match(text):
        return None
    if text.count("(") != text.count(")") or not re.search(r"[A-Za-z]{2}", text):
        return None
    text = text[0].upper() + text[1:]
    if len(words) >= MIN_SENTENCE_WORDS and text[-1] not in ".!?":
        text = text.rstrip(",;:") + "."
    return text


def examples(wordnet_dir=WORDNET_DIR):
    """[sentence] from the four data files, in file order, each once."""
    out, seen = [], set()
    for name in FILES:
        with open("%s/%s" % (wordnet_dir, name), encoding="latin-1") as f:
            for line in f:
                for ex in gloss_examples(line):
                    s = clean_example(ex)
                    if s and s.casefold() not in seen:
                        seen.add(s.casefold())
                        out.append(s)
    return out
