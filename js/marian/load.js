// Rule of js/marian/: Marian models (OPUS-MT, Firefox Translations) turned
// into ours, and pulled from Firefox's registry. Imports load/ and util/.
//
// Marian files straight from URLs or bytes: createTranslator({ model: {
// marian: { model, vocab, shortlist } } }). Each file is downloaded with
// progress (as a model directory's files are: loader.js), checked against
// its sha256 when one is given, decompressed when it is gzip's or zstd's, and converted
// in memory once (marian.js); the converted model is kept in the model cache
// (cache.js) as a model directory would be: under the SHA-256 of a manifest
// of its three files, found by the conversion's key (the SHA-256 of the
// inputs' SHA-256 and the options). With a sha256 for every file that key is
// known before anything downloads, so a kept conversion loads with no
// download at all; without, the files download (the HTTP cache may answer)
// and only the conversion is saved, and offline the last conversion of
// those URLs is used. A file may also give its size and, when it comes
// compressed (gzip, or zstd as Firefox's registry serves it: registry.js), the
// size and SHA-256 of its decompressed bytes, each checked (an OperationError
// naming the file).

import { modelBound } from '../load/bounded.js';
import { cached, modelStore, sha256Hex } from '../load/cache.js';
import { CONFIG, MAX_MODEL_BYTES, TOKENIZER, WEIGHTS } from '../defaults.js';
import { makeError } from '../util/errors.js';
import { givenEngine, startEngine } from '../load/engine-fetch.js';
import { openUrl, toUrl } from '../load/files.js';
import { convertMarian } from './convert.js';
import { unpackedBytes } from './files.js';

// The files a Marian model may have (the option's keys), what each is, and
// the conversion's version (a new one is a new cache key).
const ROLES = { model: 'model', vocab: 'vocabulary', targetVocab: 'target vocabulary', shortlist: 'shortlist', sourceSpm: 'source spm', targetSpm: 'target spm' };
const FORMAT = 'residual-mt/marian/1';
const FILES = [CONFIG, WEIGHTS, TOKENIZER];

const isBytes = (v) => v instanceof Uint8Array || v instanceof ArrayBuffer;
const toBytes = (v) => (v instanceof ArrayBuffer ? new Uint8Array(v) : v);

// One file of the option: a URL or a path, bytes, or { url, sha256, size,
// name, decompressed: { sha256, size } } / { bytes, sha256, name } (name: the
// file's, for messages and config.json's converted_from).
async function source(role, value) {
  const given = value && typeof value === 'object' && !isBytes(value) && !(value instanceof URL) ? value : { [isBytes(value) ? 'bytes' : 'url']: value };
  const { url, bytes, sha256 = null, name } = given;
  checkHash(sha256, `marian.${role}.sha256`);
  const sizes = { size: checkSize(given.size, `marian.${role}.size`), decompressed: decompressedOf(given.decompressed, role) };
  if (isBytes(bytes)) return { role, bytes: toBytes(bytes), sha256: sha256 ?? await sha256Hex(toBytes(bytes)), name: name ?? role, given: sha256, ...sizes };
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError(`residual-mt: marian.${role} must be a URL, a path or bytes`);
  const href = await toUrl(url);
  return { role, url: href, sha256, given: sha256, name: name ?? decodeURIComponent(href.pathname.split('/').pop() || role), ...sizes };
}

function checkHash(sha256, what) {
  if (sha256 !== null && !/^[0-9a-f]{64}$/.test(sha256)) throw new TypeError(`residual-mt: ${what} must be 64 lowercase hex digits`);
}

// A size given for a file: null, or an integer up to MAX_MODEL_BYTES.
function checkSize(size, what) {
  if (size === undefined || size === null) return null;
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_MODEL_BYTES) {
    throw new RangeError(`residual-mt: ${what} must be an integer from 0 to ${MAX_MODEL_BYTES}, got ${size}`);
  }
  return size;
}

function decompressedOf(decompressed, role) {
  if (decompressed === undefined || decompressed === null) return null;
  checkHash(decompressed.sha256 ?? null, `marian.${role}.decompressed.sha256`);
  return { sha256: decompressed.sha256 ?? null, size: checkSize(decompressed.size, `marian.${role}.decompressed.size`) };
}

// The option checked: { files: [source], sourceLanguage, targetLanguage, key (when every sha256 is known), href }.
export async function marianSources({ marian }, { sourceLanguage, targetLanguage }) {
  if (!marian || typeof marian !== 'object') throw new TypeError('residual-mt: model.marian must be an object of files');
  for (const key of Object.keys(marian)) if (!(key in ROLES)) throw new TypeError(`residual-mt: model.marian has no file "${key}" (it takes ${Object.keys(ROLES).join(', ')})`);
  if (!marian.model || !marian.vocab) throw new TypeError('residual-mt: model.marian needs model and vocab');
  const files = await Promise.all(Object.keys(ROLES).filter((role) => marian[role]).map((role) => source(role, marian[role])));
  const m = { files, sourceLanguage, targetLanguage };
  m.key = files.every((f) => f.sha256) ? await conversionKey(m) : null;
  // What hosts and the cache know it by: its key, else its URLs (a different model there is a new download).
  m.href = `residual-mt-marian:${m.key ?? await sha256Hex(new TextEncoder().encode(JSON.stringify(describe(m, false))))}`;
  return m;
}

function describe(m, withHashes) {
  return { format: FORMAT, languages: [m.sourceLanguage, m.targetLanguage],
    files: Object.fromEntries(m.files.map((f) => [f.role, withHashes ? f.sha256 : f.url?.href ?? f.sha256])) };
}

const conversionKey = async (m) => sha256Hex(new TextEncoder().encode(JSON.stringify(describe(m, true))));

// Downloads the files that are URLs (progress over all of them, each within
// its given size, else maxBytes), checks each against its given size and
// sha256, and hashes those without one (the conversion's key).
async function download(m, { signal, counted, verify, maxBytes }) {
  const limit = (f) => ({ maxBytes: f.size ?? maxBytes, name: `the Marian ${ROLES[f.role]} file ${f.name}`,
    why: f.size === null ? 'maxModelBytes' : 'the size given for it' });
  const opened = await Promise.all(m.files.map(async (f) => (f.bytes ? null : openUrl(f.url, `the Marian ${ROLES[f.role]} file ${f.name}`, signal, limit(f)))));
  counted.total(opened.reduce((n, o, i) => n + (o ? m.files[i].size ?? o.size ?? 0 : 0), 0));
  try {
    return await Promise.all(m.files.map(async (f, i) => {
      if (!opened[i]) return f.bytes;
      const bytes = await opened[i].read((n) => counted(f.name, n));
      if (f.size !== null && bytes.length !== f.size) throw wrongFile(f, `${bytes.length} bytes of the ${f.size} it should have (a truncated download)`);
      const hash = await sha256Hex(bytes);
      if (verify && f.given && hash !== f.given) {
        throw makeError('OperationError', `residual-mt: ${f.name}: ${f.url} failed SHA-256 verification (got ${hash.slice(0, 12)}…, ` +
          `expected ${f.given.slice(0, 12)}…): a corrupt download, or not the file the sha256 names`);
      }
      f.sha256 = hash;
      return bytes;
    }));
  } catch (err) {
    for (const o of opened) o?.cancel();
    throw err;
  }
}

const wrongFile = (f, what) => makeError('OperationError', `residual-mt: ${f.name}${f.url ? ` (${f.url})` : ''} has ${what}`);

// A file's bytes decompressed (zstd, gzip, or as they are) within the
// decompressed size given for it (else maxBytes), checked against that size
// and the SHA-256 given.
export async function unpacked(f, bytes, { verify = true, maxBytes = MAX_MODEL_BYTES } = {}) {
  const want = f.decompressed, name = `the Marian ${ROLES[f.role] ?? 'model'} file ${f.name}`;
  const out = await unpackedBytes(bytes, { maxBytes: want?.size ?? maxBytes, expectedBytes: want?.size ?? null, name });
  if (!want) return out;
  if (want.size !== null && out.length !== want.size) throw wrongFile(f, `${out.length} bytes decompressed, not the ${want.size} it should have`);
  const hash = verify && want.sha256 ? await sha256Hex(out) : null;
  if (hash && hash !== want.sha256) {
    throw makeError('OperationError', `residual-mt: ${f.name} failed SHA-256 verification once decompressed (got ${hash.slice(0, 12)}…, ` +
      `expected ${want.sha256.slice(0, 12)}…)`);
  }
  return out;
}

// The converted model as the cache keeps it: a manifest of its three files.
async function manifestOf(converted) {
  const files = {};
  for (const name of FILES) files[name] = { sha256: await sha256Hex(converted[name]), size: converted[name].length };
  return new TextEncoder().encode(`${JSON.stringify({ files }, null, 2)}\n`);
}

// A kept conversion under `pointer` (store.manifest's key): { config, weights,
// spm, checkWeights, dropKept }, or null. The weights may be a file the
// engine reads itself (kept), checked by checkWeights as loader.js does.
async function fromStore(store, pointer) {
  const manifestBytes = await store.manifest(pointer);
  if (!manifestBytes) return null;
  const hash = await sha256Hex(manifestBytes), { files } = JSON.parse(new TextDecoder().decode(manifestBytes));
  const check = async (name, bytes) => bytes && (bytes.sha256 ?? await sha256Hex(bytes)) === files[name].sha256;
  const [config, spm] = await Promise.all([CONFIG, TOKENIZER].map((name) => store.get(hash, name)));
  if (!await check(CONFIG, config) || !await check(TOKENIZER, spm)) return null;
  const kept = await store.keptFile?.(hash, WEIGHTS, files[WEIGHTS].size);
  const weights = kept ?? await store.get(hash, WEIGHTS);
  if (!kept && !await check(WEIGHTS, weights)) return null;
  const dropKept = () => store.drop(hash, WEIGHTS);
  const checkWeights = kept ? async (w) => {
    if (!await check(WEIGHTS, w)) throw Object.assign(makeError('OperationError', 'residual-mt: the kept Marian conversion is damaged'), { cachedCopy: true });
  } : null;
  return { config: new TextDecoder().decode(config), weights, spm, checkWeights, dropKept };
}

// Keeps a conversion: its files under its manifest's hash, found by `pointers`.
async function keep(store, converted, pointers) {
  const manifestBytes = await manifestOf(converted), hash = await sha256Hex(manifestBytes);
  for (const name of FILES) await store.put(hash, name, converted[name]);
  for (const pointer of pointers) await store.saveManifest(pointer, manifestBytes);
}

// Whether a conversion of m (marianSources') is kept: only known when every file has its sha256.
export async function isConverted(m, cache = true) {
  const urls = m.files.filter((f) => f.url).map((f) => f.url);
  if (!m.key || !urls.length || !urls.every((u) => cached(u, cache))) return false;
  const store = await modelStore(urls[0], cache);
  return !!await store?.manifest(`${FORMAT}:${m.key}`);
}

// Loads the engine and a Marian model (marianSources' m) for host/models.js, with
// the answer loader.js loadFiles gives for a model directory.
export async function loadMarianFiles(m, { wasm, signal, onProgress = () => {}, verify = true, cache = true, onEngine = null, cachedCopies = true,
  maxModelBytes } = {}) {
  const maxBytes = modelBound(maxModelBytes);
  signal?.throwIfAborted();
  const engine = startEngine(wasm, signal, onEngine);
  const urls = m.files.filter((f) => f.url).map((f) => f.url);
  const store = urls.length && urls.every((u) => cached(u, cache)) ? await modelStore(urls[0], cache) : null;
  let loaded = 0, total = 0;
  const counted = (file, n) => {
    loaded += n;
    onProgress({ loaded, total: Math.max(total, loaded), file });
  };
  counted.total = (n) => { total += n; };
  const engineDone = engine?.then(({ size }) => counted('residual-mt.wasm', size));
  let model = cachedCopies && store && m.key ? await fromStore(store, `${FORMAT}:${m.key}`) : null;
  if (!model) model = await convertedModel(m, { store, signal, counted, verify, cachedCopies, onProgress, maxBytes });
  const got = await engine;
  await engineDone;
  return { wasm: got?.wasm ?? givenEngine(wasm), ...model, manifest: null, manifestBytes: null, bytes: loaded,
    checkWeights: model.checkWeights ?? null, keep: async () => {}, dropKept: async () => model.dropKept?.() };
}

// Downloads and converts (or, offline, finds the last conversion of these URLs).
async function convertedModel(m, { store, signal, counted, verify, cachedCopies, onProgress, maxBytes }) {
  onProgress({ loaded: 0, total: 0, file: null });
  let inputs;
  try {
    inputs = await download(m, { signal, counted, verify, maxBytes });
  } catch (err) {
    const kept = err.name === 'NetworkError' && store && cachedCopies ? await fromStore(store, `${FORMAT}:${m.href}`) : null;
    if (kept) return kept;
    throw err;
  }
  const key = `${FORMAT}:${await conversionKey(m)}`;
  const kept = store && cachedCopies ? await fromStore(store, key) : null;
  if (kept) return kept;
  // One file at a time: a bomb among them is stopped before the next is
  // decompressed, and each file's compressed bytes are let go once it is, so
  // that the conversion never holds a compressed file beside its output.
  const files = {};
  for (const [i, f] of m.files.entries()) {
    files[f.role] = await unpacked(f, inputs[i], { verify, maxBytes });
    inputs[i] = null;
  }
  const model = m.files.find((f) => f.role === 'model');
  const out = await convertMarian(files, { file: model.name, sourceLanguage: m.sourceLanguage, targetLanguage: m.targetLanguage, maxBytes });
  const converted = { [CONFIG]: new TextEncoder().encode(out.config), [WEIGHTS]: out.weights, [TOKENIZER]: out.spm };
  // Kept before the engine has them (its worker takes the weights' memory).
  if (store) await keep(store, converted, [key, `${FORMAT}:${m.href}`]).catch(() => {});
  return { config: out.config, weights: out.weights, spm: out.spm };
}
