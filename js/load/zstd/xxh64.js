// XXH64 with seed 0, fed in pieces: a zstd frame's content checksum is the
// low 32 bits of it (RFC 8878 3.1.1). JavaScript has no 64-bit integer arithmetic
// short of BigInt (far slower), so each 64-bit value is a pair of 32-bit
// halves, (hi, lo); a result comes back in R.

// The last result, kept in a typed array so that V8 stores it unboxed.
const R = new Uint32Array(2);
// The five primes, as [hi, lo].
const P1 = [0x9e3779b1, 0x85ebca87];
const P2 = [0xc2b2ae3d, 0x27d4eb4f];
const P3 = [0x165667b1, 0x9e3779f9];
const P4 = [0x85ebca77, 0xc2b2ae63];
const P5 = [0x27d4eb2f, 0x165667c5];

// The high 32 bits of a * b (unsigned 32-bit), from 16-bit pieces, none of
// whose products loses bits.
function mulHigh(a, b) {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const m1 = a1 * b0, m2 = a0 * b1;
  const mid = ((a0 * b0) >>> 16) + (m1 & 0xffff) + (m2 & 0xffff);
  return a1 * b1 + (m1 >>> 16) + (m2 >>> 16) + (mid >>> 16);
}

// (ah, al) * (bh, bl) mod 2^64: al * bl in full, the cross terms' low halves.
function mul(ah, al, bh, bl) {
  R[0] = mulHigh(al, bl) + Math.imul(ah, bl) + Math.imul(al, bh);
  R[1] = Math.imul(al, bl);
}

function add(ah, al, bh, bl) {
  const l = (al >>> 0) + (bl >>> 0);
  R[1] = l;
  R[0] = ah + bh + (l > 0xffffffff ? 1 : 0);
}

function rotl(h, l, n) {
  R[0] = (h << n) | (l >>> (32 - n));
  R[1] = (l << n) | (h >>> (32 - n));
}

// acc = rotl(acc + input * P2, 31) * P1
function round(ah, al, ih, il) {
  mul(ih, il, P2[0], P2[1]);
  add(ah, al, R[0], R[1]);
  rotl(R[0], R[1], 31);
  mul(R[0], R[1], P1[0], P1[1]);
}

// acc = (acc ^ round(0, v)) * P1 + P4
function merge(ah, al, vh, vl) {
  round(0, 0, vh, vl);
  mul((ah ^ R[0]) >>> 0, (al ^ R[1]) >>> 0, P1[0], P1[1]);
  add(R[0], R[1], P4[0], P4[1]);
}

function u32(bytes, i) {
  return (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)) >>> 0;
}

export class Xxh64 {
  constructor() {
    // The four lanes, as hi/lo pairs, from seed 0.
    add(P1[0], P1[1], P2[0], P2[1]);
    this.v = Uint32Array.from([R[0], R[1], P2[0], P2[1], 0, 0, 0, 0]);
    add(0, 0, ~P1[0] >>> 0, ~P1[1] >>> 0); // -P1 = ~P1 + 1
    add(R[0], R[1], 0, 1);
    this.v[6] = R[0];
    this.v[7] = R[1];
    this.buffer = new Uint8Array(32);
    this.buffered = 0;
    this.length = 0;
  }

  update(bytes) {
    let i = 0;
    const n = bytes.length;
    this.length += n;
    if (this.buffered > 0) {
      const take = Math.min(32 - this.buffered, n);
      this.buffer.set(bytes.subarray(0, take), this.buffered);
      this.buffered += take;
      i = take;
      if (this.buffered < 32) return;
      this.stripe(new DataView(this.buffer.buffer), 0);
      this.buffered = 0;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, n);
    for (; i + 32 <= n; i += 32) this.stripe(view, i);
    this.buffer.set(bytes.subarray(i), 0);
    this.buffered = n - i;
  }

  // 32 bytes at `at` of a DataView (one load a word, where bytes[i] | ... takes four).
  stripe(view, at) {
    for (let k = 0; k < 4; k++) this.lane(2 * k, view.getUint32(at + 8 * k + 4, true), view.getUint32(at + 8 * k, true));
  }

  // round() on lane v[i], v[i + 1] with input (ih, il), written out with
  // locals: the stripes are where the time goes.
  lane(i, ih, il) {
    const v = this.v;
    const pl = Math.imul(il, P2[1]) >>> 0;
    const ph = mulHigh(il, P2[1]) + Math.imul(ih, P2[1]) + Math.imul(il, P2[0]);
    const sl = v[i + 1] + pl;
    const sh = (v[i] + ph + (sl > 0xffffffff ? 1 : 0)) >>> 0;
    const al = sl >>> 0;
    const rh = ((sh << 31) | (al >>> 1)) >>> 0;
    const rl = ((al << 31) | (sh >>> 1)) >>> 0;
    v[i] = mulHigh(rl, P1[1]) + Math.imul(rh, P1[1]) + Math.imul(rl, P1[0]);
    v[i + 1] = Math.imul(rl, P1[1]);
  }

  // The low 32 bits of the digest.
  digestLow32() {
    this.start();
    add(R[0], R[1], Math.floor(this.length / 2 ** 32) >>> 0, this.length >>> 0);
    const b = this.buffer;
    let i = 0;
    for (; i + 8 <= this.buffered; i += 8) {
      const h = R[0], l = R[1];
      round(0, 0, u32(b, i + 4), u32(b, i));
      rotl((h ^ R[0]) >>> 0, (l ^ R[1]) >>> 0, 27);
      mul(R[0], R[1], P1[0], P1[1]);
      add(R[0], R[1], P4[0], P4[1]);
    }
    if (i + 4 <= this.buffered) {
      const h = R[0], l = R[1];
      mul(0, u32(b, i), P1[0], P1[1]);
      rotl((h ^ R[0]) >>> 0, (l ^ R[1]) >>> 0, 23);
      mul(R[0], R[1], P2[0], P2[1]);
      add(R[0], R[1], P3[0], P3[1]);
      i += 4;
    }
    for (; i < this.buffered; i++) {
      const h = R[0], l = R[1];
      mul(0, b[i], P5[0], P5[1]);
      rotl((h ^ R[0]) >>> 0, (l ^ R[1]) >>> 0, 11);
      mul(R[0], R[1], P1[0], P1[1]);
    }
    this.avalanche();
    return R[1];
  }

  // The accumulator before the tail: the lanes merged, or P5 for a short input.
  start() {
    const v = this.v;
    if (this.length < 32) { R[0] = P5[0]; R[1] = P5[1]; return; }
    let h = 0, l = 0;
    for (const [k, n] of [[0, 1], [1, 7], [2, 12], [3, 18]]) {
      rotl(v[2 * k], v[2 * k + 1], n);
      add(h, l, R[0], R[1]);
      h = R[0]; l = R[1];
    }
    for (let k = 0; k < 4; k++) {
      merge(h, l, v[2 * k], v[2 * k + 1]);
      h = R[0]; l = R[1];
    }
  }

  // x ^= x >> 33; x *= P2; x ^= x >> 29; x *= P3; x ^= x >> 32
  avalanche() {
    mul(R[0], (R[1] ^ (R[0] >>> 1)) >>> 0, P2[0], P2[1]);
    const h = R[0], l = R[1];
    mul((h ^ (h >>> 29)) >>> 0, (l ^ ((l >>> 29) | (h << 3))) >>> 0, P3[0], P3[1]);
    R[1] ^= R[0];
  }
}
