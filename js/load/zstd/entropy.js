// zstd's entropy coders (RFC 8878, sections 4.1 and 4.2): the bit readers,
// FSE tables from their normalized counts, Huffman tables from their weights.
// A corrupt table throws ZstdCorrupt; zstd.js names the file.

export class ZstdCorrupt extends Error {}

export function corrupt(what) {
  throw new ZstdCorrupt(what);
}

// Index of the highest set bit of v > 0.
export function highBit(v) {
  return 31 - Math.clz32(v);
}

// A bitstream read backwards (FSE and Huffman streams): the bytes
// [start, end) as one little-endian number whose highest set bit marks its
// top; reads take bits downwards from there. Past the bottom, reads give
// zeros and `left` goes negative (the caller checks it ends at 0).
export class BackReader {
  // The stream [start, end), or (end null) one read down to bit `left`.
  constructor(bytes, start, end, left = 0) {
    this.bytes = bytes;
    this.start = start;
    this.left = left;
    if (end === null) return;
    if (end <= start) corrupt('an empty bitstream');
    const last = bytes[end - 1];
    if (last === 0) corrupt('a bitstream without its end mark');
    this.left = (end - start - 1) * 8 + highBit(last);
  }

  // The n (<= 24) bits below the top, without taking them.
  peek(n) {
    const p = this.left - n;
    if (p < 0) return p <= -n ? 0 : this.bitsAt(0, n + p) << -p;
    return this.bitsAt(p, n);
  }

  bitsAt(p, n) {
    const b = this.bytes;
    const i = this.start + (p >>> 3);
    const word = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    return (word >>> (p & 7)) & ((1 << n) - 1);
  }

  // n bits, n up to 31 (offsets take up to 31 extra bits).
  read(n) {
    if (n === 0) return 0;
    if (n > 24) {
      const high = this.read(n - 16);
      return high * 65536 + this.read(16);
    }
    const v = this.peek(n);
    this.left -= n;
    return v;
  }
}

// FSE decoding table: per state its symbol, the bits to read for the next
// state and the base those bits are added to.
export class FseTable {
  constructor(log) {
    this.log = log;
    this.symbol = new Uint8Array(1 << log);
    this.bits = new Uint8Array(1 << log);
    this.base = new Uint16Array(1 << log);
  }
}

// The table for normalized counts `counts` (-1: a "less than 1" symbol) of
// accuracy `log` (RFC 8878 4.1.1).
export function buildFse(counts, log) {
  const size = 1 << log;
  const table = new FseTable(log);
  const next = new Uint16Array(counts.length);
  let high = size - 1;
  for (let s = 0; s < counts.length; s++) {
    if (counts[s] === -1) {
      table.symbol[high--] = s;
      next[s] = 1;
    } else next[s] = counts[s];
  }
  const step = (size >>> 1) + (size >>> 3) + 3;
  let pos = 0;
  for (let s = 0; s < counts.length; s++) {
    for (let i = 0; i < counts[s]; i++) {
      table.symbol[pos] = s;
      do pos = (pos + step) & (size - 1); while (pos > high);
    }
  }
  if (pos !== 0) corrupt('an FSE table whose counts do not fill it');
  for (let state = 0; state < size; state++) {
    const n = next[table.symbol[state]]++;
    const bits = log - highBit(n);
    table.bits[state] = bits;
    table.base[state] = (n << bits) - size;
  }
  return table;
}

// An FSE table whose every state gives `symbol` (RLE mode).
export function rleFse(symbol) {
  const table = new FseTable(0);
  table.symbol[0] = symbol;
  return table;
}

// Reads an FSE table description at bytes[pos] (RFC 8878 4.1.1): returns the
// table and the position after it. maxLog and maxSymbol bound what it may say.
export function readFse(bytes, pos, end, maxLog, maxSymbol) {
  const r = new ForwardBits(bytes, pos, end);
  const log = r.read(4) + 5;
  if (log > maxLog) corrupt(`an FSE accuracy of ${log} bits (at most ${maxLog})`);
  const counts = [];
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let nbBits = log + 1;
  while (remaining > 1) {
    if (counts.length > maxSymbol) corrupt('an FSE table with too many symbols');
    const max = 2 * threshold - 1 - remaining;
    let value = r.peek(nbBits);
    if ((value & (threshold - 1)) < max) {
      value &= threshold - 1;
      r.skip(nbBits - 1);
    } else {
      if (value >= threshold) value -= max;
      r.skip(nbBits);
    }
    const count = value - 1;
    remaining -= Math.abs(count);
    counts.push(count);
    if (count === 0) readZeroRun(r, counts);
    while (remaining < threshold) { nbBits--; threshold >>>= 1; }
  }
  if (remaining !== 1 || counts.length > maxSymbol + 1) corrupt('an FSE table whose counts do not add up');
  return { table: buildFse(counts, log), end: r.bytePos() };
}

// After a zero count: 2-bit repeat fields, each adding that many zeros, 3
// meaning "3 and another field".
function readZeroRun(r, counts) {
  for (;;) {
    const n = r.read(2);
    for (let i = 0; i < n; i++) counts.push(0);
    if (n !== 3) return;
  }
}

// A bitstream read forwards, low bits first (FSE table descriptions).
class ForwardBits {
  constructor(bytes, pos, end) {
    this.bytes = bytes;
    this.pos = pos * 8;
    this.end = end * 8;
  }

  peek(n) {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const p = this.pos + i;
      if (p < this.end) v |= ((this.bytes[p >>> 3] >>> (p & 7)) & 1) << i;
    }
    return v;
  }

  skip(n) {
    this.pos += n;
    if (this.pos > this.end) corrupt('an FSE table description past its section');
  }

  read(n) {
    const v = this.peek(n);
    this.skip(n);
    return v;
  }

  bytePos() {
    return (this.pos + 7) >>> 3;
  }
}

// Huffman decoding table: indexed by the next `maxBits` bits, the symbol and
// how many of those bits its code takes.
export class HuffTable {
  constructor(maxBits) {
    this.maxBits = maxBits;
    this.symbol = new Uint8Array(1 << maxBits);
    this.bits = new Uint8Array(1 << maxBits);
  }
}

// Reads a Huffman tree description at bytes[pos] (RFC 8878 4.2.1): returns
// the table and the position after it.
export function readHuffman(bytes, pos, end) {
  if (pos >= end) corrupt('a missing Huffman tree description');
  const header = bytes[pos];
  let weights;
  let after;
  if (header >= 128) {
    const count = header - 127;
    after = pos + 1 + ((count + 1) >>> 1);
    if (after > end) corrupt('a Huffman tree description past its section');
    weights = new Uint8Array(count + 1);
    for (let i = 0; i < count; i++) {
      const byte = bytes[pos + 1 + (i >>> 1)];
      weights[i] = i & 1 ? byte & 15 : byte >>> 4;
    }
    weights = weights.subarray(0, count);
  } else {
    after = pos + 1 + header;
    if (after > end) corrupt('a Huffman tree description past its section');
    weights = fseWeights(bytes, pos + 1, after);
  }
  return { table: huffFromWeights(weights), end: after };
}

// Huffman weights compressed with FSE: two states interleaved over one
// backward stream (RFC 8878 4.2.1.2).
function fseWeights(bytes, start, end) {
  const { table, end: tableEnd } = readFse(bytes, start, end, 6, 255);
  const r = new BackReader(bytes, tableEnd, end);
  const out = [];
  let s1 = r.read(table.log);
  let s2 = r.read(table.log);
  for (;;) {
    if (out.length > 255) corrupt('too many Huffman weights');
    out.push(table.symbol[s1]);
    s1 = table.base[s1] + r.read(table.bits[s1]);
    if (r.left < 0) { out.push(table.symbol[s2]); break; }
    out.push(table.symbol[s2]);
    s2 = table.base[s2] + r.read(table.bits[s2]);
    if (r.left < 0) { out.push(table.symbol[s1]); break; }
  }
  if (out.length > 255) corrupt('too many Huffman weights');
  return Uint8Array.from(out);
}

// The table from the weights of all symbols but the last, whose weight is
// what brings the total to a power of two (RFC 8878 4.2.1.3).
export function huffFromWeights(weights) {
  let total = 0;
  for (const w of weights) {
    if (w > 11) corrupt('a Huffman weight over 11');
    if (w) total += 1 << (w - 1);
  }
  if (total === 0) corrupt('a Huffman tree with no symbol');
  const maxBits = highBit(total) + 1;
  const rest = (1 << maxBits) - total;
  if (maxBits > 11 || (rest & (rest - 1)) !== 0) corrupt('Huffman weights that make no tree');
  const all = new Uint8Array(weights.length + 1);
  all.set(weights);
  all[weights.length] = highBit(rest) + 1;
  const table = new HuffTable(maxBits);
  let pos = 0;
  for (let w = 1; w <= maxBits; w++) {
    const span = 1 << (w - 1);
    for (let s = 0; s < all.length; s++) {
      if (all[s] !== w) continue;
      table.symbol.fill(s, pos, pos + span);
      table.bits.fill(maxBits + 1 - w, pos, pos + span);
      pos += span;
    }
  }
  return table;
}
