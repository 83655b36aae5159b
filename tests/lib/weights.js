// Test helpers for safetensors files: read one, write one, and rewrite a
// model's weights (widened to float32, edited, stored as F32 or BF16).

// A safetensors file from header text and a data section.
export function safetensors(headerText, data = Buffer.alloc(0)) {
  const text = Buffer.from(headerText);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(text.length));
  return Buffer.concat([len, text, data]);
}

// { header, data } of a safetensors file.
export function readSafetensors(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString()), data: bytes.subarray(8 + n) };
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15); // the fixtures hold no Inf or NaN
}

// Every tensor of `weights` as float32, passed through edit(name, Float32Array)
// (which may also add tensors: extra[name] = { shape, values }), stored as
// dtype 'F32' or 'BF16' (the top 16 bits: round the values first).
export function rewriteWeights(weights, dtype, edit = () => {}) {
  const { header, data: raw } = readSafetensors(weights);
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const bytes = raw.subarray(info.data_offsets[0], info.data_offsets[1]);
    const values = info.dtype === 'F32' ? new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))
      : Float32Array.from({ length: bytes.length / 2 }, (_, i) => halfToFloat(bytes.readUInt16LE(2 * i)));
    tensors[name] = { shape: info.shape, values };
  }
  for (const [name, tensor] of Object.entries({ ...tensors })) edit(name, tensor.values, tensors);
  const out = {};
  const chunks = [];
  let offset = 0;
  for (const [name, { shape, values }] of Object.entries(tensors)) {
    const data = dtype === 'F32' ? Buffer.from(values.buffer, values.byteOffset, values.byteLength)
      : Buffer.from(Uint16Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length), (b) => b >>> 16).buffer);
    out[name] = { dtype, shape, data_offsets: [offset, offset + data.length] };
    chunks.push(data);
    offset += data.length;
  }
  return safetensors(JSON.stringify(out), Buffer.concat(chunks));
}

// bfloat16 rounding (to nearest even) of every value, in place.
export function roundToBf16(name, values) {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < bits.length; i++) bits[i] = ((bits[i] + 0x7fff + ((bits[i] >>> 16) & 1)) & 0xffff0000) >>> 0;
}
