"""Greek, Hindi and Japanese written in Latin letters as people type them
(el-Latn, hi-Latn, ja-Latn), made from Debian's Greek, Hindi and Japanese
text for the language identifier (build_data.py).  Each string gets one
scheme, chosen by a hash of the string, so the training text holds the
spellings people mix:

Greek (Greeklish): ELOT 743 (the Greek standard for transliteration, the
  base of most Greeklish: η i, υ y, ει ei, ου ou, θ th, χ ch, ξ x, μπ b at a
  word's start), its phonetic spelling (every /i/ written i: η, υ, ει, οι;
  αι e; χ h; ξ ks) and its visual spelling (η h, υ u, ω w, θ 8, ξ 3, χ x), the
  three kinds of Greeklish Chalamandaris et al. describe ("All Greek to me!",
  2006).
Hindi (Hinglish, a scheme of residual-mt's): consonants with their vowel
  signs, the inherent a left out at a word's end and between a vowel and a
  consonant that carries a vowel sign (कमरा kamra, आप aap), long vowels
  single (naam as nam) or doubled (aa, ee, oo), or, as in quick chat, every
  inherent a left out (क्या कर रहे हो kya kr rhe ho).
Japanese (romaji): kakasi (Debian's kakasi, Hepburn) on words kakasi itself
  separates, particles split from the kana after a word and read as spoken
  (は wa, へ e, を o or wo), long vowels written out (toukyou) or not (tokyo).

  python3 models/langid_romanize.py el|hi|ja < text   (one string a line)
"""
import hashlib
import os
import re
import subprocess
import sys
import unicodedata


def _pick(text, salt, shares):
    """An index into shares (cumulative percentages), by a hash of the text."""
    h = int(hashlib.sha256((salt + text).encode("utf-8")).hexdigest()[:8], 16) % 100
    return next(k for k, top in enumerate(shares) if h < top)


# ---------------------------------------------------------------- Greek

_GREEK_DIGRAPHS = {  # scheme: (ELOT 743, phonetic, visual)
    "ου": ("ou", "ou", "ou"), "ει": ("ei", "i", "ei"), "οι": ("oi", "i", "oi"), "αι": ("ai", "e", "ai"),
    "υι": ("yi", "i", "yi"), "γγ": ("ng", "g", "gg"), "γκ": ("gk", "g", "gk"), "γχ": ("nch", "nh", "gx"),
    "γξ": ("nx", "ks", "g3"), "ντ": ("nt", "nt", "nt"), "μπ": ("mp", "mp", "mp"),
}
_GREEK_LETTERS = {  # letter: (ELOT 743, phonetic, visual)
    "α": "aaa", "β": "vvv", "γ": "ggg", "δ": "ddd", "ε": "eee", "ζ": "zzz", "η": ("i", "i", "h"),
    "θ": ("th", "th", "8"), "ι": "iii", "κ": "kkk", "λ": "lll", "μ": "mmm", "ν": "nnn",
    "ξ": ("x", "ks", "3"), "ο": "ooo", "π": "ppp", "ρ": "rrr", "σ": "sss", "ς": "sss", "τ": "ttt",
    "υ": ("y", "i", "u"), "φ": "fff", "χ": ("ch", "h", "x"), "ψ": ("ps", "ps", "ps"), "ω": ("o", "o", "w"),
}
_GREEK_RE = re.compile("|".join(sorted(_GREEK_DIGRAPHS, key=len, reverse=True)) + "|[α-ω]")
_AU_RE = re.compile("([αε])υ(?=[αεηιουωβγδζλμνρ])")  # αυ, ευ before a voiced sound: av, ev


def greeklish(text, scheme=None):
    """Greek text in Latin letters; scheme 0 ELOT 743, 1 phonetic, 2 visual
    (None: chosen by the text's hash, 50/25/25)."""
    if scheme is None:
        scheme = _pick(text, "el:", (50, 75, 100))
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    out = []
    for word in re.split(r"(\s+)", bare):
        lower = "".join(c.lower() if "\u0370" <= c <= "\u03ff" else c for c in word)  # Greek only: GNOME stays
        lower = _AU_RE.sub(lambda m: m.group(1) + "β", lower)
        lower = re.sub("([αε])υ", lambda m: m.group(1) + "φ", lower)  # before a voiceless sound: af, ef
        if scheme == 0 and lower.startswith("μπ"):
            lower = "\x01" + lower[2:]  # ELOT: μπ is b at a word's start ("bar")
        roman = _GREEK_RE.sub(lambda m: _greek_piece(m.group(0), scheme), lower).replace("\x01", "b")
        if word[:1].isupper() and roman:
            roman = roman[0].upper() + roman[1:]
        out.append(roman)
    return "".join(out).replace(";", "?")


def _greek_piece(piece, scheme):
    if piece in _GREEK_DIGRAPHS:
        return _GREEK_DIGRAPHS[piece][scheme]
    value = _GREEK_LETTERS[piece]
    return value[scheme]


# ---------------------------------------------------------------- Hindi

_CONSONANTS = dict(zip("कखगघङचछजझञटठडढणतथदधनपफबभमयरलवशषसह",
                       "k kh g gh n ch chh j jh n t th d dh n t th d dh n p ph b bh m y r l v sh sh s h".split()))
_NUKTA = {"क": "q", "ख": "kh", "ग": "g", "ज": "z", "ड": "r", "ढ": "rh", "फ": "f"}
# vowel: (short spelling, long spelling); the signs (matras) and the letters
_SIGNS = {"\u093e": ("a", "aa"), "\u093f": ("i", "i"), "\u0940": ("i", "ee"), "\u0941": ("u", "u"),
          "\u0942": ("u", "oo"), "\u0943": ("ri", "ri"), "\u0947": ("e", "e"), "\u0948": ("ai", "ai"),
          "\u094b": ("o", "o"), "\u094c": ("au", "au"), "\u0949": ("o", "o"), "\u0945": ("e", "e")}
_VOWELS = {"अ": ("a", "a"), "आ": ("a", "aa"), "इ": ("i", "i"), "ई": ("i", "ee"), "उ": ("u", "u"),
           "ऊ": ("u", "oo"), "ऋ": ("ri", "ri"), "ए": ("e", "e"), "ऐ": ("ai", "ai"), "ओ": ("o", "o"),
           "औ": ("au", "au"), "ऑ": ("o", "o"), "ऍ": ("e", "e")}
_VIRAMA, _NUKTA_SIGN = "\u094d", "\u093c"
_NASAL = {"\u0902": "n", "\u0901": "n", "\u0903": "h"}
_DEVANAGARI_WORD_RE = re.compile(r"[\u0900-\u097f]+")


def _syllables(word):
    """[consonant, vowel, long vowel, tail] of a Devanagari word: vowel None
    after a virama, 'a' (inherent, marked by long vowel None) when no sign follows."""
    out = []
    # NFC keeps क़ (U+0958...) as consonant + nukta; ज्ञ is said gy
    for c in unicodedata.normalize("NFC", word).replace("ज्ञ", "ग्य"):
        if c in _CONSONANTS:
            out.append([_CONSONANTS[c], "a", None, "", c])
        elif c == _NUKTA_SIGN and out and out[-1][4] in _NUKTA:
            out[-1][0] = _NUKTA[out[-1][4]]
        elif c == _VIRAMA and out:
            out[-1][1] = None
        elif c in _SIGNS and out:
            out[-1][1], out[-1][2] = _SIGNS[c]
        elif c in _VOWELS:
            out.append(["", _VOWELS[c][0], _VOWELS[c][1], "", c])
        elif c in _NASAL and out:
            out[-1][3] += _NASAL[c]
        elif c == "\u0964":
            out.append(["", ".", ".", "", c])
        elif "\u0966" <= c <= "\u096f":
            out.append(["", str(ord(c) - 0x966), "", "", c])
    return out


def _hindi_word(word, scheme):
    syl = _syllables(word)
    inherent = [s[1] == "a" and s[2] is None and s[0] != "" for s in syl]
    drop = [False] * len(syl)
    if scheme == 2:  # chat: every inherent a out, but a word needs a vowel
        drop = [inh and len(syl) > 1 for inh in inherent]
    else:
        for i in range(len(syl) - 1, 0, -1):  # right to left, as the rule's context changes
            if not inherent[i] or syl[i][3]:
                continue
            if i == len(syl) - 1:
                drop[i] = True
            elif syl[i - 1][1] and not drop[i - 1] and syl[i + 1][0] and syl[i + 1][2] is not None:
                drop[i] = True
    out = []
    for k, (cons, vowel, long_vowel, tail, _) in enumerate(syl):
        if vowel is None or drop[k]:
            vowel = ""
        elif scheme >= 1 and long_vowel and k < len(syl) - 1:
            vowel = long_vowel  # doubled long vowels inside a word; at its end: mera, nahi
        out.append(cons + vowel + tail)
    return "".join(out)


def hinglish(text, scheme=None):
    """Hindi (Devanagari) in Latin letters; scheme 0 short vowels, 1 doubled
    long vowels, 2 chat (no inherent a) (None: by the text's hash, 40/35/25)."""
    if scheme is None:
        scheme = _pick(text, "hi:", (40, 75, 100))
    return _DEVANAGARI_WORD_RE.sub(lambda m: _hindi_word(m.group(0), scheme), text)


# ---------------------------------------------------------------- Japanese

_PARTICLES = {"は": "wa", "へ": "e", "を": "o"}
_PARTICLE_HEAD_RE = re.compile("^([はがをにへも])(.+)$")
_TOPIC_TAIL_RE = re.compile("^(.{2,})は$")  # これは -> これ は (but こんにちは stays whole)
_COPULA_RE = re.compile("(.+?)(でした|です)(か?)$")
_COPULAS = {"です", "ですか", "でした", "でしたか"}
_GREETINGS = {"こんにちは": "konnichiwa", "こんばんは": "konbanwa"}
_HIRAGANA_RE = re.compile("^[\u3041-\u309f]+$")


class Romaji:
    """kakasi (unpacked from Debian's kakasi, libkakasi2 and kakasi-dic into
    ROOT) as two passes: one separating words, one writing romaji."""
    BATCH, TRIES, SECONDS = 1000, 4, 10

    def __init__(self, root):
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, "usr/lib/x86_64-linux-gnu"),
                   KANWADICTPATH=os.path.join(root, "usr/share/kakasi/kanwadict"),
                   ITAIJIDICTPATH=os.path.join(root, "usr/share/kakasi/itaijidict"))
        self.cmd = os.path.join(root, "usr/bin/kakasi")
        self.env = env

    def _run(self, args, lines):
        """kakasi on the lines, BATCH at a time. kakasi 2.3.6 now and then
        hangs on input it reads in a fraction of a second at the next try
        (seen on Debian 12's, about one run in three on a 5,000-line batch):
        a batch gets SECONDS and is tried again, TRIES times, then halved."""
        out = []
        for start in range(0, len(lines), self.BATCH):
            out += self._batch(args, lines[start:start + self.BATCH])
        return out

    def _batch(self, args, lines):
        data = ("\n".join(lines) + "\n").encode("utf-8")
        for _ in range(self.TRIES):
            try:
                done = subprocess.run([self.cmd, "-i", "utf8", "-o", "utf8"] + args, input=data, capture_output=True,
                                      env=self.env, check=True, timeout=self.SECONDS)
                break
            except subprocess.TimeoutExpired:
                continue
        else:  # hangs every time: halve the batch; a line it always hangs on comes back empty
            if len(lines) == 1:
                return [""]
            half = len(lines) // 2
            return self._batch(args, lines[:half]) + self._batch(args, lines[half:])
        got = done.stdout.decode("utf-8", "replace").split("\n")
        if len(got) == len(lines) + 1 and got[-1] == "":
            return got[:-1]
        if len(lines) == 1:
            return [" ".join(got)]
        half = len(lines) // 2  # kakasi joined or split some line: each half again
        return self._batch(args, lines[:half]) + self._batch(args, lines[half:])

    def romanize(self, texts):
        """Each text in romaji (one line each: line breaks become spaces)."""
        texts = [" ".join(t.split()) for t in texts]
        words = [_split_kana(line.split()) for line in self._run(["-w"], texts)]
        roman = self._run(["-Ja", "-Ha", "-Ka", "-Ea", "-s"], [" ".join(w) for w in words])
        return ["" if _garbled(r) else _romaji_spelling(r, t) for r, t in zip(roman, texts)]


def _garbled(roman):
    """Whether kakasi failed on a line: a control character in its output
    (kakasi 2.3.6 writes NULs, then bytes of its buffers, for a few long
    lines of game dialogue, different ones from run to run)."""
    return any(unicodedata.category(c) == "Cc" for c in roman)


def _split_kana(tokens):
    """kakasi -w's words with a particle split off the kana that follows a
    word (駅 はどこですか -> 駅 は どこ です か) and polite endings split off."""
    out = []
    for k, tok in enumerate(tokens):
        if tok in _GREETINGS or not _HIRAGANA_RE.match(tok):
            out.append(_GREETINGS.get(tok, tok))
            continue
        parts = [tok]
        m = _PARTICLE_HEAD_RE.match(tok)
        if m and k > 0 and not _HIRAGANA_RE.match(tokens[k - 1]) and tok not in _COPULAS:
            parts = [m.group(1), m.group(2)]
        m = _TOPIC_TAIL_RE.match(parts[-1])
        if m:
            parts[-1:] = [m.group(1), "は"]
        m = _COPULA_RE.match(parts[-1])
        if m:
            parts[-1:] = [p for p in m.groups() if p]
        out += [_PARTICLES.get(p, p) if len(p) == 1 else p for p in parts]
    return out


def _romaji_spelling(roman, source):
    """kakasi's romaji as typed: spaces before punctuation out, o for を read
    as wo by some, long vowels written out or not (by the text's hash)."""
    roman = re.sub(r" ([.,!?:;)])", r"\1", " ".join(roman.split()))
    roman = re.sub(r"(?<=\w) (mas(?:u|en|hita|hou))\b", r"\1", roman)  # kakasi parts iki masu: ikimasu
    roman = roman.replace("\u3001", ",").replace("\u3002", ".")
    scheme = _pick(source, "ja:", (50, 75, 100))
    # kakasi writes the long-vowel mark as ^ (menyu^): the vowel again, or once
    roman = re.sub(r"([aeiou])\^", r"\1\1" if scheme == 0 else r"\1", roman).replace("^", "")
    if scheme >= 1:
        roman = re.sub(r"(?<=[kgsztdnhbpmyrwj])ou", "o", roman)  # toukyou -> tokyo
        roman = re.sub(r"(?<=[kgsztdnhbpmyrwj])uu(?=\b|[^aeiou])", "u", roman)
    if scheme == 2:
        roman = re.sub(r"\bo\b", "wo", roman)
    return roman


def main():
    lang = sys.argv[1] if len(sys.argv) == 2 else None
    if lang not in ("el", "hi", "ja"):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        sys.exit(2)
    lines = [line.rstrip("\n") for line in sys.stdin]
    if lang == "ja":
        out = Romaji(os.environ.get("RMT_KAKASI", "/work/scratch/detector/kakasi/root")).romanize(lines)
    else:
        out = [(greeklish if lang == "el" else hinglish)(line) for line in lines]
    sys.stdout.write("".join(s + "\n" for s in out))


if __name__ == "__main__":
    main()
