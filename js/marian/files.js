// Marian's files read from bytes, each as models/convert_marian.py reads it
// (js/marian/convert.js maps them; the two converters write byte-identical model
// directories: tests/marian-js.test.js): .bin (marian-dev
// src/common/binary.cpp), .npz (a zip of .npy arrays), the binary lexical
// shortlist (data/shortlist.cpp), SentencePiece models (their pieces, and
// one model built from an OPUS-MT vocab.yml and its two spm), and the gzip
// Firefox Translations ships them in.

import { codecOf, decompressed, tooLarge } from '../load/bounded.js';
import { MAX_MODEL_BYTES } from '../defaults.js';
import { makeError } from '../util/errors.js';

export const TYPE_INT8 = 0x0101;
export const TYPE_UINT8 = 0x0201;
export const TYPE_FLOAT32 = 0x0404;
export const TYPE_INTGEMM8 = 0x4101;
const TYPE_NAMES = { 0x0102: 'int16', 0x0104: 'int32', 0x0402: 'float16', 0x0408: 'float64', 0x4102: 'intgemm16' };

// Size limits: every size read from a file is checked against them before use.
const MAX_ITEMS = 100000;
const MAX_DIMS = 8;
const MAX_NAME = 4096;

// What the converter cannot read or map: the files came, the engine cannot use them.
export const conversionError = (message) => makeError('OperationError', `residual-mt: ${message}`);

const utf8 = new TextDecoder();
const view = (bytes) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export function typeName(type) {
  return TYPE_NAMES[type] ?? `0x${type.toString(16)}`;
}

// Bytes, decompressed when they start with gzip's or zstd's magic: streamed,
// and stopped at maxBytes (bounded.js decompressed), or at expectedBytes
// where a record declares the size; `name` names the file in errors.
export async function unpackedBytes(bytes, { maxBytes = MAX_MODEL_BYTES, expectedBytes = null, name = 'the model file' } = {}) {
  const codec = codecOf(bytes);
  return codec ? decompressed(bytes, { codec, maxBytes, expectedBytes, name }) : bytes;
}

// { name, type, shape, data } of each item of Marian's binary format, by name.
export function readBin(data) {
  const dv = view(data);
  const u64 = (pos) => {
    if (pos + 8 > data.length) throw conversionError('model.bin: truncated header');
    return Number(dv.getBigUint64(pos, true));
  };
  if (u64(0) !== 1) throw conversionError(`model.bin: binary format version ${u64(0)} (only version 1 is known)`);
  const count = u64(8);
  if (count > MAX_ITEMS) throw conversionError(`model.bin: ${count} items is not a plausible model`);
  let pos = 16;
  const headers = [];
  for (let i = 0; i < count; i++, pos += 32) headers.push([0, 1, 2, 3].map((k) => u64(pos + 8 * k)));
  const names = headers.map(([nameLength]) => {
    if (nameLength < 1 || nameLength > MAX_NAME || pos + nameLength > data.length) throw conversionError('model.bin: bad item name');
    const name = utf8.decode(data.subarray(pos, pos + nameLength - 1));
    pos += nameLength;
    return name;
  });
  const shapes = headers.map(([, , dims]) => {
    if (dims > MAX_DIMS || pos + 4 * dims > data.length) throw conversionError('model.bin: bad item shape');
    const shape = Array.from({ length: dims }, (_, k) => dv.getInt32(pos + 4 * k, true));
    pos += 4 * dims;
    return shape;
  });
  pos += 8 + u64(pos);
  const items = new Map();
  headers.forEach(([, type, , length], i) => {
    const name = names[i], shape = shapes[i];
    if (pos + length > data.length) throw conversionError(`model.bin: item ${name} runs past the end of the file`);
    if (shape.some((d) => d < 0)) throw conversionError(`model.bin: item ${name} has a negative dimension`);
    items.set(name, { name, type, shape, data: data.subarray(pos, pos + length) });
    pos += length;
  });
  return items;
}

const NPY_TYPES = { '<f4': TYPE_FLOAT32, '|i1': TYPE_INT8, '<i1': TYPE_INT8, '|u1': TYPE_UINT8 };

// The items of a Marian .npz (a zip of .npy files; stored or deflated), its
// deflated entries inflated to the sizes its directory declares, which
// together may not pass maxBytes.
export async function readNpz(data, { maxBytes = MAX_MODEL_BYTES } = {}) {
  const items = new Map(), entries = zipEntries(data).filter((entry) => entry.name.endsWith('.npy'));
  const declared = entries.reduce((n, entry) => n + entry.size, 0);
  if (declared > maxBytes) throw tooLarge('model.npz', maxBytes, declared, 'the sizes its zip directory declares');
  for (const entry of entries) {
    const raw = entry.method === 8
      ? await decompressed(entry.data, { codec: 'deflate-raw', maxBytes, expectedBytes: entry.size, name: `model.npz: ${entry.name}` })
      : entry.data;
    const item = npyItem(entry.name, raw);
    items.set(item.name, item);
  }
  return items;
}

// The entries of a zip file, from its central directory: { name, method, size (unpacked), data }.
function zipEntries(data) {
  const dv = view(data), bad = () => conversionError('model.npz: not a zip file (or a damaged one)');
  let end = data.length - 22;
  while (end >= 0 && dv.getUint32(end, true) !== 0x06054b50) end--;
  if (end < 0) throw bad();
  const count = dv.getUint16(end + 10, true);
  let pos = dv.getUint32(end + 16, true);
  const entries = [];
  for (let i = 0; i < count; i++) {
    if (pos + 46 > data.length || dv.getUint32(pos, true) !== 0x02014b50) throw bad();
    const method = dv.getUint16(pos + 10, true), size = dv.getUint32(pos + 20, true), unpacked = dv.getUint32(pos + 24, true);
    const nameLength = dv.getUint16(pos + 28, true), extra = dv.getUint16(pos + 30, true), comment = dv.getUint16(pos + 32, true);
    const local = dv.getUint32(pos + 42, true);
    const name = utf8.decode(data.subarray(pos + 46, pos + 46 + nameLength));
    if (method !== 0 && method !== 8) throw conversionError(`model.npz: ${name} is compressed with method ${method} (stored and deflate are read)`);
    if (method === 0 && unpacked !== size) throw bad();
    if (local + 30 > data.length) throw bad();
    const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    if (start + size > data.length) throw bad();
    entries.push({ name, method, size: unpacked, data: data.subarray(start, start + size) });
    pos += 46 + nameLength + extra + comment;
  }
  return entries;
}

// One .npy array as an item (its header: a Python dict literal of descr, fortran_order, shape).
function npyItem(file, raw) {
  const what = `model.npz: ${file}`;
  if (raw[0] !== 0x93 || utf8.decode(raw.subarray(1, 6)) !== 'NUMPY') {
    throw conversionError(`${what} is not a .npy array`);
  }
  const major = raw[6], dv = view(raw), start = major === 1 ? 10 : 12;
  if (raw.length < start) throw conversionError(`${what}: truncated .npy header`);
  const headerLength = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  if (start + headerLength > raw.length) throw conversionError(`${what}: the .npy header runs past the end of the array`);
  const header = new TextDecoder('latin1').decode(raw.subarray(start, start + headerLength));
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const shape = shapeText?.split(',').map((d) => d.trim()).filter((d) => d !== '').map(Number);
  if (!shape || !shape.every((d) => Number.isInteger(d) && d >= 0 && d < 2 ** 31)) {
    throw conversionError(`${what}: .npy header without a valid shape`);
  }
  if (/'fortran_order':\s*True/.test(header)) throw conversionError(`${what}: Fortran-ordered arrays are not supported`);
  const name = file.slice(0, -4);
  if (!(descr in NPY_TYPES)) throw conversionError(`${what}: ${name} has dtype ${descr} (float32 and int8 are supported)`);
  return { name, type: NPY_TYPES[descr], shape, data: raw.subarray(start + headerLength) };
}

const SHORTLIST_MAGIC = 0xf11a48d5013417f5n;

// Bergamot's binary lexical shortlist: six u64 (magic, checksum, firstNum,
// bestNum, offsets length, targets length), u64 offsets, u32 target ids.
// { first, offsets, targets } (Int32Arrays), checked as convert_marian.py does.
export function readShortlist(data, vocabSize) {
  if (data.length < 48) throw conversionError('shortlist: too short for a header');
  const dv = view(data), u64 = (i) => dv.getBigUint64(8 * i, true);
  if (u64(0) !== SHORTLIST_MAGIC) {
    throw conversionError('shortlist: not a binary lexical shortlist (wrong magic; text shortlists are not supported)');
  }
  const nOffsets = Number(u64(4)), nTargets = Number(u64(5));
  if (nOffsets !== vocabSize + 1) {
    throw conversionError(`shortlist: ${nOffsets} offsets for a vocabulary of ${vocabSize} (expected ${vocabSize + 1})`);
  }
  if (nTargets > 2 ** 31 - 1 || 48 + 8 * nOffsets + 4 * nTargets !== data.length) {
    throw conversionError(`shortlist: the header's sizes do not match the file's ${data.length} bytes`);
  }
  const first = Math.min(Number(u64(2)), vocabSize); // Marian takes the ids below min(firstNum, V)
  const offsets = new Int32Array(nOffsets), targets = new Int32Array(nTargets);
  let rising = true;
  for (let i = 0; i < nOffsets; i++) {
    const offset = dv.getBigUint64(48 + 8 * i, true);
    rising &&= offset <= BigInt(nTargets) && (i === 0 ? offset === 0n : Number(offset) >= offsets[i - 1]);
    offsets[i] = Number(offset);
  }
  if (!rising || offsets[nOffsets - 1] !== nTargets) throw conversionError('shortlist: offsets must rise from 0 to the number of targets');
  for (let i = 0; i < nTargets; i++) {
    const target = dv.getUint32(48 + 8 * nOffsets + 4 * i, true);
    if (target >= vocabSize) throw conversionError(`shortlist: a target id is outside the vocabulary (${vocabSize})`);
    targets[i] = target;
  }
  return { first, offsets, targets };
}
