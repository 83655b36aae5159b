// One compressed zstd block (RFC 8878 3.1.1.3): its literals, its sequences,
// and their execution into the frame's window. The tables a block may leave
// for the next ones (Huffman for treeless literals, FSE for repeat modes,
// the three repeat offsets) live in a FrameTables, one per frame.

import {
  BackReader, buildFse, corrupt, readFse, readHuffman, rleFse,
} from './entropy.js';

export const BLOCK_MAX = 128 << 10;

// Literal lengths, match lengths, offsets: codes and their predefined
// distributions (RFC 8878 3.1.1.3.2.1 and 3.1.1.3.2.2).
const LL_BASE = Uint32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
  16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]);
const LL_BITS = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
const ML_BASE = Uint32Array.from([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
  21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83,
  99, 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539]);
const ML_BITS = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);

const KINDS = [
  { name: 'literal lengths', maxLog: 9, maxSymbol: 35,
    predefined: buildFse([4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2,
      1, 1, 1, 1, 1, -1, -1, -1, -1], 6) },
  { name: 'offsets', maxLog: 8, maxSymbol: 31,
    predefined: buildFse([1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      -1, -1, -1, -1, -1], 5) },
  { name: 'match lengths', maxLog: 9, maxSymbol: 52,
    predefined: buildFse([1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1], 6) },
];

// What one block leaves to the next in its frame.
export class FrameTables {
  constructor() {
    this.huffman = null;
    this.fse = [null, null, null]; // literal lengths, offsets, match lengths
    this.rep = [1, 4, 8];
    this.literals = new Uint8Array(BLOCK_MAX);
  }
}

// Decodes the compressed block bytes[start, end) into win.buf at win.pos,
// at most `max` bytes; returns how many it wrote.
export function decodeBlock(bytes, start, end, tables, win, max) {
  const lit = readLiterals(bytes, start, end, tables);
  if (lit.size > max) corrupt('a block with more literals than a block may hold');
  const seq = readSequenceHeader(bytes, lit.end, end, tables);
  if (seq.count === 0) {
    if (seq.end !== end) corrupt('bytes after a block with no sequences');
    win.buf.set(lit.bytes.subarray(lit.start, lit.start + lit.size), win.pos);
    return lit.size;
  }
  return runSequences(bytes, seq.end, end, seq.count, tables, lit, win, max);
}

// The literals section (RFC 8878 3.1.1.3.1): returns where its bytes are
// ({ bytes, start, size }: the block's own bytes when raw) and where the
// sequences section starts.
function readLiterals(bytes, pos, end, tables) {
  if (pos >= end) corrupt('a block without its literals section');
  const b0 = bytes[pos];
  const type = b0 & 3;
  const format = (b0 >>> 2) & 3;
  if (type < 2) {
    const headSize = format === 1 ? 2 : format === 3 ? 3 : 1;
    if (pos + headSize > end) corrupt('a literals header past its block');
    let size = b0 >>> 3;
    if (headSize === 2) size = (b0 >>> 4) + (bytes[pos + 1] << 4);
    if (headSize === 3) size = (b0 >>> 4) + (bytes[pos + 1] << 4) + (bytes[pos + 2] << 12);
    const at = pos + headSize;
    if (type === 0) {
      if (at + size > end) corrupt('raw literals past their block');
      return { bytes, start: at, size, end: at + size };
    }
    if (at >= end) corrupt('RLE literals without their byte');
    if (size > BLOCK_MAX) corrupt('more literals than a block may hold');
    tables.literals.fill(bytes[at], 0, size);
    return { bytes: tables.literals, start: 0, size, end: at + 1 };
  }
  return readHuffmanLiterals(bytes, pos, end, tables, type, format);
}

function readHuffmanLiterals(bytes, pos, end, tables, type, format) {
  const headSize = format < 2 ? 3 : format + 2;
  if (pos + headSize > end) corrupt('a literals header past its block');
  let size;
  let compressed;
  const h = bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16);
  if (headSize === 3) {
    size = (h >>> 4) & 0x3ff;
    compressed = h >>> 14;
  } else if (headSize === 4) {
    const h4 = h + bytes[pos + 3] * 2 ** 24;
    size = (h4 >>> 4) & 0x3fff;
    compressed = Math.floor(h4 / 2 ** 18);
  } else {
    const h4 = h + bytes[pos + 3] * 2 ** 24;
    size = (h4 >>> 4) & 0x3ffff;
    compressed = Math.floor(h4 / 2 ** 22) + bytes[pos + 4] * 1024;
  }
  if (size > BLOCK_MAX) corrupt('more literals than a block may hold');
  let at = pos + headSize;
  const sectionEnd = at + compressed;
  if (sectionEnd > end) corrupt('compressed literals past their block');
  if (type === 2) {
    const tree = readHuffman(bytes, at, sectionEnd);
    tables.huffman = tree.table;
    at = tree.end;
  } else if (!tables.huffman) corrupt('treeless literals with no earlier Huffman tree');
  const out = tables.literals;
  if (format === 0) decodeHuffStream(bytes, at, sectionEnd, tables.huffman, out, 0, size);
  else decodeFourStreams(bytes, at, sectionEnd, tables.huffman, out, size);
  return { bytes: out, start: 0, size, end: sectionEnd };
}

function decodeFourStreams(bytes, at, end, table, out, size) {
  if (at + 6 > end) corrupt('a literals jump table past its section');
  const quarter = (size + 3) >>> 2;
  if (quarter * 3 > size) corrupt('too few literals for four streams');
  // st: the streams' starts, then where each is (its bit), then its next output.
  const st = new Int32Array(12);
  st[0] = at + 6;
  for (let k = 0; k < 3; k++) st[k + 1] = st[k] + (bytes[at + 2 * k] | (bytes[at + 2 * k + 1] << 8));
  if (st[3] > end) corrupt('a literals jump table past its section');
  for (let k = 0; k < 4; k++) {
    st[4 + k] = new BackReader(bytes, st[k], k < 3 ? st[k + 1] : end).left;
    st[8 + k] = k * quarter;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  interleave(view, st, table, out, size);
  for (let k = 0; k < 4; k++) huffRest(view, st[k], st[4 + k], table, out, st[8 + k], k < 3 ? (k + 1) * quarter : size);
}

// The four streams two symbols at a time each, in turn (independent work the
// processor can overlap), while each has 24 bits and two symbols to go (the
// fourth stream, ending at `size`, is the shortest).
function interleave(view, st, table, out, size) {
  const { maxBits, symbol, bits } = table;
  let l0 = st[4], l1 = st[5], l2 = st[6], l3 = st[7];
  let o0 = st[8], o1 = st[9], o2 = st[10], o3 = st[11];
  const s0 = st[0], s1 = st[1], s2 = st[2], s3 = st[3];
  while (l0 >= 24 && l1 >= 24 && l2 >= 24 && l3 >= 24 && o3 + 2 <= size) {
    l0 = twoSymbols(view, s0, l0, maxBits, symbol, bits, out, o0);
    l1 = twoSymbols(view, s1, l1, maxBits, symbol, bits, out, o1);
    l2 = twoSymbols(view, s2, l2, maxBits, symbol, bits, out, o2);
    l3 = twoSymbols(view, s3, l3, maxBits, symbol, bits, out, o3);
    o0 += 2; o1 += 2; o2 += 2; o3 += 2;
  }
  st[4] = l0; st[5] = l1; st[6] = l2; st[7] = l3;
  st[8] = o0; st[9] = o1; st[10] = o2; st[11] = o3;
}

// Two symbols from the 24 or more bits below bit `left` (maxBits <= 11):
// returns where the stream is then. The 32-bit word read ends at or below
// the stream's last byte, since `left` starts below its end mark.
function twoSymbols(view, start, left, maxBits, symbol, bits, out, o) {
  const base = (left >>> 3) - 3;
  const word = view.getUint32(start + base, true);
  const mask = (1 << maxBits) - 1;
  let rel = left - 8 * base;
  let index = (word >>> (rel - maxBits)) & mask;
  out[o] = symbol[index];
  rel -= bits[index];
  index = (word >>> (rel - maxBits)) & mask;
  out[o + 1] = symbol[index];
  return 8 * base + rel - bits[index];
}

// n literals from one Huffman stream bytes[start, end) into out[at...].
function decodeHuffStream(bytes, start, end, table, out, at, n) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  huffRest(view, start, new BackReader(bytes, start, end).left, table, out, at, at + n);
}

// The literals out[i, stop) from a stream whose next bit is below `left`.
// The hot loop of a model file (mostly literals): while 24 bits or more are
// left, one 32-bit load serves the symbols its top bits hold (BackReader.peek
// loads for each); the last few symbols go through the reader. `view`: a
// DataView of the block's bytes.
function huffRest(view, start, left, table, out, i, stop) {
  const { maxBits, symbol, bits } = table;
  const mask = (1 << maxBits) - 1;
  while (left >= 24 && i < stop) {
    const base = (left >>> 3) - 3;
    const word = view.getUint32(start + base, true);
    let rel = left - 8 * base; // 24 to 31 bits of `word` are ours
    while (rel >= maxBits && i < stop) {
      const index = (word >>> (rel - maxBits)) & mask;
      out[i++] = symbol[index];
      rel -= bits[index];
    }
    left = 8 * base + rel;
  }
  const r = new BackReader(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), start, null, left);
  while (i < stop) {
    const index = r.peek(maxBits);
    out[i++] = symbol[index];
    r.left -= bits[index];
  }
  if (r.left !== 0) corrupt('a Huffman stream that does not end where its literals do');
}

// Number_of_Sequences and the three tables (RFC 8878 3.1.1.3.2.1).
function readSequenceHeader(bytes, pos, end, tables) {
  if (pos >= end) corrupt('a block without its sequences section');
  let count = bytes[pos++];
  if (count === 0) return { count, end: pos };
  if (count === 255) {
    if (pos + 2 > end) corrupt('a sequence count past its block');
    count = bytes[pos] + (bytes[pos + 1] << 8) + 0x7f00;
    pos += 2;
  } else if (count >= 128) {
    if (pos + 1 > end) corrupt('a sequence count past its block');
    count = ((count - 128) << 8) + bytes[pos++];
  }
  if (pos >= end) corrupt('a block without its compression modes');
  const modes = bytes[pos++];
  if (modes & 3) corrupt('reserved bits set in the compression modes');
  for (let k = 0; k < 3; k++) {
    const mode = (modes >>> (6 - 2 * k)) & 3;
    pos = readTable(bytes, pos, end, tables, k, mode);
  }
  return { count, end: pos };
}

function readTable(bytes, pos, end, tables, k, mode) {
  const kind = KINDS[k];
  if (mode === 0) tables.fse[k] = kind.predefined;
  else if (mode === 1) {
    if (pos >= end) corrupt(`an RLE ${kind.name} symbol past its block`);
    if (bytes[pos] > kind.maxSymbol) corrupt(`an RLE ${kind.name} symbol out of range`);
    tables.fse[k] = rleFse(bytes[pos++]);
  } else if (mode === 2) {
    const read = readFse(bytes, pos, end, kind.maxLog, kind.maxSymbol);
    tables.fse[k] = read.table;
    pos = read.end;
  } else if (!tables.fse[k]) corrupt(`repeated ${kind.name} table with no earlier one`);
  return pos;
}

// Decodes and executes `count` sequences from the backward stream
// bytes[start, end) (RFC 8878 3.1.1.3.2.2 and 3.1.1.4).
function runSequences(bytes, start, end, count, tables, lit, win, max) {
  const r = new BackReader(bytes, start, end);
  const [llT, ofT, mlT] = tables.fse;
  let ll = r.read(llT.log);
  let of = r.read(ofT.log);
  let ml = r.read(mlT.log);
  const rep = tables.rep;
  const buf = win.buf;
  const litBytes = lit.bytes;
  let litPos = lit.start;
  const litEnd = lit.start + lit.size;
  let out = win.pos;
  const outEnd = win.pos + max;
  for (let i = 0; i < count; i++) {
    const ofCode = ofT.symbol[of];
    const mlCode = mlT.symbol[ml];
    const llCode = llT.symbol[ll];
    if (ofCode > 31 || mlCode > 52 || llCode > 35) corrupt('a sequence code out of range');
    const offsetValue = ofCode > 24 ? 2 ** ofCode + r.read(ofCode) : (1 << ofCode) + r.read(ofCode);
    const matchLen = ML_BASE[mlCode] + r.read(ML_BITS[mlCode]);
    const litLen = LL_BASE[llCode] + r.read(LL_BITS[llCode]);
    const offset = nextOffset(rep, offsetValue, litLen);
    if (i + 1 < count) {
      ll = llT.base[ll] + r.read(llT.bits[ll]);
      ml = mlT.base[ml] + r.read(mlT.bits[ml]);
      of = ofT.base[of] + r.read(ofT.bits[of]);
    }
    if (litPos + litLen > litEnd) corrupt('a sequence with more literals than the block has');
    if (out + litLen + matchLen > outEnd) corrupt('a block that decodes to more than a block may hold');
    if (litLen > 0) {
      copyLiterals(buf, out, litBytes, litPos, litLen);
      out += litLen;
      litPos += litLen;
    }
    if (offset > out) corrupt('a match offset beyond the window');
    copyMatch(buf, out, offset, matchLen);
    out += matchLen;
  }
  if (r.left !== 0) corrupt('a sequences bitstream that does not end with its sequences');
  const rest = litEnd - litPos;
  if (out + rest > outEnd) corrupt('a block that decodes to more than a block may hold');
  buf.set(litBytes.subarray(litPos, litEnd), out);
  return out + rest - win.pos;
}

// The offset a sequence's offset value means, updating the three repeat
// offsets (RFC 8878 3.1.1.5).
function nextOffset(rep, value, litLen) {
  if (value > 3) {
    rep[2] = rep[1];
    rep[1] = rep[0];
    rep[0] = value - 3;
    return rep[0];
  }
  const index = litLen === 0 ? value : value - 1; // 0..3
  if (index === 0) return rep[0];
  const offset = index === 3 ? rep[0] - 1 : rep[index];
  if (offset === 0) corrupt('a repeat offset of 0');
  if (index !== 1) rep[2] = rep[1];
  rep[1] = rep[0];
  rep[0] = offset;
  return offset;
}

function copyLiterals(buf, out, src, pos, n) {
  if (n < 32) {
    for (let k = 0; k < n; k++) buf[out + k] = src[pos + k];
  } else buf.set(src.subarray(pos, pos + n), out);
}

// A match may overlap what it writes (offset < length): byte by byte then.
function copyMatch(buf, out, offset, n) {
  let from = out - offset;
  if (offset >= n && n >= 32) {
    buf.copyWithin(out, from, from + n);
    return;
  }
  for (let k = 0; k < n; k++) buf[out + k] = buf[from++];
}
