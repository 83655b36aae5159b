// Bounds on what a model's file may cost before it is used: every download
// stops at a bound (the size a manifest names, else the size a config's
// dimensions imply, else maxModelBytes), and every decompression streams and
// stops at one, so that no file (a gzip bomb, an endless response) can take
// the machine's memory. The one place a codec is named: CODECS.

import { MAX_MODEL_BYTES } from '../defaults.js';
import { makeError } from '../util/errors.js';

// Decompressors by name, each a TransformStream of bytes; a codec is one line
// here. (maxBytes: a decoder that can stop at the bound itself may.) zstd is
// our own decoder (zstd.js), loaded the first time a file needs it.
const CODECS = {
  gzip: () => new DecompressionStream('gzip'),
  'deflate-raw': () => new DecompressionStream('deflate-raw'),
  zstd: async ({ maxBytes }) => (await import('./zstd/zstd.js')).zstdDecompressStream({ maxOutputBytes: maxBytes }),
};

// The codec a file's first bytes name (gzip's and zstd's magic), or null.
export function codecOf(bytes) {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd) return 'zstd';
  return null;
}

export const CODEC_NAMES = Object.freeze(Object.keys(CODECS));

// A file larger than its bound: an OperationError naming the file and the
// bound; `size` what is known of its size (null: it passed the bound as it came).
export function tooLarge(name, maxBytes, size, why) {
  return makeError('OperationError', `residual-mt: ${name} is larger than its bound of ${maxBytes} bytes (${why})` +
    `${size === null ? '' : `: it has ${size} bytes`}; not the model's file, or raise the bound`);
}

// Checks maxModelBytes: undefined (MAX_MODEL_BYTES) or a positive integer
// below 2^53 (sizes are JavaScript numbers); returns the bound.
export function modelBound(maxModelBytes) {
  if (maxModelBytes === undefined) return MAX_MODEL_BYTES;
  if (!Number.isSafeInteger(maxModelBytes) || maxModelBytes <= 0) {
    throw new RangeError(`residual-mt: maxModelBytes must be a positive integer, got ${maxModelBytes}`);
  }
  return maxModelBytes;
}

// The chunks of `chunks` (an async iterable of Uint8Array), failing as soon
// as they, or the size the file announced (`size`), pass limit.maxBytes (read
// at each chunk: a bound may tighten while the file comes); leaving the loop
// cancels the source (a download: its connection closed). limit: { maxBytes,
// name, why }.
export async function* boundedChunks(chunks, limit, size = null) {
  let length = 0;
  for await (const chunk of chunks) {
    if (size > limit.maxBytes) throw tooLarge(limit.name, limit.maxBytes, size, limit.why);
    length += chunk.length;
    if (length > limit.maxBytes) throw tooLarge(limit.name, limit.maxBytes, null, limit.why);
    yield chunk;
  }
}

// The gzip trailer's size (ISIZE: the last member's size modulo 2^32): the
// whole output has at least that many bytes, so one over the bound is refused
// before anything is inflated.
function gzipDeclared(bytes) {
  if (bytes.length < 18) return 0;
  return new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true);
}

// Bytes (or a ReadableStream of them) decompressed by `codec` as a stream,
// into one Uint8Array of at most maxBytes: stopped (the stream cancelled) as
// soon as the output passes the bound; expectedBytes, where the container
// declares the size, must be the output's. Errors are OperationErrors naming
// `name`.
export async function decompressed(input, { codec, maxBytes, expectedBytes = null, name }) {
  if (!Object.hasOwn(CODECS, codec)) throw new TypeError(`residual-mt: unknown codec ${codec} (${CODEC_NAMES.join(', ')})`);
  const bound = expectedBytes ?? maxBytes;
  if (expectedBytes !== null && expectedBytes > maxBytes) throw tooLarge(name, maxBytes, expectedBytes, `its declared ${codec} size`);
  if (input instanceof Uint8Array && codec === 'gzip' && gzipDeclared(input) > bound) {
    const why = expectedBytes === null ? 'decompressed gzip, as its trailer says' : 'its declared gzip size; its trailer says more';
    throw tooLarge(name, bound, `at least ${gzipDeclared(input)}`, why);
  }
  const past = expectedBytes === null ? `decompressed ${codec}` : `its declared ${codec} size`;
  const reader = sliced(input).pipeThrough(await CODECS[codec]({ maxBytes: bound })).getReader();
  const parts = [];
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > bound) throw tooLarge(name, bound, null, past);
      parts.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    if (err.name === 'OperationError') throw err;
    // a decoder that stops at the bound itself (zstd's) says so by its code
    if (err.code === 'ZSTD_TOO_LARGE') throw tooLarge(name, bound, null, past);
    throw makeError('OperationError', `residual-mt: ${name}: a damaged ${codec} stream (${err.message})`);
  }
  if (expectedBytes !== null && length !== expectedBytes) {
    throw makeError('OperationError', `residual-mt: ${name}: ${length} bytes decompressed, ${expectedBytes} declared`);
  }
  return parts.length === 1 ? parts[0] : concat(parts);
}

// The input in slices of at most INPUT_SLICE bytes, each given when the
// decompressor asks for it: a decompressor may inflate a whole input chunk
// before its output can be read (Chromium's does), and deflate inflates at
// most ~1,032 times, so the output passes the bound by at most ~16 MB.
const INPUT_SLICE = 16384;
function sliced(input) {
  const reader = input instanceof Uint8Array ? null : input.getReader();
  let chunk = input instanceof Uint8Array ? input : new Uint8Array(0);
  return new ReadableStream({
    async pull(controller) {
      while (!chunk.length) {
        const next = await reader?.read();
        if (!next || next.done) return controller.close();
        chunk = next.value;
      }
      controller.enqueue(chunk.slice(0, INPUT_SLICE));
      chunk = chunk.subarray(INPUT_SLICE);
    },
    cancel: (reason) => reader?.cancel(reason),
  }, { highWaterMark: 0 });
}

// The parts' bytes one after another, in a new array.
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

// An upper bound on model.safetensors' size from a config.json's dimensions:
// every parameter a style may have (the decoder's cross-attention, separate
// embeddings and output layer, biases, layer norms, learned positions) in the
// widest dtype (F32), a lexical shortlist of up to SHORTLIST_PER_WORD targets
// a word on average (the shipped model's has 43), plus the header (JSON: at
// most HEADER_PER_TENSOR bytes a tensor; ours take about 110). Null when the
// config does not say (then maxModelBytes bounds it).
const HEADER_PER_TENSOR = 512;
const TENSORS_PER_LAYER = 40;
const SHORTLIST_PER_WORD = 256;
export function weightsBound(config) {
  const dims = ['d_model', 'ffn_dim', 'encoder_layers', 'decoder_layers', 'vocab_size'].map((k) => config?.[k]);
  if (!dims.every((d) => Number.isSafeInteger(d) && d > 0)) return null;
  const [D, F, enc, dec, V] = dims;
  const P = Number.isSafeInteger(config.max_positions) && config.max_positions > 0 ? config.max_positions : 0;
  const layer = 4 * D * D + 2 * D * F + 16 * D + F; // attention, FFN, their biases and norms
  const params = enc * layer + dec * (layer + 4 * D * D + 8 * D) + 3 * V * D + 2 * V + P * D + 8 * D + V * (SHORTLIST_PER_WORD + 1);
  const header = HEADER_PER_TENSOR * (TENSORS_PER_LAYER * (enc + dec) + 16) + 8;
  return 4 * params + header;
}
