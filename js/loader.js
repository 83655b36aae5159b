// Fetches the engine (wasm) and a model directory (config.json,
// model.safetensors, spm.model): with fetch for URLs, with the file system in
// Node for paths and file: URLs. Reports progress in bytes, checks every file
// against the directory's manifest.json (SHA-256 and size, Web Crypto), and
// says clearly what went wrong: HTTP status, wrong content, corrupt file.

import { DEFAULT_WASM, MANIFEST, MODEL_FILES, defaultModelUrls, packageUrl } from './defaults.js';

export function isNode() {
  return typeof process !== 'undefined' && !!process.versions?.node && typeof window === 'undefined';
}

// A module with one v128 instruction: validates only where WASM SIMD works.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65,
  0, 253, 15, 253, 98, 11]);

// What the runtime lacks for the engine, or null when nothing.
export function missingFeatures() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') {
    return 'WebAssembly is not available in this JavaScript engine';
  }
  try {
    if (!WebAssembly.validate(SIMD_PROBE)) {
      return 'this browser lacks WebAssembly SIMD (fixed-width 128-bit SIMD: Chrome/Edge 91+, Firefox 89+, Safari 16.4+)';
    }
  } catch {
    return 'this browser lacks WebAssembly SIMD';
  }
  return null;
}

export function notSupported(message) {
  return makeError('NotSupportedError', `residual-mt: ${message}`);
}

export function makeError(name, message) {
  if (typeof DOMException === 'function') return new DOMException(message, name);
  const err = new Error(message);
  err.name = name;
  return err;
}

// A file location as a URL: strings are paths in Node, URLs relative to the page in browsers.
export async function toUrl(source) {
  if (source instanceof URL) return new URL(source.href);
  if (typeof source !== 'string') throw new TypeError('residual-mt: expected a URL or a path');
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source);
  if (isNode()) {
    const { pathToFileURL } = await import('node:url');
    return pathToFileURL(source);
  }
  return new URL(source, globalThis.document?.baseURI ?? globalThis.location?.href);
}

// A model location as a URL; strings are paths in Node, URLs relative to the
// page in browsers. Directory URLs end in "/".
export async function toLocation(model) {
  if (!(model instanceof URL) && typeof model !== 'string') throw new TypeError('residual-mt: model must be a URL or a directory path');
  const url = await toUrl(model);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function isFileUrl(url) {
  return url.protocol === 'file:';
}

async function fileExists(url) {
  const { stat } = await import('node:fs/promises');
  try {
    return (await stat(url)).isFile();
  } catch {
    return false;
  }
}

// Finds the default model: the first of DEFAULT_MODELS that exists. Over
// HTTP the answer is kept for the page's lifetime (one probe per page load).
let defaultOverHttp = null;
export function resolveDefaultModel({ signal } = {}) {
  if (isFileUrl(defaultModelUrls()[0])) return findDefaultModel(signal);
  defaultOverHttp ??= findDefaultModel();
  defaultOverHttp.catch(() => { defaultOverHttp = null; });
  if (!signal) return defaultOverHttp;
  return Promise.race([defaultOverHttp, new Promise((_, reject) => {
    signal.throwIfAborted();
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  })]);
}

async function findDefaultModel(signal) {
  const tried = [];
  for (const url of defaultModelUrls()) {
    tried.push(url.href);
    if (isFileUrl(url)) {
      if (await fileExists(new URL('config.json', url))) return url;
      continue;
    }
    try {
      // config.json is in every model directory (manifest.json may not be).
      const response = await fetch(new URL('config.json', url), { signal });
      await response.body?.cancel().catch(() => {});
      if (response.ok) return url;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // offline and not cached: try the next one
    }
  }
  throw new Error(`residual-mt: no default model found (looked in ${tried.join(', ')}); pass { model: URL or directory }`);
}

export function defaultWasmUrl() {
  return packageUrl(DEFAULT_WASM);
}

// ---- reading files

function describeFetchError(err, url, what) {
  return new Error(`residual-mt: cannot download ${what} from ${url}: ${err.message}` +
    ' (network error: offline, server down or blocked by CORS)');
}

// Opens a file for reading: { size (or null), read: async iterator of Uint8Array }.
async function open(url, what, signal) {
  if (isFileUrl(url)) {
    const fs = await import('node:fs');
    let size;
    try {
      size = (await fs.promises.stat(url)).size;
    } catch (err) {
      if (err.code === 'ENOENT') return { missing: true, message: `residual-mt: ${what} not found: ${decodeURIComponent(url.pathname)}` };
      throw new Error(`residual-mt: cannot read ${what} ${decodeURIComponent(url.pathname)}: ${err.message}`);
    }
    return {
      size,
      contentType: null,
      async *chunks() {
        for await (const chunk of fs.createReadStream(url, { highWaterMark: 1 << 20, signal })) yield chunk;
      },
    };
  }
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw describeFetchError(err, url, what);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    const message = `residual-mt: downloading ${what} from ${url} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    return response.status === 404 ? { missing: true, message } : { error: new Error(message) };
  }
  const length = Number(response.headers.get('content-length'));
  const encoded = response.headers.get('content-encoding');
  return {
    cancel: () => response.body?.cancel().catch(() => {}),
    size: Number.isFinite(length) && length > 0 && !encoded ? length : null,
    contentType: response.headers.get('content-type'),
    async *chunks() {
      if (!response.body) {
        yield new Uint8Array(await response.arrayBuffer());
        return;
      }
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        throw describeFetchError(err, url, what);
      } finally {
        reader.releaseLock?.();
      }
    },
  };
}

// Reads a whole file into one exactly-sized ArrayBuffer (transferable to a
// worker); onBytes(n) after each chunk. `size`, when known, saves a copy.
async function readAll(file, onBytes, size = file.size) {
  const parts = [];
  let length = 0;
  let out = size > 0 ? new Uint8Array(size) : null;
  for await (const chunk of file.chunks()) {
    const bytes = chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);
    if (out && length + bytes.length <= out.length) out.set(bytes, length);
    else {
      if (out) parts.push(out.subarray(0, length)); // longer than announced
      out = null;
      parts.push(bytes);
    }
    length += bytes.length;
    onBytes(bytes.length);
  }
  if (out && length === out.length) return out;
  if (out) return out.slice(0, length); // shorter than announced
  out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw notSupported('Web Crypto (crypto.subtle) is not available, so the model cannot be verified: ' +
      'serve the page over https or from localhost, or pass { verify: false }');
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const textDecoder = new TextDecoder();

function looksLikeHtml(bytes, contentType) {
  if (contentType && /^text\/html/i.test(contentType)) return true;
  const head = textDecoder.decode(bytes.subarray(0, 64)).trimStart().toLowerCase();
  return head.startsWith('<!doctype') || head.startsWith('<html');
}

// Cheap checks that a file is what its name says.
function checkContent(name, bytes, contentType, url) {
  const where = `${name} (${url})`;
  if (name !== 'config.json' && name !== MANIFEST && looksLikeHtml(bytes, contentType)) {
    throw new Error(`residual-mt: ${where} is an HTML page, not the file: wrong URL, or a server that answers every path with its index page`);
  }
  if (name === 'residual-mt.wasm' || name.endsWith('.wasm')) {
    if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
      throw new Error(`residual-mt: ${where} is not a WebAssembly module`);
    }
  } else if (name === 'model.safetensors') {
    const headerLength = bytes.length >= 8 ? Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)) : -1;
    if (headerLength <= 0 || headerLength + 8 > bytes.length || bytes[8] !== 0x7b) {
      throw new Error(`residual-mt: ${where} is not a safetensors file`);
    }
  } else if (name === 'config.json') {
    let config;
    try {
      config = JSON.parse(textDecoder.decode(bytes));
    } catch {
      throw new Error(`residual-mt: ${where} is not JSON${looksLikeHtml(bytes, contentType) ? ' (got an HTML page: wrong URL?)' : ''}`);
    }
    if (!config || typeof config !== 'object' || !('d_model' in config)) {
      throw new Error(`residual-mt: ${where} is not a residual-mt model config (no d_model)`);
    }
  }
}

export async function readManifest(base, { signal } = {}) {
  const url = new URL(MANIFEST, base);
  const file = await open(url, MANIFEST, signal);
  if (file.missing) return null;
  if (file.error) throw file.error;
  const bytes = await readAll(file, () => {});
  let manifest;
  try {
    manifest = JSON.parse(textDecoder.decode(bytes));
  } catch {
    throw new Error(`residual-mt: ${url} is not valid JSON`);
  }
  if (!manifest || typeof manifest.files !== 'object') throw new Error(`residual-mt: ${url} has no "files" object`);
  for (const name of MODEL_FILES) {
    const entry = manifest.files[name];
    if (name !== 'spm.model' && !entry) throw new Error(`residual-mt: ${url} does not list ${name}`);
    if (entry && !/^[0-9a-f]{64}$/.test(entry.sha256 ?? '')) throw new Error(`residual-mt: ${url}: bad sha256 for ${name}`);
  }
  return { manifest, bytes };
}

// Loads the engine and a model directory.
//   base: directory URL (see toLocation); wasm: URL, bytes or undefined
//   onProgress({ loaded, total, file }): bytes so far over all files
//   verify: check files against manifest.json (when there is one; 'require'
//   makes a missing manifest, or a model file it does not list, an error)
// Returns { wasm, config, weights, spm, manifest, bytes }.
export async function loadFiles(base, { wasm, signal, onProgress = () => {}, verify = true } = {}) {
  signal?.throwIfAborted();
  const manifestInfo = verify ? await readManifest(base, { signal }) : null;
  if (verify === 'require' && !manifestInfo) {
    throw new Error(`residual-mt: ${new URL(MANIFEST, base)} not found (needed to verify the model)`);
  }
  const manifest = manifestInfo?.manifest ?? null;
  const unlisted = verify === 'require' ? MODEL_FILES.find((name) => !manifest.files[name]) : undefined;
  if (unlisted) {
    throw new Error(`residual-mt: ${new URL(MANIFEST, base)} does not list ${unlisted} (verify: 'require' checks every model file)`);
  }
  const wanted = [];
  if (!(wasm instanceof Uint8Array || wasm instanceof ArrayBuffer)) {
    const url = wasm ? await toUrl(wasm) : defaultWasmUrl();
    wanted.push({ key: 'wasm', name: 'residual-mt.wasm', what: 'the engine (residual-mt.wasm)', url });
  }
  for (const name of MODEL_FILES) {
    wanted.push({ key: name, name, what: `the model's ${name}`, url: new URL(name, base), entry: manifest?.files[name] });
  }
  const opened = await Promise.allSettled(wanted.map(async (w) => ({ ...w, file: await open(w.url, w.what, signal) })));
  const files = opened.filter((o) => o.status === 'fulfilled').map((o) => o.value);
  const failure = opened.find((o) => o.status === 'rejected')?.reason ?? files.find((f) => f.file.error)?.file.error ??
    (files.find((f) => f.file.missing) && new Error(files.find((f) => f.file.missing).file.message));
  if (failure) {
    for (const f of files) f.file.cancel?.();
    throw failure;
  }
  const total = files.reduce((n, f) => n + (f.entry?.size ?? f.file.size ?? 0), 0);
  let loaded = 0;
  onProgress({ loaded, total, file: null });
  const out = await Promise.all(files.map(async (f) => {
    const bytes = await readAll(f.file, (n) => {
      loaded += n;
      onProgress({ loaded, total: Math.max(total, loaded), file: f.name });
    }, f.file.size ?? f.entry?.size);
    checkContent(f.name, bytes, f.file.contentType, f.url);
    if (f.entry) {
      if (typeof f.entry.size === 'number' && f.entry.size !== bytes.length) {
        throw new Error(`residual-mt: ${f.name} (${f.url}) has ${bytes.length} bytes but manifest.json says ${f.entry.size}: ` +
          'incomplete download, or files from two versions of the model');
      }
      const hash = await sha256Hex(bytes);
      if (hash !== f.entry.sha256) {
        throw new Error(`residual-mt: ${f.name} (${f.url}) failed SHA-256 verification against manifest.json ` +
          `(got ${hash.slice(0, 12)}…, expected ${f.entry.sha256.slice(0, 12)}…): corrupt download or mixed model versions`);
      }
    }
    return [f.key, bytes];
  }));
  const result = Object.fromEntries(out);
  return {
    wasm: result.wasm ?? new Uint8Array(wasm instanceof ArrayBuffer ? wasm.slice(0) : wasm), // a copy: it may be transferred
    config: textDecoder.decode(result['config.json']),
    weights: result['model.safetensors'],
    spm: result['spm.model'],
    manifest,
    manifestBytes: manifestInfo?.bytes ?? null,
    bytes: loaded,
  };
}

// Reads just config.json (for availability() and language lists).
export async function readConfig(base, { signal } = {}) {
  const url = new URL('config.json', base);
  const file = await open(url, "the model's config.json", signal);
  if (file.missing) throw new Error(file.message);
  if (file.error) throw file.error;
  const bytes = await readAll(file, () => {});
  checkContent('config.json', bytes, file.contentType, url);
  return JSON.parse(textDecoder.decode(bytes));
}
