// Checks that model files are what they claim: cheap checks of each file's
// kind (checkContent: not an HTML page, WebAssembly's magic, a safetensors
// header, a model's config.json), and each file against its entry in the
// model directory's manifest.json (SHA-256 and size) before it is used.

import { sha256Hex } from './cache.js';
import { CONFIG, MANIFEST, MODEL_FILES, TOKENIZER, WEIGHTS } from '../defaults.js';
import { timeStep } from '../util/env.js';
import { looksLikeHtml, open, operationError, readJson } from './files.js';

const textDecoder = new TextDecoder();

// Cheap checks that a file is what its name says.
export function checkContent(name, bytes, contentType, url) {
  const where = `${name} (${url})`;
  if (name !== CONFIG && name !== MANIFEST && looksLikeHtml(bytes, contentType)) {
    throw operationError(`residual-mt: ${where} is an HTML page, not the file: wrong URL, or a server that answers every path with its index page`);
  }
  if (name === 'residual-mt.wasm' || name.endsWith('.wasm')) {
    if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
      throw operationError(`residual-mt: ${where} is not a WebAssembly module`);
    }
  } else if (name === WEIGHTS) {
    const headerLength = bytes.length >= 8 ? Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)) : -1;
    if (headerLength <= 0 || headerLength + 8 > bytes.length || bytes[8] !== 0x7b) {
      throw operationError(`residual-mt: ${where} is not a safetensors file`);
    }
  } else if (name === CONFIG) {
    let config;
    try {
      config = JSON.parse(textDecoder.decode(bytes));
    } catch {
      throw operationError(`residual-mt: ${where} is not JSON${looksLikeHtml(bytes, contentType) ? ' (got an HTML page: wrong URL?)' : ''}`);
    }
    if (!config || typeof config !== 'object' || !('d_model' in config)) {
      throw operationError(`residual-mt: ${where} is not a residual-mt model config (no d_model)`);
    }
  }
}

// manifest.json of a model directory: { manifest, bytes, saved }, or null
// when it has none. Over the network the last one seen is kept (store, or a
// promise of it; `saved` resolves once it is), and used when the network is
// gone, so that a cached model loads offline.
export async function readManifest(base, { signal, store = null } = {}) {
  const url = new URL(MANIFEST, base);
  let file;
  try {
    file = await open(url, MANIFEST, signal);
    if (file.error) throw file.error;
  } catch (err) {
    const kept = err.name === 'NetworkError' ? await (await store)?.manifest(base.href) : null;
    if (!kept) throw err;
    return parseManifest(kept, url);
  }
  if (file.missing) return null;
  const bytes = await readJson(file, url);
  const parsed = parseManifest(bytes, url);
  const saved = Promise.resolve(store).then((opened) => opened?.saveManifest(base.href, bytes)).catch(() => {});
  return { ...parsed, saved };
}

export function parseManifest(bytes, url) {
  let manifest;
  try {
    manifest = JSON.parse(textDecoder.decode(bytes));
  } catch {
    throw operationError(`residual-mt: ${url} is not valid JSON`);
  }
  if (!manifest || typeof manifest.files !== 'object') throw operationError(`residual-mt: ${url} has no "files" object`);
  for (const name of MODEL_FILES) {
    const entry = manifest.files[name];
    if (name !== TOKENIZER && !entry) throw operationError(`residual-mt: ${url} does not list ${name}`);
    if (entry && !/^[0-9a-f]{64}$/.test(entry.sha256 ?? '')) throw operationError(`residual-mt: ${url}: bad sha256 for ${name}`);
  }
  return { manifest, bytes };
}

// Whether bytes (or the engine's digest of them: { sha256, size }) match a
// manifest entry ({ sha256, size }); throws an OperationError naming the
// file when they do not.
export async function checkEntry(f, bytes) {
  const size = bytes.sha256 ? bytes.size : bytes.length;
  if (typeof f.entry.size === 'number' && f.entry.size !== size) {
    throw operationError(`residual-mt: ${f.name} (${f.url}) has ${size} bytes but manifest.json says ${f.entry.size}: ` +
      'incomplete download, or files from two versions of the model');
  }
  const hash = bytes.sha256 ?? await sha256Hex(bytes);
  if (hash !== f.entry.sha256) {
    throw operationError(`residual-mt: ${f.name} (${f.url}) failed SHA-256 verification against manifest.json ` +
      `(got ${hash.slice(0, 12)}…, expected ${f.entry.sha256.slice(0, 12)}…): corrupt download or mixed model versions`);
  }
}

// Checks bytes against their manifest entry. The digest starts now, on a copy
// of the bytes (Web Crypto copies them when called), so they may be handed on
// (transferred to a worker) while it runs.
export function verifyTimed(f, bytes) {
  const checked = timeStep(`sha256 ${f.name}`);
  return checkEntry(f, bytes).finally(checked);
}

