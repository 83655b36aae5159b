// zstd decompression (RFC 8878) as the bytes arrive, in browsers and Node
// (DecompressionStream knows gzip and deflate only): frames one after another,
// skippable frames, raw, RLE and compressed blocks, the content checksum
// verified. Dictionaries are not supported (no model file uses one).
//
//   zstdDecompressStream({ maxOutputBytes, expectedBytes, name }) -> TransformStream
//   zstdDecompress(bytes, { maxOutputBytes, expectedBytes, name }) -> Promise<Uint8Array>
//
// Errors name the file (`name`) and carry a `code`: ZSTD_TRUNCATED, ZSTD_CORRUPT,
// ZSTD_CHECKSUM, ZSTD_TOO_LARGE (over maxOutputBytes or the window limit),
// ZSTD_SIZE (not expectedBytes).

import { BLOCK_MAX, FrameTables, decodeBlock } from './block.js';
import { ZstdCorrupt } from './entropy.js';
import { Xxh64 } from './xxh64.js';
import { ZSTD_MAX_WINDOW } from '../../defaults.js';

const MAGIC = 0xfd2fb528;
const SKIPPABLE = 0x184d2a50; // to 0x184d2a5f

export function zstdDecompressStream(options = {}) {
  const decoder = new ZstdDecoder(options);
  return new TransformStream({
    transform(chunk, controller) {
      decoder.push(toBytes(chunk), (bytes) => controller.enqueue(bytes));
    },
    flush() {
      decoder.finish();
    },
  });
}

export async function zstdDecompress(bytes, options = {}) {
  const decoder = new ZstdDecoder(options);
  const chunks = [];
  decoder.push(toBytes(bytes), (chunk) => chunks.push(chunk));
  decoder.finish();
  return joinChunks(chunks, decoder.total);
}

function toBytes(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('residual-mt: zstd input must be bytes (a Uint8Array or an ArrayBuffer)');
}

// Chunks that are consecutive views of one whole buffer (a frame of known
// size decodes into a buffer of that size) come back as that buffer, uncopied.
function joinChunks(chunks, total) {
  if (chunks.length === 1 && chunks[0].length === total) return chunks[0];
  const first = chunks[0];
  if (first && first.byteOffset === 0 && first.buffer.byteLength === total &&
      chunks.every((c, i) => c.buffer === first.buffer && (i === 0 || c.byteOffset === chunks[i - 1].byteOffset + chunks[i - 1].length))) {
    return new Uint8Array(first.buffer);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

function checkSize(value, what) {
  if (value === undefined || value === null) return null;
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`residual-mt: zstd ${what} must be a whole number of bytes, not ${value}`);
  return value;
}

function zstdError(code, message) {
  const err = new Error(message);
  err.code = code;
  return err;
}

// The decoder's state between pieces of input: what it waits for next
// ('magic', 'header', 'block', 'checksum', 'skip'), the unread input, the
// current frame's window and tables.
class ZstdDecoder {
  constructor({ maxOutputBytes, expectedBytes, name } = {}) {
    this.max = checkSize(maxOutputBytes, 'maxOutputBytes');
    this.expected = checkSize(expectedBytes, 'expectedBytes');
    this.name = name ? String(name) : 'the zstd data';
    this.input = new Input();
    this.state = 'magic';
    this.skipLeft = 0;
    this.total = 0;
    this.frames = 0;
    this.frame = null;
  }

  push(bytes, emit) {
    this.input.append(bytes);
    try {
      while (this.step(emit));
    } catch (err) {
      if (err instanceof ZstdCorrupt) throw this.corrupt(err.message);
      throw err;
    }
  }

  finish() {
    if (this.state === 'magic' && this.input.available === 0 && this.frames > 0) {
      if (this.expected !== null && this.total !== this.expected) {
        throw zstdError('ZSTD_SIZE', `residual-mt: ${this.name} decompresses to ${this.total} bytes, not the ${this.expected} expected`);
      }
      return;
    }
    const where = this.frames === 0 && this.state === 'magic' ? 'before its first frame' : 'inside a frame';
    throw zstdError('ZSTD_TRUNCATED', `residual-mt: ${this.name} is truncated: its zstd data ended ${where} (after ${this.input.consumed + this.input.available} bytes)`);
  }

  corrupt(what) {
    return zstdError('ZSTD_CORRUPT', `residual-mt: ${this.name} is not valid zstd data: ${what} (near byte ${this.input.consumed})`);
  }

  // One unit of work if its bytes are there: returns false when it must wait.
  step(emit) {
    switch (this.state) {
      case 'magic': return this.readMagic();
      case 'skip': return this.skip();
      case 'header': return this.readHeader();
      case 'block': return this.readBlock(emit);
      default: return this.readChecksum();
    }
  }

  readMagic() {
    const input = this.input;
    if (input.available < 4) return false;
    const magic = input.u32(0);
    if (magic === MAGIC) {
      input.take(4);
      this.state = 'header';
      return true;
    }
    if ((magic & 0xfffffff0) >>> 0 !== SKIPPABLE) {
      throw this.corrupt(this.frames === 0 ? 'no zstd frame at its start' : 'bytes after the last frame that start no frame');
    }
    if (input.available < 8) return false;
    this.skipLeft = input.u32(4);
    input.take(8);
    this.state = 'skip';
    this.frames++;
    return true;
  }

  skip() {
    const n = Math.min(this.skipLeft, this.input.available);
    this.input.take(n);
    this.skipLeft -= n;
    if (this.skipLeft > 0) return false;
    this.state = 'magic';
    return true;
  }

  readHeader() {
    const input = this.input;
    if (input.available < 1) return false;
    const d = input.byte(0);
    const fcsFlag = d >>> 6;
    const single = (d >>> 5) & 1;
    if (d & 8) throw this.corrupt('a reserved bit set in a frame header');
    const didSize = [0, 1, 2, 4][d & 3];
    const fcsSize = [single, 2, 4, 8][fcsFlag];
    const size = 1 + (single ? 0 : 1) + didSize + fcsSize;
    if (input.available < size) return false;
    if (didSize && input.uint(1 + (single ? 0 : 1), didSize) !== 0) {
      throw this.corrupt('a frame that needs a dictionary (not supported)');
    }
    let window = null;
    if (!single) {
      const w = input.byte(1);
      const log = 10 + (w >>> 3);
      window = 2 ** log + (2 ** log / 8) * (w & 7);
    }
    let contentSize = fcsSize ? input.uint(size - fcsSize, fcsSize) : null;
    if (fcsSize === 2) contentSize += 256;
    input.take(size);
    this.startFrame(window ?? contentSize, contentSize, (d >>> 2) & 1);
    return true;
  }

  startFrame(window, contentSize, checksum) {
    const keep = Math.min(window, contentSize ?? Infinity, this.max ?? Infinity);
    if (keep > ZSTD_MAX_WINDOW) {
      throw zstdError('ZSTD_TOO_LARGE', `residual-mt: ${this.name} needs a zstd window of ${window} bytes, over the ${ZSTD_MAX_WINDOW} this decoder allows`);
    }
    if (contentSize !== null) this.checkTotal(this.total + contentSize);
    this.frame = new Frame(window, contentSize, keep, checksum);
    this.state = 'block';
  }

  checkTotal(total) {
    if (this.max !== null && total > this.max) {
      throw zstdError('ZSTD_TOO_LARGE', `residual-mt: ${this.name} decompresses to more than the ${this.max} bytes allowed`);
    }
    if (this.expected !== null && total > this.expected) {
      throw zstdError('ZSTD_SIZE', `residual-mt: ${this.name} decompresses to more than the ${this.expected} bytes expected`);
    }
  }

  readBlock(emit) {
    const input = this.input;
    if (input.available < 3) return false;
    const header = input.uint(0, 3);
    const last = header & 1;
    const type = (header >>> 1) & 3;
    const size = header >>> 3;
    const frame = this.frame;
    if (type === 3) throw this.corrupt('a block of the reserved type');
    if (size > frame.blockMax && type !== 1) throw this.corrupt('a block larger than its frame allows');
    const need = 3 + (type === 1 ? 1 : size);
    if (input.available < need) return false;
    const n = frame.decode(input.bytes, input.start + 3, type, size);
    input.take(need);
    if (n > 0) this.output(frame, n, emit);
    if (last) this.endFrame();
    return true;
  }

  output(frame, n, emit) {
    this.checkTotal(this.total + n);
    const view = frame.win.buf.subarray(frame.win.pos, frame.win.pos + n);
    frame.advance(n);
    if (frame.contentSize !== null && frame.produced > frame.contentSize) {
      throw this.corrupt('a frame longer than its header says');
    }
    this.total += n;
    emit(frame.stable ? view : view.slice());
  }

  endFrame() {
    const frame = this.frame;
    if (frame.contentSize !== null && frame.produced !== frame.contentSize) {
      throw this.corrupt(`a frame of ${frame.produced} bytes where its header says ${frame.contentSize}`);
    }
    this.frames++;
    this.state = frame.hash ? 'checksum' : 'magic';
    if (!frame.hash) this.frame = null; // its window goes with it
  }

  readChecksum() {
    if (this.input.available < 4) return false;
    const stored = this.input.u32(0);
    const actual = this.frame.hash.digestLow32();
    if (stored !== actual) {
      throw zstdError('ZSTD_CHECKSUM', `residual-mt: ${this.name} is damaged: frame ${this.frames}'s zstd checksum does not match its content`);
    }
    this.input.take(4);
    this.frame = null;
    this.state = 'magic';
    return true;
  }
}

// A frame's window: the bytes decoded so far that matches may copy from,
// in `buf` up to `pos`. A frame whose size is known and fits decodes into
// one buffer of that size, never moved (`stable`: its blocks are handed out
// as views, uncopied), if that size is at most ZSTD_MAX_WINDOW or twice the
// window it needs anyway; otherwise the buffer keeps the last `keep` bytes and
// moves them to its start when the next block would not fit.
class Frame {
  constructor(window, contentSize, keep, checksum) {
    this.contentSize = contentSize;
    this.keep = keep;
    this.blockMax = Math.min(window, BLOCK_MAX);
    this.stable = contentSize !== null && contentSize <= Math.max(2 * keep + BLOCK_MAX, ZSTD_MAX_WINDOW);
    this.capacity = this.stable ? contentSize : keep + Math.max(keep, 1 << 20) + this.blockMax;
    const first = this.stable ? contentSize : Math.min(this.capacity, 1 << 20);
    this.win = { buf: new Uint8Array(first), pos: 0 };
    this.tables = new FrameTables();
    this.hash = checksum ? new Xxh64() : null;
    this.produced = 0;
  }

  // Decodes one block whose bytes start at bytes[at]: returns its size.
  decode(bytes, at, type, size) {
    const win = this.win;
    if (this.stable && win.buf.length < this.contentSize) {
      // A typed array whose buffer was transferred reads as empty.
      throw new TypeError('residual-mt: a zstd output chunk\'s buffer was transferred while the frame was decoding into it (copy chunks before transferring them)');
    }
    let room = this.blockMax;
    if (this.contentSize !== null) room = Math.min(room, this.contentSize - this.produced);
    if (win.pos + room > win.buf.length) this.makeRoom(room);
    if (type === 0) {
      if (size > room) throw new ZstdCorrupt('a frame longer than its header says');
      win.buf.set(bytes.subarray(at, at + size), win.pos);
      return size;
    }
    if (type === 1) {
      if (size > room) throw new ZstdCorrupt('an RLE block larger than its frame allows');
      win.buf.fill(bytes[at], win.pos, win.pos + size);
      return size;
    }
    return decodeBlock(bytes, at, at + size, this.tables, win, room);
  }

  // A window whose frame size is unknown grows to its capacity (a large
  // window is not taken up front for a small file), then slides.
  makeRoom(room) {
    const win = this.win;
    if (win.buf.length < this.capacity) {
      const grown = new Uint8Array(Math.min(this.capacity, Math.max(2 * win.buf.length, win.pos + room)));
      grown.set(win.buf.subarray(0, win.pos));
      win.buf = grown;
      if (win.pos + room <= grown.length) return;
    }
    const from = Math.max(0, win.pos - this.keep);
    win.buf.copyWithin(0, from, win.pos);
    win.pos -= from;
  }

  advance(n) {
    if (this.hash) this.hash.update(this.win.buf.subarray(this.win.pos, this.win.pos + n));
    this.win.pos += n;
    this.produced += n;
  }
}

// The input not yet used: bytes[start, start + available). A piece that
// arrives when nothing is left over is used in place, uncopied; a block that
// spans pieces is gathered in `own`, one buffer reused from block to block.
class Input {
  constructor() {
    this.bytes = new Uint8Array(0);
    this.start = 0;
    this.available = 0;
    this.own = null;
    this.consumed = 0;
  }

  append(chunk) {
    if (chunk.length === 0) return;
    if (this.available === 0) {
      this.bytes = chunk;
      this.start = 0;
      this.available = chunk.length;
      return;
    }
    const need = this.available + chunk.length;
    const rest = this.bytes.subarray(this.start, this.start + this.available);
    if (this.bytes === this.own && this.start + need <= this.own.length) {
      this.own.set(chunk, this.start + this.available);
    } else {
      if (!this.own || this.own.length < need) this.own = new Uint8Array(Math.max(need, 2 * this.available, 1 << 18));
      if (rest.buffer === this.own.buffer) this.own.copyWithin(0, this.start, this.start + this.available);
      else this.own.set(rest);
      this.own.set(chunk, this.available);
      this.bytes = this.own;
      this.start = 0;
    }
    this.available = need;
  }

  take(n) {
    this.start += n;
    this.available -= n;
    this.consumed += n;
  }

  byte(i) {
    return this.bytes[this.start + i];
  }

  // n (1 to 8) bytes at i, little-endian.
  uint(i, n) {
    let v = 0;
    for (let k = n - 1; k >= 0; k--) v = v * 256 + this.bytes[this.start + i + k];
    return v;
  }

  u32(i) {
    return this.uint(i, 4);
  }
}
