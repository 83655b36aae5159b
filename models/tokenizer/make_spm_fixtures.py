#!/usr/bin/python3
"""Regenerates tests/fixtures/spm/: SentencePiece models trained with the real
tool (Debian's `sentencepiece` 0.1.97: spm_train, spm_encode, spm_decode), a
test corpus, and the tool's own outputs for it, which the C and WASM tests
must reproduce exactly.

Needs: apt-get install sentencepiece diatheke sword-text-sparv sword-text-web
Usage: /usr/bin/python3 models/tokenizer/make_spm_fixtures.py [--work DIR]

Training text (not committed; rebuilt deterministically in the work folder):
the Reina-Valera 1909 and World English Bible texts from diatheke, plus
/usr/share/common-licenses. The test corpus (committed) mixes prose from the
same sources with generated lines for the hard cases: NFKC-sensitive forms,
emoji/ZWJ, CJK, combining marks, whitespace runs, very long lines, random
codepoints and invalid UTF-8.

Outputs, per model NAME in tests/fixtures/spm/:
  NAME.model        the model (trained, or derived from one: see DERIVED)
  NAME.ids16        spm_encode --output_format=id of corpus.txt, packed: each
                    id as a little-endian uint16, each line ended by 0xFFFF
  NAME.decoded      spm_decode --input_format=id of NAME.ids; a line is "="
                    when the output equals the corpus line, else "|" + output
  NAME.rand.ids     random id sequences (control, unknown, byte pieces...)
  NAME.rand.decoded spm_decode of NAME.rand.ids, raw
"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'tests', 'fixtures', 'spm')
SEED = 20261130

# name -> spm_train flags. Each model exercises a different part of the code.
MODELS = {
    # Unigram, nmt_nfkc, user-defined and control symbols (language tokens).
    'uni_nfkc': ['--model_type=unigram', '--vocab_size=6000',
                 '--normalization_rule_name=nmt_nfkc',
                 '--control_symbols=<2en>,<2es>',
                 '--user_defined_symbols=<sep>,@@,http://'],
    # BPE, nmt_nfkc.
    'bpe_nfkc': ['--model_type=bpe', '--vocab_size=4000',
                 '--normalization_rule_name=nmt_nfkc'],
    # Unigram with byte fallback, plain nfkc, digits split.
    'uni_bytes': ['--model_type=unigram', '--vocab_size=3000', '--byte_fallback=true',
                  '--normalization_rule_name=nfkc', '--split_digits=true'],
    # Identity normalization, whitespace kept as is.
    'uni_identity': ['--model_type=unigram', '--vocab_size=3000',
                     '--normalization_rule_name=identity',
                     '--remove_extra_whitespaces=false'],
    # BPE with byte fallback, case folding, user-defined symbols, whitespace
    # as suffix, no dummy prefix, a pad id.
    'bpe_bytes_cf': ['--model_type=bpe', '--vocab_size=2000', '--byte_fallback=true',
                     '--normalization_rule_name=nmt_nfkc_cf',
                     '--user_defined_symbols=<sep>,ﬁ,...',
                     '--treat_whitespace_as_suffix=true', '--add_dummy_prefix=false',
                     '--pad_id=3'],
    # Custom normalization and denormalization rules (TSV), an unk surface.
    'uni_rules': ['--model_type=unigram', '--vocab_size=2000',
                  '--normalization_rule_tsv={work}/norm.tsv',
                  '--denormalization_rule_tsv={work}/denorm.tsv',
                  '--unk_surface=<?>'],
}

# Models derived from trained ones by editing the ModelProto (spm_train never
# makes UNUSED pieces): every 8th multi-character normal piece marked UNUSED,
# and the charsmap dropped (identity normalization) to keep the files small.
# derive_unused(..., escape=False) also turns escape_whitespaces off.
DERIVED = {'uni_unused': ('uni_nfkc', True), 'bpe_unused': ('bpe_nfkc', True)}

NORM_TSV = [  # source code points -> target code points (hex)
    ('AB', '22'), ('BB', '22'), ('17F', '73'), ('FB01', '66 69'), ('3000', '20'),
    ('A0', '20'), ('9', '20'), ('2019', '27'), ('41 42 43', '61 62 63'),
    ('E9', '65 301'), ('FF21', '41'),
]
DENORM_TSV = [('27', '2019'), ('61 62 63', '41 42 43'), ('65 301', 'E9')]


def pb_varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def pb_encode_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def pb_fields(buf):
    """(field, wire, raw field bytes including the tag, payload) of a message."""
    pos, out = 0, []
    while pos < len(buf):
        start = pos
        tag, pos = pb_varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = pb_varint(buf, pos)
            payload = None
        elif wire == 2:
            n, pos = pb_varint(buf, pos)
            payload = buf[pos:pos + n]
            pos += n
        elif wire == 5:
            payload = None
            pos += 4
        elif wire == 1:
            payload = None
            pos += 8
        else:
            raise ValueError('unsupported wire type')
        out.append((field, wire, buf[start:pos], payload))
    return out


def pb_bytes_field(field, payload):
    return pb_encode_varint(field << 3 | 2) + pb_encode_varint(len(payload)) + payload


def derive_unused(base, out, escape):
    """Marks every 8th multi-character NORMAL piece UNUSED, normalizer -> identity."""
    buf = open(base, 'rb').read()
    result, k = bytearray(), 0
    for field, wire, raw, payload in pb_fields(buf):
        if field == 1:
            sub = pb_fields(payload)
            text = next(p for f, _, _, p in sub if f == 1).decode('utf-8', 'replace')
            types = [r for f, _, r, _ in sub if f == 3]
            if not types and len(text.lstrip('▁')) >= 2:  # NORMAL (the default)
                k += 1
                if k % 8 == 0:
                    raw = pb_bytes_field(1, payload + pb_encode_varint(3 << 3) + pb_encode_varint(5))
        elif field == 3:
            kept = b''.join(r for f, _, r, _ in pb_fields(payload) if f not in (1, 2))
            if not escape:  # escape_whitespaces (field 5) = false; the last value wins
                kept += pb_encode_varint(5 << 3) + pb_encode_varint(0)
            raw = pb_bytes_field(3, pb_bytes_field(1, b'identity') + kept)
        result += raw
    with open(out, 'wb') as f:
        f.write(result)


def run(cmd, **kw):
    print('+', ' '.join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def bible(module, work):
    path = os.path.join(work, module + '.txt')
    if not os.path.exists(path):
        with open(path + '.tmp', 'wb') as f:
            run(['diatheke', '-b', module, '-f', 'plain', '-k', 'Gen 1:1-Rev 22:21'], stdout=f)
        os.rename(path + '.tmp', path)
    verses = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            m = re.match(r'^[1-4 ]*[A-Za-z ]+ \d+:\d+: ?(.*)$', line)
            if m:
                verses.append(m.group(1).strip())
            elif line.strip() and verses and not line.startswith('('):
                verses[-1] += ' ' + line.strip()
    return [v for v in verses if v]


def licenses():
    base = '/usr/share/common-licenses'
    lines = []
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding='utf-8', errors='replace') as f:
                lines += [l.rstrip('\n') for l in f]
    return lines


def rand_cp(rng):
    while True:
        plane = rng.random()
        if plane < 0.6:
            cp = rng.randrange(0x20, 0x3000)
        elif plane < 0.9:
            cp = rng.randrange(0x3000, 0x10000)
        else:
            cp = rng.randrange(0x10000, 0x110000)
        if 0xD800 <= cp < 0xE000 or cp in (0x0A, 0x0D):
            continue
        return chr(cp)


def fullwidth(s):
    return ''.join(chr(ord(c) + 0xFEE0) if '!' <= c <= '~' else ('\u3000' if c == ' ' else c)
                   for c in s)


def exotic_lines(rng, es, en):
    """Generated lines for the cases prose does not cover (as bytes)."""
    out = []
    ligatures = [chr(c) for c in range(0xFB00, 0xFB07)]
    supers = '⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ₀₁₂₃₄₅₆₇₈₉ᵃᵇᶜ'
    compat = 'ｱｲｳｴｵｶｷｸｹｺﾊﾟﾋﾞ①②③⑳Ⅰ Ⅱ Ⅻ ⅷ ㍿ ㎏ ㎞ ㏄ ½ ¼ ¾ Å Ω K ™ ℃ ℉ ℡ ㈱ ㋀ ﹅ ﹏ ︵ ¨ ´ ¸ ſ ĳ Ǆ ǅ ǆ ǈ ﷺ ﷽ 𝐀𝐁𝐂 𝔄𝔅 𝟘𝟙𝟚'
    spaces = ['\u00a0', '\u2002', '\u2003', '\u2009', '\u200a', '\u200b', '\u202f',
              '\u205f', '\u3000', '\ufeff', '\u00ad', '\u2028', '\u200c', '\u200d', '\t', '\x0b',
              '\x0c', '\x1f', '\x7f', '\x85']
    emoji = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇪🇸', '🇬🇧', '1️⃣', '❤️', '🧑🏿‍🚀',
             '👩‍❤️‍💋‍👨', '🐈‍⬛', '☺', '✈︎', '🫠', '🦀', '\U0001F9D1\u200D\U0001F33E']
    cjk = ('中文字符测试漢字日本語のテキストです。한국어 텍스트 입니다。ひらがなカタカナ'
           '繁體字，標點符號！「引用」『二重』〜・ー')
    combining = ['\u0301', '\u0300', '\u0308', '\u0303', '\u0327', '\u030c', '\u0323',
                 '\u0336', '\u20dd', '\u0345', '\u05b0', '\u0e48', '\u093f']
    prose = es + en

    def sentence():  # a verse, or a run of up to 12 words of one
        words = rng.choice(prose).split(' ')
        if rng.random() < 0.03:
            return ' '.join(words)
        n = rng.randint(2, 10)
        i = rng.randrange(max(1, len(words) - n + 1))
        return ' '.join(words[i:i + n])

    # Full-width and ideographic-space versions of prose.
    for _ in range(150):
        s = sentence()
        a, b = sorted(rng.sample(range(len(s) + 1), 2))
        out.append(s[:a] + fullwidth(s[a:b]) + s[b:])
    # Ligatures, superscripts, compatibility characters sprinkled into prose.
    for _ in range(200):
        words = sentence().split(' ')
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(words))
            pool = rng.choice([ligatures, supers, compat])
            words[i] += ''.join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
        out.append(' '.join(words))
    # Emoji and ZWJ sequences.
    for _ in range(150):
        words = sentence().split(' ')
        for _ in range(rng.randint(1, 5)):
            words.insert(rng.randrange(len(words) + 1), ''.join(
                rng.choice(emoji) for _ in range(rng.randint(1, 3))))
        out.append(' '.join(words))
    # CJK, alone and mixed with Latin text.
    for _ in range(120):
        n = rng.randint(1, 40)
        start = rng.randrange(len(cjk))
        piece = (cjk * 3)[start:start + n]
        out.append(piece if rng.random() < 0.4 else sentence()[:60] + ' ' + piece)
    # Combining marks: decomposed accents, stacks, marks at line start.
    for _ in range(150):
        s = sentence()
        chars = list(s)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(chars) + 1)
            chars.insert(i, ''.join(rng.choice(combining) for _ in range(rng.randint(1, 4))))
        out.append(''.join(chars))
    # Whitespace: tabs, runs of spaces, exotic spaces, leading/trailing space.
    for _ in range(200):
        words = sentence().split(' ')
        sep = [rng.choice([' ', '  ', '   ', '\t', ' \t ', rng.choice(spaces), '      '])
               for _ in words]
        s = ''.join(w + sep[i] for i, w in enumerate(words[:-1])) + words[-1]
        lead = rng.choice(['', ' ', '  ', '\t', '\u3000', ' \t'])
        trail = rng.choice(['', ' ', '   ', '\t', '\u00a0', ' \u3000'])
        out.append(lead + s + trail)
    for ws in ['', ' ', '  ', '\t', '\t\t', ' \t ', '\u3000', '\u00a0', '\u200b', '\ufeff']:
        out += [ws] * 3
    # Very long lines.
    for n in (3000, 6000, 12000):
        s = ''
        while len(s.encode()) < n:
            s += rng.choice(prose) + ' '
        out.append(s.strip())
    out.append('x' * 3000)
    out.append('ab' * 1500)
    out.append(''.join(rng.choice(emoji) for _ in range(300)))
    out.append('a\u0301' * 1000)
    out.append(' ' * 1500 + 'fin' + ' ' * 1500)
    # Random codepoints (many outside the training set).
    for _ in range(250):
        n = rng.randint(1, 30)
        s = ''.join(rand_cp(rng) for _ in range(n))
        out.append(s if rng.random() < 0.5 else sentence()[:40] + ' ' + s)
    # Pieces and tokens spelled out in the text.
    specials = ['<unk>', '<s>', '</s>', '<pad>', '<2en>', '<2es>', '<sep>', '@@', 'http://',
                '<0x41>', '<0xE2>', '▁', '▁▁', '▁hola', ' ⁇ ', '...', 'ﬁ', '<?>']
    for _ in range(150):
        words = sentence().split(' ')
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randrange(len(words) + 1), rng.choice(specials))
        glue = rng.choice([' ', '', ' '])
        out.append(glue.join(words))
    out = [s.encode('utf-8', 'surrogatepass') for s in out]
    # Invalid UTF-8: lone continuation bytes, overlongs, surrogates, truncated
    # sequences, bytes that never occur in UTF-8, and U+FFFD itself.
    bad = [b'\x80', b'\xbf', b'\x80\x80\x80', b'\xc0\xaf', b'\xc1\xbf', b'\xe0\x80\xaf',
           b'\xf0\x80\x80\xaf', b'\xed\xa0\x80', b'\xed\xbf\xbf', b'\xed\xa0\xbd\xed\xb8\x80',
           b'\xe2\x82', b'\xf0\x9f\x98', b'\xf0\x9f', b'\xc3', b'\xf5\x80\x80\x80', b'\xf8\x88\x80\x80\x80',
           b'\xfe', b'\xff', b'\xf4\x90\x80\x80', b'\xef\xbf\xbd', b'\xef\xbf\xbe', b'\xc3\x28',
           b'\xe2\x28\xa1', b'\xe2\x82\x28', b'\xf0\x28\x8c\xbc', b'\x00', b'a\x00b']
    for _ in range(300):
        s = sentence().encode()
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(s) + 1)
            s = s[:i] + rng.choice(bad) + s[i:]
        out.append(s)
    for b in bad:
        out.append(b)
        out.append(b' ' + b + b' ')
    for _ in range(100):
        out.append(bytes(rng.choice([rng.randrange(256), rng.randrange(0x80, 0x100)])
                         for _ in range(rng.randint(1, 40))).replace(b'\n', b' ').replace(b'\r', b' '))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', default=os.path.join(ROOT, 'build', 'spm_work'))
    ap.add_argument('--threads', default='2')
    ap.add_argument('--retrain', action='store_true',
                    help='train models that already exist (else only their outputs are remade)')
    args = ap.parse_args()
    work = args.work
    os.makedirs(work, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(SEED)

    es = bible('spaRV1909eb', work)
    en = bible('engWEB2015eb', work)
    lic = [l for l in licenses() if l.strip()]
    print(f'{len(es)} es verses, {len(en)} en verses, {len(lic)} license lines', file=sys.stderr)

    # Training text: every other verse (about 2.3 MB of each language) plus the licenses.
    train = es[::2] + en[::3] + lic
    rng.shuffle(train)
    train_path = os.path.join(work, 'train.txt')
    with open(train_path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(train) + '\n')
    with open(os.path.join(work, 'norm.tsv'), 'w') as f:
        f.writelines(f'{a}\t{b}\n' for a, b in NORM_TSV)
    with open(os.path.join(work, 'denorm.tsv'), 'w') as f:
        f.writelines(f'{a}\t{b}\n' for a, b in DENORM_TSV)

    # Test corpus: held-out and training prose, license text, generated lines.
    def span(s):  # a random run of words, so the corpus stays small
        words = s.split(' ')
        if rng.random() < 0.03:
            return s
        n = rng.randint(1, 9)
        i = rng.randrange(max(1, len(words) - n + 1))
        return ' '.join(words[i:i + n])
    corpus = [span(s).encode() for s in rng.sample(es[1::2], 1300) + rng.sample(en[1::3], 1300)
              + rng.sample(es[::2], 200) + rng.sample(en[::3], 200) + rng.sample(lic, 250)]
    corpus += [b''] * 20
    corpus += exotic_lines(rng, es, en)
    rng.shuffle(corpus)
    assert all(b'\n' not in s for s in corpus)
    corpus_path = os.path.join(OUT, 'corpus.txt')
    with open(corpus_path, 'wb') as f:
        f.write(b'\n'.join(corpus) + b'\n')
    print(f'corpus: {len(corpus)} lines, {os.path.getsize(corpus_path)} bytes', file=sys.stderr)

    only = set(os.environ.get('SPM_MODELS', '').split(',')) - {''}
    for name, flags in list(MODELS.items()) + list(DERIVED.items()):
        if only and name not in only:
            continue
        prefix = os.path.join(OUT, name)
        model = prefix + '.model'
        if name in DERIVED:
            derive_unused(os.path.join(OUT, flags[0] + '.model'), model, flags[1])
        elif args.retrain or not os.path.exists(model):
            flags = [f.replace('{work}', work) for f in flags]
            run(['spm_train', '--input=' + train_path, '--model_prefix=' + prefix,
                 '--num_threads=' + args.threads, '--input_sentence_size=200000',
                 '--shuffle_input_sentence=false', '--minloglevel=1'] + flags)
            os.remove(prefix + '.vocab')
        ids_text = subprocess.run(['spm_encode', '--model=' + model, '--output_format=id'],
                                  stdin=open(corpus_path, 'rb'), stdout=subprocess.PIPE,
                                  check=True).stdout
        decoded = subprocess.run(['spm_decode', '--model=' + model, '--input_format=id'],
                                 input=ids_text, stdout=subprocess.PIPE, check=True).stdout
        ids_lines = ids_text.split(b'\n')[:-1]
        with open(prefix + '.ids16', 'wb') as g:
            for line in ids_lines:
                ids = [int(x) for x in line.split()] + [0xFFFF]
                assert all(0 <= i < 0xFFFF for i in ids[:-1])
                g.write(struct.pack(f'<{len(ids)}H', *ids))
        dec_lines = decoded.split(b'\n')[:-1]
        assert len(dec_lines) == len(corpus) == len(ids_lines), (len(dec_lines), len(corpus))
        with open(prefix + '.decoded', 'wb') as g:
            for ids, src, dec in zip(ids_lines, corpus, dec_lines):
                # spm_decode turns an empty id line into [0] (atoi("")); the
                # library decodes an empty list to "".
                if not ids:
                    dec = b''
                g.write(b'=\n' if dec == src else b'|' + dec + b'\n')
        # Random id sequences, biased towards the special pieces.
        vocab = [l.split(b'\t')[0] for l in subprocess.run(
            ['spm_export_vocab', '--model=' + model], stdout=subprocess.PIPE,
            check=True).stdout.split(b'\n') if l]
        size = len(vocab)
        # <0x0A> would put a newline in the decoded text, which is line-based.
        special = [i for i, p in enumerate(vocab) if (p.startswith(b'<') or p.startswith('▁'.encode())
                   or len(p) < 2) and p != b'<0x0A>'] or [0]
        newline = vocab.index(b'<0x0A>') if b'<0x0A>' in vocab else -1
        lines = []
        rng = random.Random(f'{SEED}-{name}')  # per model, so models can be remade alone
        for _ in range(150):
            n = rng.randint(1, 30)
            ids = [rng.choice(special) if rng.random() < 0.6 else rng.randrange(size)
                   for _ in range(n)]
            ids = [i for i in ids if i != newline]
            lines.append(' '.join(map(str, ids)))
        with open(prefix + '.rand.ids', 'w') as g:
            g.write('\n'.join(lines) + '\n')
        with open(prefix + '.rand.ids', 'rb') as f, open(prefix + '.rand.decoded', 'wb') as g:
            run(['spm_decode', '--model=' + model, '--input_format=id'], stdin=f, stdout=g)
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f'tests/fixtures/spm: {total} bytes', file=sys.stderr)


if __name__ == '__main__':
    main()
