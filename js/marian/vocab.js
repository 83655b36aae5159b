// A Marian model's vocabulary as one SentencePiece model, as
// models/convert_marian.py makes it: the special ids of an spm (Firefox
// Translations), or, for OPUS-MT, one spm whose ids are its vocab.yml's,
// each piece scored and typed as in the source spm (so that text is
// segmented as there); a piece only the target spm has is UNUSED (decoded,
// never produced by encoding).
//
// vocab.yml is read by lines, "piece: id" each (not by a YAML parser): its
// pieces are any text, and YAML parsers disagree on what ends a line
// (PyYAML's YAML 1.1 breaks at U+0085, U+2028, U+2029); one rule, Python's
// str.splitlines() and str.strip(), in both converters gives the same ids.

import { concat } from '../load/bounded.js';
import { conversionError } from './files.js';

const PIECE_NORMAL = 1, PIECE_UNKNOWN = 2, PIECE_CONTROL = 3, PIECE_USER = 4, PIECE_UNUSED = 5;
const utf8 = new TextEncoder();
const byteKey = (bytes) => String.fromCharCode(...bytes);

// The protobuf fields of data[start, end): { field, wire, value, raw } (value
// a number for varints, else the field's bytes; raw its whole encoding).
function* pbFields(data, start, end, what) {
  const bad = () => conversionError(`${what}: not a SentencePiece model (bad protobuf)`);
  let pos = start;
  const varint = () => {
    let result = 0, scale = 1;
    for (;;) {
      if (pos >= end || scale > 2 ** 63) throw bad();
      const b = data[pos++];
      result += (b & 0x7f) * scale;
      scale *= 128;
      if (b < 0x80) return result;
    }
  };
  while (pos < end) {
    const begin = pos, key = varint(), wire = key % 8;
    let value;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const n = varint();
      value = data.subarray(pos, pos + n);
      pos += n;
    } else if (wire === 1 || wire === 5) {
      value = data.subarray(pos, pos + (wire === 1 ? 8 : 4));
      pos += wire === 1 ? 8 : 4;
    } else throw bad();
    if (pos > end) throw conversionError(`${what}: truncated SentencePiece model`);
    yield { field: Math.floor(key / 8), wire, value, raw: data.subarray(begin, pos) };
  }
}

// { pieces: [{ piece (bytes), score, type }], others (raw top-level fields), eosPiece (bytes) }.
function readSpm(data, what) {
  const pieces = [], others = [];
  let eosPiece = utf8.encode('</s>');
  for (const { field, wire, value, raw } of pbFields(data, 0, data.length, what)) {
    if (field === 1 && wire === 2) {
      const p = { piece: new Uint8Array(0), score: 0, type: PIECE_NORMAL };
      for (const f of pbFields(value, 0, value.length, what)) {
        if (f.field === 1 && f.wire === 2) p.piece = f.value;
        else if (f.field === 2 && f.wire === 5) p.score = new DataView(f.value.buffer, f.value.byteOffset, 4).getFloat32(0, true);
        else if (f.field === 3 && f.wire === 0) p.type = f.value;
      }
      pieces.push(p);
      continue;
    }
    if (field === 2 && wire === 2) {
      for (const f of pbFields(value, 0, value.length, what)) if (f.field === 47 && f.wire === 2) eosPiece = f.value;
    }
    others.push(raw);
  }
  if (!pieces.length) throw conversionError(`${what}: not a SentencePiece model (no pieces)`);
  return { pieces, others, eosPiece };
}

// { eos, unk, size } as Marian's vocabulary takes them: the control piece
// named by trainer_spec.eos_piece and the unknown piece.
export function spmSpecialIds(data, what = 'vocabulary') {
  const { pieces, eosPiece } = readSpm(data, what);
  const eosKey = byteKey(eosPiece);
  const unk = pieces.findIndex((p) => p.type === PIECE_UNKNOWN);
  const eos = pieces.findIndex((p) => p.type === PIECE_CONTROL && byteKey(p.piece) === eosKey);
  if (unk < 0 || eos < 0) throw conversionError(`${what}: the SentencePiece model has no <unk> or no </s> control piece`);
  return { eos, unk, size: pieces.length };
}

function varintBytes(n) {
  const out = [];
  do {
    const b = n % 128;
    n = Math.floor(n / 128);
    out.push(b | (n ? 0x80 : 0));
  } while (n);
  return out;
}

// One SentencePiece model whose ids are a vocab.yml's (the pieces in id
// order), scored and typed from the source spm, the target spm's pieces
// UNUSED; the rest (normalizer, trainer) is the source's.
export function mergedSpm(vocabPieces, sourceSpm, targetSpm) {
  const source = readSpm(sourceSpm, 'source spm');
  const src = new Map(source.pieces.map((p) => [byteKey(p.piece), p]));
  const tgt = new Map(targetSpm ? readSpm(targetSpm, 'target spm').pieces.map((p) => [byteKey(p.piece), p.score]) : []);
  const parts = [];
  for (const piece of vocabPieces) {
    const raw = utf8.encode(piece), known = src.get(byteKey(raw));
    let score = 0, type = PIECE_UNUSED;
    if (piece === '<unk>') type = PIECE_UNKNOWN;
    else if (piece === '</s>' || piece === '<s>') type = PIECE_CONTROL;
    else if (known && [PIECE_NORMAL, PIECE_USER, PIECE_CONTROL].includes(known.type)) ({ score, type } = known);
    else score = tgt.get(byteKey(raw)) ?? 0;
    const scoreBytes = new Uint8Array(4);
    new DataView(scoreBytes.buffer).setFloat32(0, score, true);
    const body = [0x0a, ...varintBytes(raw.length), ...raw, 0x15, ...scoreBytes, 0x18, ...varintBytes(type)];
    parts.push(Uint8Array.of(0x0a, ...varintBytes(body.length), ...body));
  }
  parts.push(...source.others);
  return concat(parts);
}



// Python's str.splitlines() boundaries and str.isspace() characters.
const PY_LINES = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const PY_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');
const pyStrip = (s) => s.replace(PY_STRIP, '');

const YAML_ESCAPES = { 0: '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b',
  ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029' };

// A YAML double-quoted scalar's escapes (\n, \xHH, \uHHHH, \UHHHHHHHH ...).
function yamlUnescape(text, number) {
  let out = '', i = 0;
  while (i < text.length) {
    if (text[i] !== '\\') {
      out += text[i++];
      continue;
    }
    const e = text[i + 1] ?? '', width = { x: 2, u: 4, U: 8 }[e];
    if (width) {
      const digits = text.slice(i + 2, i + 2 + width), code = /^[0-9a-fA-F]+$/.test(digits) ? parseInt(digits, 16) : -1;
      if (code < 0 || code > 0x10ffff) throw conversionError(`vocab.yml line ${number}: bad escape \\${e}${digits}`);
      out += String.fromCodePoint(code);
      i += 2 + width;
    } else if (Object.hasOwn(YAML_ESCAPES, e)) {
      out += YAML_ESCAPES[e];
      i += 2;
    } else {
      throw conversionError(`vocab.yml line ${number}: unknown escape \\${e}`);
    }
  }
  return out;
}

// Marian's vocabulary file (OPUS-MT's *.vocab.yml): "piece: id" lines, the
// piece plain, 'single-' or "double-quoted". The pieces in id order.
export function readVocabYml(text) {
  const pieces = new Map(), ids = new Set();
  text.split(PY_LINES).forEach((line, i) => {
    const number = i + 1;
    if (!pyStrip(line)) return;
    const colon = line.lastIndexOf(':'), value = pyStrip(line.slice(colon + 1));
    const index = colon >= 0 && /^[+-]?[0-9]+(?:_[0-9]+)*$/.test(value) ? Number(value.replaceAll('_', '')) : -1;
    if (index < 0) throw conversionError(`vocab.yml line ${number}: expected "piece: id", got ${JSON.stringify(line)}`);
    let key = pyStrip(line.slice(0, colon));
    if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = yamlUnescape(key.slice(1, -1), number);
    else if (key.length >= 2 && key.startsWith("'") && key.endsWith("'")) key = key.slice(1, -1).replaceAll("''", "'");
    if (ids.has(index) || pieces.has(key)) throw conversionError(`vocab.yml line ${number}: piece or id given twice`);
    pieces.set(key, index);
    ids.add(index);
  });
  const byId = new Array(pieces.size);
  for (const [piece, index] of pieces) {
    if (index >= byId.length) throw conversionError('vocab.yml: the ids must be 0 .. size - 1, each once');
    byId[index] = piece;
  }
  return byId;
}
