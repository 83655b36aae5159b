// Fetches the engine (wasm) and a model directory (config.json,
// model.safetensors, spm.model): with fetch for URLs, with the file system in
// Node for paths and file: URLs. Reports progress in bytes, checks every file
// against the directory's manifest.json (SHA-256 and size, Web Crypto), keeps
// downloaded models for reuse (cache.js), finds the default model, and says
// clearly what went wrong: a NetworkError when a file cannot be had (HTTP
// status, offline), an OperationError when what came is not the file.

import { cached, modelStore, sha256Hex } from './cache.js';
import { DEFAULT_MODEL, MANIFEST, MAX_JSON_BYTES, MODEL_FILES, WEIGHTS, defaultWasmUrl, packageUrl } from './defaults.js';
import { isNode, timeStep } from './env.js';
import { makeError } from './errors.js';
import { onAbort } from './streams.js';

const networkError = (message) => makeError('NetworkError', message);
const operationError = (message) => makeError('OperationError', message);

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

// The default model (defaults.js's DEFAULT_MODEL), first found of: the model
// package installed next to residual-mt (Node: resolved like an import;
// browsers: an import map entry for "residual-mt-es-en/", or the sibling
// directory under node_modules/), the repository's own copy (a checkout:
// npm start, the tests and the CLI run offline), then the package at its
// pinned version on an npm CDN. Over HTTP the answer is kept for the page's
// lifetime (one probe per page load), and so is the config.json the probe
// read (readConfig's, without a second request).
let defaultOverHttp = null;
const probedConfigs = new Map(); // config.json URL -> { bytes, contentType }
export function resolveDefaultModel({ signal } = {}) {
  if (isNode()) return findDefaultModelNode();
  defaultOverHttp ??= findDefaultModelHttp();
  defaultOverHttp.catch(() => { defaultOverHttp = null; });
  return untilAborted(defaultOverHttp, signal);
}

// `promise`, or signal.reason once the signal aborts (work shared by several
// callers goes on for the others).
function untilAborted(promise, signal) {
  if (!signal) return promise;
  let off = null;
  const aborted = new Promise((_, reject) => {
    signal.throwIfAborted();
    off = onAbort(signal, reject);
  });
  return Promise.race([promise, aborted]).finally(() => off?.());
}

// A model package (DEFAULT_MODEL's shape: package, repoPath, url) in Node:
// installed, the repository's copy (when it holds `probe`), or its pinned URL.
async function findModelPackageNode(desc, probe) {
  const { createRequire } = await import('node:module');
  try {
    const manifest = createRequire(import.meta.url).resolve(`${desc.package}/package.json`);
    const { pathToFileURL } = await import('node:url');
    return new URL('./', pathToFileURL(manifest));
  } catch { /* not installed */ }
  const repo = packageUrl(desc.repoPath);
  if (repo.protocol === 'file:' && await fileExists(new URL(probe, repo))) return repo;
  return new URL(desc.url);
}

const findDefaultModelNode = () => findModelPackageNode(DEFAULT_MODEL, 'config.json');

async function findDefaultModelHttp() {
  const done = timeStep('find the default model');
  try {
    return await findDefaultModelHttpOnce();
  } finally {
    done();
  }
}

// Over HTTP: the page's import map entry, the sibling of residual-mt under
// node_modules/ or the repository's copy (where `probe` answers), else the
// pinned URL. found(file, url): what to keep of the probe's answer.
async function findModelPackageHttp(desc, probe, found = async () => {}) {
  try {
    return new URL(import.meta.resolve(`${desc.package}/`));
  } catch { /* not in the page's import map */ }
  const root = packageUrl('./');
  const local = /\/node_modules\/residual-mt\/$/.test(root.pathname)
    ? new URL(`../${desc.package}/`, root) : packageUrl(desc.repoPath);
  try {
    const url = new URL(probe, local);
    const file = await open(url, `the model's ${probe}`);
    if (!file.missing && !file.error) {
      await found(file, url);
      return local;
    }
  } catch { /* offline and not cached: the pinned URL */ }
  return new URL(desc.url);
}

// config.json is in every model directory (manifest.json may not be); the
// probe's copy is kept for readConfig.
function findDefaultModelHttpOnce() {
  return findModelPackageHttp(DEFAULT_MODEL, 'config.json', async (file, url) => {
    try {
      probedConfigs.set(url.href, { bytes: await readJson(file, url), contentType: file.contentType });
    } catch (err) {
      if (err.name !== 'OperationError') throw err;
    } // too large: readConfig reads it again, and says so
  });
}

// Another model package (the language detector's: defaults.js), found as the
// default model is; kept per package for the page's lifetime over HTTP.
const foundPackages = new Map();
export function resolveModelPackage(desc, probe) {
  if (isNode()) return findModelPackageNode(desc, probe);
  if (!foundPackages.has(desc.package)) {
    const finding = findModelPackageHttp(desc, probe);
    finding.catch(() => foundPackages.delete(desc.package));
    foundPackages.set(desc.package, finding);
  }
  return foundPackages.get(desc.package);
}

export { defaultWasmUrl };

// ---- reading files

function describeFetchError(err, url, what) {
  return networkError(`residual-mt: cannot download ${what} from ${url}: ${err.message}` +
    ' (network error: offline, server down or blocked by CORS)');
}

// Opens a file for reading: { size (or null), contentType, chunks: async
// iterator of Uint8Array, and over HTTP the response }.
async function open(url, what, signal) {
  if (isFileUrl(url)) {
    const fs = await import('node:fs');
    let size;
    try {
      size = (await fs.promises.stat(url)).size;
    } catch (err) {
      if (err.code === 'ENOENT') return { missing: true, message: `residual-mt: ${what} not found: ${decodeURIComponent(url.pathname)}` };
      throw networkError(`residual-mt: cannot read ${what} ${decodeURIComponent(url.pathname)}: ${err.message}`);
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
    return response.status === 404 ? { missing: true, message } : { error: networkError(message) };
  }
  const length = Number(response.headers.get('content-length'));
  const encoded = response.headers.get('content-encoding');
  return {
    response,
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

// Reads a JSON file whole (onBytes as readAll's), refusing one larger than
// MAX_JSON_BYTES before reading it where its size is known, else as soon as
// more comes: a file that size is not a model's (an OperationError).
async function readJson(file, url, onBytes = () => {}) {
  const tooLarge = (size) => {
    file.cancel?.();
    return operationError(`residual-mt: ${url} has ${size} bytes, more than a model's JSON file may have ` +
      `(${MAX_JSON_BYTES}): not a model's file`);
  };
  if (file.size > MAX_JSON_BYTES) throw tooLarge(file.size);
  let length = 0;
  const bounded = {
    size: file.size,
    async *chunks() {
      for await (const chunk of file.chunks()) {
        length += chunk.length;
        if (length > MAX_JSON_BYTES) throw tooLarge(`more than ${length}`);
        yield chunk;
      }
    },
  };
  return readAll(bounded, onBytes);
}

// A JSON file that is not one of a model's (a catalogue: catalog.js), read
// whole within the same bound and parsed.
export async function readJsonFile(url, what, signal) {
  const file = await open(url, what, signal);
  if (file.missing) throw networkError(file.message);
  if (file.error) throw file.error;
  return JSON.parse(new TextDecoder().decode(await readJson(file, url)));
}

export { sha256Hex };

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
    throw operationError(`residual-mt: ${where} is an HTML page, not the file: wrong URL, or a server that answers every path with its index page`);
  }
  if (name === 'residual-mt.wasm' || name.endsWith('.wasm')) {
    if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
      throw operationError(`residual-mt: ${where} is not a WebAssembly module`);
    }
  } else if (name === 'model.safetensors') {
    const headerLength = bytes.length >= 8 ? Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)) : -1;
    if (headerLength <= 0 || headerLength + 8 > bytes.length || bytes[8] !== 0x7b) {
      throw operationError(`residual-mt: ${where} is not a safetensors file`);
    }
  } else if (name === 'config.json') {
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

function parseManifest(bytes, url) {
  let manifest;
  try {
    manifest = JSON.parse(textDecoder.decode(bytes));
  } catch {
    throw operationError(`residual-mt: ${url} is not valid JSON`);
  }
  if (!manifest || typeof manifest.files !== 'object') throw operationError(`residual-mt: ${url} has no "files" object`);
  for (const name of MODEL_FILES) {
    const entry = manifest.files[name];
    if (name !== 'spm.model' && !entry) throw operationError(`residual-mt: ${url} does not list ${name}`);
    if (entry && !/^[0-9a-f]{64}$/.test(entry.sha256 ?? '')) throw operationError(`residual-mt: ${url}: bad sha256 for ${name}`);
  }
  return { manifest, bytes };
}

// Whether bytes (or the engine's digest of them: { sha256, size }) match a
// manifest entry ({ sha256, size }); throws an OperationError naming the
// file when they do not.
async function checkEntry(f, bytes) {
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

// A cached copy of a model file, if it is there and matches the manifest.
// `read`: the store's answer for this file, if asked already (cacheReads).
// A copy that fails its check is downloaded again; f.keptFailed says why,
// for when it cannot be (keptCopyFailed).
async function fromCache(store, hash, f, read = null) {
  const bytes = store && hash && f.entry ? await (read ?? store.get(hash, f.name)) : null;
  if (!bytes) return null;
  try {
    await checkEntry(f, bytes);
    return bytes;
  } catch (err) {
    f.keptFailed = err.message;
    return null;
  }
}

// The error for a kept copy of `name` that failed its check (`reason`) when
// downloading it again failed too (`err`): offline, the kept copy is what
// went wrong, and the message says so first.
export function keptCopyFailed(name, reason, err) {
  if (err?.name !== 'NetworkError') return err;
  return networkError(`residual-mt: the kept copy of the model's ${name} failed its check, and it cannot be downloaded ` +
    `again (${err.message.replace(/^residual-mt: /, '')}). The check: ${reason.replace(/^residual-mt: /, '')}`);
}

// The cache's answers for the version of the model last seen at `base`,
// asked while its manifest is read again (usually unchanged: they are then
// the answers wanted): { hash, reads: name -> { bytes, kept } } (promises of
// store.get's and store.keptFile's answers), or null when none was seen.
async function cacheReads(store, base, wanted) {
  const bytes = await store?.manifest(base.href);
  if (!bytes) return null;
  const hash = await sha256Hex(bytes);
  const { manifest } = parseManifest(bytes, new URL(MANIFEST, base));
  const reads = new Map();
  for (const f of wanted) {
    const kept = f.name === WEIGHTS && store.keptFile ? store.keptFile(hash, f.name, manifest.files[f.name]?.size) : null;
    const read = { bytes: store.get(hash, f.name), kept };
    for (const answer of [read.bytes, read.kept]) answer?.catch(() => {}); // awaited if used
    reads.set(f.name, read);
  }
  return { hash, reads };
}

// A page whose service worker keeps the model (the demo's web/sw.js does) has
// its files in Cache Storage under their URLs; read there, they come several
// times faster than through the worker's fetch handler. Only where that is
// so: a browser page controlled by a service worker, a model of its origin.
function pageCacheUsable(base) {
  return !isNode() && typeof caches === 'object' && !!globalThis.navigator?.serviceWorker?.controller &&
    base.origin === globalThis.location?.origin;
}

// A model file's bytes from the page's Cache Storage, or null: read while
// the manifest is, and checked against it once it is there (pageCopy).
async function readPageCache(f) {
  const done = timeStep(`cache storage ${f.name}`);
  try {
    const response = await caches.match(f.url.href);
    return response?.ok ? new Uint8Array(await response.arrayBuffer()) : null;
  } catch {
    return null;
  } finally {
    done();
  }
}

// The page's copy (readPageCache's answer) if it matches the manifest entry,
// else null: a stale or damaged copy is downloaded.
async function pageCopy(f, read) {
  const bytes = await read;
  if (!bytes || !f.entry) return null;
  try {
    await verifyTimed(f, bytes);
    return bytes;
  } catch {
    return null;
  }
}

// Whether the engine can be compiled while it downloads: in a browser, and
// served as application/wasm (which WebAssembly.compileStreaming requires).
// Chromium then also keeps the compiled code (its wasm code cache: a module of
// 128 KB or more, fetched by URL, from the HTTP cache or Cache Storage), so a
// later visit skips most of compiling.
function streamable(file) {
  return !isNode() && typeof WebAssembly.compileStreaming === 'function' && !!file.response &&
    /^application\/wasm\b/i.test(file.contentType ?? '');
}

async function compileStreaming(f) {
  try {
    return await WebAssembly.compileStreaming(f.file.response);
  } catch (err) {
    if (err instanceof WebAssembly.CompileError) {
      throw operationError(`residual-mt: ${f.name} (${f.url}) is not valid WebAssembly: ${err.message}`);
    }
    throw describeFetchError(err, f.url, f.what);
  }
}

// The engine as the loader gives it (a compiled WebAssembly.Module where the
// browser compiled it while it downloaded, else its bytes) and its size. In
// a browser each engine URL is compiled once a page: createTranslator starts
// it before the model is found (prepareEngine), and later loads of the same
// engine reuse the module. Bytes (which move to a worker) and failures are
// not kept: the next load fetches again.
const engines = new Map(); // URL -> Promise<{ wasm, size }>

function engineFile(url) {
  return { key: 'wasm', name: 'residual-mt.wasm', what: 'the engine (residual-mt.wasm)', url };
}

function fetchEngine(f) {
  const keep = !isNode();
  let fetched = keep ? engines.get(f.url.href) : undefined;
  if (fetched) return fetched;
  fetched = (async () => {
    await openTimed(f);
    if (f.file.error) throw f.file.error;
    if (f.file.missing) throw networkError(f.file.message);
    if (streamable(f.file)) {
      const wasm = await compileStreaming(f);
      f.fetched();
      return { wasm, size: f.file.size ?? 0 };
    }
    const bytes = await readAll(f.file, () => {}, f.file.size);
    f.fetched();
    checkContent(f.name, bytes, f.file.contentType, f.url);
    return { wasm: bytes, size: bytes.length };
  })();
  if (keep) {
    engines.set(f.url.href, fetched);
    fetched.then(({ wasm }) => { if (!(wasm instanceof WebAssembly.Module)) engines.delete(f.url.href); },
      () => engines.delete(f.url.href));
  }
  return fetched;
}

// Starts fetching and compiling the engine at `url` (a browser's page: see fetchEngine).
export function prepareEngine(url) {
  if (!isNode()) fetchEngine(engineFile(url)).catch(() => {});
}

// Opens a wanted file (f.file), timing it from the request to its last byte
// (loadFiles calls f.fetched() then). f.entry may be set meanwhile.
async function openTimed(f, signal) {
  f.fetched = timeStep(`fetch ${f.name}`);
  f.file = await open(f.url, f.what, signal);
  return f;
}

// Checks bytes against their manifest entry. The digest starts now, on a copy
// of the bytes (Web Crypto copies them when called), so they may be handed on
// (transferred to a worker) while it runs.
function verifyTimed(f, bytes) {
  const checked = timeStep(`sha256 ${f.name}`);
  return checkEntry(f, bytes).finally(checked);
}

// The engine for a load: null where its bytes are given (givenEngine), else
// a promise of { wasm, size } (fetchEngine's), onEngine(wasm) called as soon
// as it is here, before the model's files may be.
export function startEngine(wasm, signal, onEngine) {
  if (wasm instanceof Uint8Array || wasm instanceof ArrayBuffer) return null;
  const url = wasm ? toUrl(wasm) : Promise.resolve(defaultWasmUrl());
  const engine = url.then((u) => untilAborted(fetchEngine(engineFile(u)), signal)).then((got) => {
    onEngine?.(got.wasm);
    return got;
  });
  engine.catch(() => {}); // awaited by the caller
  return engine;
}

// Engine bytes given by the caller, copied: they may be transferred.
export const givenEngine = (wasm) => new Uint8Array(wasm instanceof ArrayBuffer ? wasm.slice(0) : wasm);

// A file at a URL, for loads other than a model directory's (marian-load.js):
// { size (or null), cancel(), read(onBytes) → its bytes }; a NetworkError
// when it cannot be had, an OperationError when an HTML page comes instead.
export async function openUrl(url, what, signal) {
  const file = await open(url, what, signal);
  if (file.error) throw file.error;
  if (file.missing) throw networkError(file.message);
  return {
    size: file.size,
    cancel: () => file.cancel?.(),
    read: async (onBytes) => {
      const bytes = await readAll(file, onBytes);
      if (looksLikeHtml(bytes, file.contentType)) {
        throw operationError(`residual-mt: ${what} (${url}) is an HTML page, not the file: wrong URL, or a server that answers every path with its index page`);
      }
      return bytes;
    },
  };
}

// Loads the engine and a model directory.
//   base: directory URL (see toLocation); wasm: URL, bytes or undefined
//   onProgress({ loaded, total, file }): bytes so far over the files that
//   are downloaded (not those found in the cache)
//   verify: check files against manifest.json (when there is one; 'require'
//   makes a missing manifest, or a model file it does not list, an error)
//   cache: keep the model for reuse, and use a kept one (needs its manifest).
//   Either way, a page whose service worker keeps the model's files reads
//   them from Cache Storage (pageCacheUsable), when they match the manifest.
//   cachedCopies: false reads no copy whose check is left to the caller (the
//   weights kept in the browser's file system, the page's Cache Storage):
//   they come through the network (and the service worker).
//   deferVerify: leave the SHA-256 check of the weights to the caller, who
//   starts loading the engine first: the result's checkWeights(bytes) (null
//   when nothing is left to check) rejects with an OperationError naming the
//   file if they do not match the manifest (err.cachedCopy: it was a kept
//   copy, to be read again with cachedCopies: false), and nothing may be used
//   before it resolves. (Web Crypto hashes on the calling thread in Chromium:
//   the page checks the weights while its worker loads them.) The weights may
//   then be a file the engine reads itself ({ kept, size }: cache.js
//   keptFile, openKeptWeights), and the result's keep() keeps checked weights
//   in the cache (the caller calls it once they are loaded: nothing else is
//   written meanwhile). Other files, and files that come from the cache, are
//   checked before loadFiles returns either way, so a file that fails is
//   never cached.
//   onEngine(wasm): called with the engine (see wasm below) as soon as it is
//   here, before the model's files may be: the caller may start loading it
//   (and move its bytes elsewhere).
// Returns { wasm, config, weights, spm, manifest, manifestBytes, bytes, checkWeights, keep, dropKept }
// (dropKept: the kept weights could not be loaded; they are kept no more):
// wasm is the compiled WebAssembly.Module where the browser compiled it while
// it downloaded (see streamable), else its bytes.
export async function loadFiles(base, { wasm, signal, onProgress = () => {}, verify = true, cache = true, deferVerify = false,
  onEngine = null, cachedCopies = true } = {}) {
  signal?.throwIfAborted();
  // The cache opens while the manifest is read (opening it is not instant).
  const storing = verify ? modelStore(base, cache) : Promise.resolve(null);
  storing.catch(() => {});
  const wanted = [];
  for (const name of MODEL_FILES) wanted.push({ key: name, name, what: `the model's ${name}`, url: new URL(name, base) });
  // Requested at once, while the manifest is read: the engine, and the model
  // files when there is no cache to look in first (or, from the page's Cache
  // Storage, to be checked once the manifest is there).
  const engine = startEngine(wasm, signal, onEngine);
  const pageCache = cachedCopies && pageCacheUsable(base);
  const storeWanted = verify && cached(base, cache);
  const openings = new Map(wanted.filter(() => !storeWanted && !pageCache).map((f) => [f, openTimed(f, signal)]));
  // Files the cache may hold are read from the page's Cache Storage only if it does not.
  const pageReads = new Map(pageCache && !storeWanted ? wanted.map((f) => [f, readPageCache(f)]) : []);
  const maybeKept = (f) => cachedCopies && deferVerify && storeWanted && f.name === WEIGHTS;
  const early = storing.then((opened) => cacheReads(opened, base, wanted)).catch(() => null);
  const cancelOpenings = async () => {
    for (const o of await Promise.allSettled(openings.values())) if (o.status === 'fulfilled') o.value.file.cancel?.();
  };
  let manifestInfo, hash = null, store = null, reads = null;
  try {
    const manifestRead = timeStep('manifest');
    manifestInfo = verify ? await readManifest(base, { signal, store: storing }) : null;
    manifestRead();
    const opened = timeStep('open cache');
    store = await storing;
    opened();
    if (verify === 'require' && !manifestInfo) {
      throw operationError(`residual-mt: ${new URL(MANIFEST, base)} not found (needed to verify the model)`);
    }
    const unlisted = verify === 'require' ? MODEL_FILES.find((name) => !manifestInfo.manifest.files[name]) : undefined;
    if (unlisted) {
      throw operationError(`residual-mt: ${new URL(MANIFEST, base)} does not list ${unlisted} (verify: 'require' checks every model file)`);
    }
    if (store && manifestInfo) hash = await sha256Hex(manifestInfo.bytes);
    const asked = await early;
    if (asked?.hash === hash) reads = asked.reads;
  } catch (err) {
    await cancelOpenings();
    throw err;
  }
  const manifest = manifestInfo?.manifest ?? null;
  for (const f of wanted) f.entry = manifest?.files[f.name];
  const found = {};
  let checkWeights = null, checked = null, dropKept = null;
  // Whether the caller checks these weights (deferVerify).
  const deferred = (f) => f.entry && deferVerify && f.name === WEIGHTS;
  // The caller's check of the weights (checkWeights). Weights that pass are
  // what keep() keeps, unless they came from the cache (kept); a copy
  // (kept, or the page's) that fails says so (err.cachedCopy), and a kept
  // one is no longer kept.
  const checkOf = (f, { copy = false, kept = false } = {}) => (weights) => verifyTimed(f, weights).then(() => {
    if (!kept) checked = weights;
  }, async (err) => {
    if (kept) await dropKept();
    throw copy ? Object.assign(err, { cachedCopy: true }) : err;
  });
  await Promise.all(wanted.filter((f) => !openings.has(f)).map(async (f) => {
    const read = reads?.get(f.name);
    const kept = maybeKept(f) && store?.keptFile && hash && f.entry ? await (read?.kept ?? store.keptFile(hash, f.name, f.entry.size)) : null;
    if (kept) {
      found[f.key] = kept;
      checkWeights = checkOf(f, { copy: true, kept: true });
      dropKept = () => store.drop(hash, f.name);
      return;
    }
    let bytes = await fromCache(store, hash, f, read?.bytes);
    if (!bytes && pageCache && deferred(f)) {
      bytes = await (pageReads.get(f) ?? readPageCache(f));
      if (bytes) checkWeights = checkOf(f, { copy: true });
    } else if (!bytes && pageCache) bytes = await pageCopy(f, pageReads.get(f) ?? readPageCache(f));
    if (bytes) found[f.key] = bytes;
    else openings.set(f, openTimed(f, signal));
  }));
  const opened = await Promise.allSettled(openings.values());
  const files = opened.filter((o) => o.status === 'fulfilled').map((o) => o.value);
  const failure = opened.find((o) => o.status === 'rejected')?.reason ?? files.find((f) => f.file.error)?.file.error ??
    (files.find((f) => f.file.missing) && networkError(files.find((f) => f.file.missing).file.message));
  if (failure) {
    for (const f of files) f.file.cancel?.();
    const kept = [...openings.keys()].find((f) => f.keptFailed);
    throw kept ? keptCopyFailed(kept.name, kept.keptFailed, failure) : failure;
  }
  const total = files.reduce((n, f) => n + (f.entry?.size ?? f.file.size ?? 0), 0);
  let loaded = 0;
  const counted = (name, n) => {
    loaded += n;
    onProgress({ loaded, total: Math.max(total, loaded), file: name });
  };
  onProgress({ loaded, total, file: null });
  const engineDone = engine?.then(({ wasm: compiled, size }) => {
    found.wasm = compiled;
    counted('residual-mt.wasm', size);
  });
  await Promise.all([engineDone, ...files.map(async (f) => {
    const onBytes = (n) => counted(f.name, n);
    const bytes = await (f.name === 'config.json' ? readJson(f.file, f.url, onBytes) : readAll(f.file, onBytes, f.file.size ?? f.entry?.size));
    f.fetched();
    checkContent(f.name, bytes, f.file.contentType, f.url);
    if (deferred(f)) {
      checkWeights = checkOf(f);
    } else if (f.entry) {
      await verifyTimed(f, bytes);
      if (hash) await store.put(hash, f.name, bytes);
    }
    found[f.key] = bytes;
  })]).catch(async (err) => {
    for (const f of files) f.file.cancel?.();
    throw err;
  });
  await manifestInfo?.saved;
  return {
    wasm: found.wasm ?? givenEngine(wasm),
    config: textDecoder.decode(found['config.json']),
    weights: found['model.safetensors'],
    spm: found['spm.model'],
    manifest,
    manifestBytes: manifestInfo?.bytes ?? null,
    bytes: loaded,
    checkWeights,
    keep: async () => { if (checked && hash) await store.put(hash, WEIGHTS, checked); },
    dropKept: async () => dropKept?.(),
  };
}

// Reads just config.json (for availability() and language lists); offline,
// the cached model's. Calls while one is under way share its request.
const configReads = new Map(); // config.json URL and cache option -> Promise of the read under way
export function readConfig(base, { signal, cache = true } = {}) {
  const key = `${new URL('config.json', base).href} ${cache}`;
  let read = configReads.get(key);
  if (!read) {
    const done = timeStep('config');
    read = readConfigOnce(base, { cache }).finally(() => {
      done();
      configReads.delete(key);
    });
    configReads.set(key, read);
  }
  return untilAborted(read, signal);
}

async function readConfigOnce(base, { cache }) {
  const url = new URL('config.json', base);
  const probed = probedConfigs.get(url.href);
  if (probed) return parseConfig(probed.bytes, probed.contentType, url);
  let bytes;
  let contentType = null;
  try {
    const file = await open(url, "the model's config.json");
    if (file.missing) throw networkError(file.message);
    if (file.error) throw file.error;
    contentType = file.contentType;
    bytes = await readJson(file, url);
  } catch (err) {
    const kept = {};
    bytes = err.name === 'NetworkError' ? await cachedFile(base, 'config.json', cache, kept) : null;
    if (!bytes) throw kept.keptFailed ? keptCopyFailed('config.json', kept.keptFailed, err) : err;
  }
  return parseConfig(bytes, contentType, url);
}

function parseConfig(bytes, contentType, url) {
  checkContent('config.json', bytes, contentType, url);
  return JSON.parse(textDecoder.decode(bytes));
}

// A model file from the cache, found by the manifest last seen at `base`
// (f: fromCache's record of it, keptFailed included).
async function cachedFile(base, name, cache, f = {}) {
  const store = await modelStore(base, cache);
  const manifestBytes = await store?.manifest(base.href);
  if (!manifestBytes) return null;
  const { manifest } = parseManifest(manifestBytes, new URL(MANIFEST, base));
  return fromCache(store, await sha256Hex(manifestBytes), Object.assign(f, { name, url: new URL(name, base), entry: manifest.files[name] }));
}

// Whether the whole model at `base` is in the cache (for availability()).
export async function isCached(base) {
  const store = await modelStore(base);
  const manifestBytes = await store?.manifest(base.href);
  if (!manifestBytes) return false;
  const hash = await sha256Hex(manifestBytes);
  const { manifest } = parseManifest(manifestBytes, new URL(MANIFEST, base));
  for (const name of MODEL_FILES) if (manifest.files[name] && !await store.has(hash, name)) return false;
  return true;
}
