// Rule of js/load/: a model's and an engine's files: found, read within
// their bounds, checked, kept. Imports only util/ (and defaults.js).
//
// Loads a model directory (config.json, model.safetensors, spm.model) and
// the engine for it: each file from the device's copies where they still
// match the manifest (copies.js), else downloaded (files.js, engine-fetch.js)
// with progress in bytes and checked (verify.js); readConfig and isCached
// for availability() and language lists. The module residual-mt/loader,
// so it also hands on the helpers its types name.

import { modelBound, weightsBound } from './bounded.js';
import { cached, modelStore, sha256Hex } from './cache.js';
import { cacheReads, cachedFile, fromCache, keptCopyFailed, pageCacheUsable, pageCopy, readPageCache } from './copies.js';
import { CONFIG, MANIFEST, MODEL_FILES, TOKENIZER, WEIGHTS, defaultWasmUrl } from '../defaults.js';
import { probedConfig } from './discover.js';
import { givenEngine, startEngine } from './engine-fetch.js';
import { timeStep } from '../util/env.js';
import { networkError, open, openTimed, operationError, readAll, readJson } from './files.js';
import { untilAborted } from '../util/streams.js';
import { checkContent, parseManifest, readManifest, verifyTimed } from './verify.js';

export { resolveDefaultModel } from './discover.js';
export { toLocation, toUrl } from './files.js';
export { defaultWasmUrl, readManifest, sha256Hex };

const textDecoder = new TextDecoder();

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
//   maxModelBytes: the most bytes of a file whose size neither the manifest
//   nor (for the weights) the config states (default MAX_MODEL_BYTES); a
//   file over its bound fails the load (an OperationError naming it).
//   onEngine(wasm): called with the engine (see wasm below) as soon as it is
//   here, before the model's files may be: the caller may start loading it
//   (and move its bytes elsewhere).
// Returns { wasm, config, weights, spm, manifest, manifestBytes, bytes, checkWeights, keep, dropKept }
// (dropKept: the kept weights could not be loaded; they are kept no more):
// wasm is the compiled WebAssembly.Module where the browser compiled it while
// it downloaded (see streamable), else its bytes.
export async function loadFiles(base, { wasm, signal, onProgress = () => {}, verify = true, cache = true, deferVerify = false,
  onEngine = null, cachedCopies = true, maxModelBytes } = {}) {
  signal?.throwIfAborted();
  const load = { base, signal, verify, deferVerify, cachedCopies, found: {}, checkWeights: null, checked: null, dropKept: null,
    maxBytes: modelBound(maxModelBytes) };
  // The cache opens while the manifest is read (opening it is not instant).
  load.storing = verify ? modelStore(base, cache) : Promise.resolve(null);
  load.storing.catch(() => {});
  load.wanted = MODEL_FILES.map((name) => ({ key: name, name, what: `the model's ${name}`, url: new URL(name, base) }));
  // Requested at once, while the manifest is read: the engine, and the model
  // files when there is no cache to look in first (or, from the page's Cache
  // Storage, to be checked once the manifest is there).
  const engine = startEngine(wasm, signal, onEngine);
  load.pageCache = cachedCopies && pageCacheUsable(base);
  load.storeWanted = verify && cached(base, cache);
  const openAtOnce = !load.storeWanted && !load.pageCache;
  load.openings = new Map(openAtOnce ? load.wanted.map((f) => [f, openTimed(f, signal)]) : []);
  // Files the cache may hold are read from the page's Cache Storage only if it does not.
  load.pageReads = new Map(load.pageCache && !load.storeWanted ? load.wanted.map((f) => [f, readPageCache(f)]) : []);
  await readManifestFirst(load);
  const manifest = load.manifestInfo?.manifest ?? null;
  for (const f of load.wanted) f.entry = manifest?.files[f.name];
  await Promise.all(load.wanted.filter((f) => !load.openings.has(f)).map((f) => fromCopies(load, f)));
  const loaded = await download(load, await openedFiles(load), engine, onProgress);
  await load.manifestInfo?.saved;
  const { found, hash, store } = load;
  return {
    wasm: found.wasm ?? givenEngine(wasm),
    config: textDecoder.decode(found[CONFIG]),
    weights: found[WEIGHTS],
    spm: found[TOKENIZER],
    manifest,
    manifestBytes: load.manifestInfo?.bytes ?? null,
    bytes: loaded,
    checkWeights: load.checkWeights,
    keep: async () => { if (load.checked && hash) await store.put(hash, WEIGHTS, load.checked); },
    dropKept: async () => load.dropKept?.(),
  };
}

// The manifest (load.manifestInfo) and the cache it names (load.store, and
// load.hash: the manifest's SHA-256; load.reads: the cache's answers, asked
// while the manifest was read, when that was the same manifest). The files
// opened meanwhile are cancelled when it fails.
async function readManifestFirst(load) {
  const { base, verify } = load;
  const early = load.storing.then((opened) => cacheReads(opened, base, load.wanted)).catch(() => null);
  load.hash = null;
  load.reads = null;
  try {
    const manifestRead = timeStep('manifest');
    load.manifestInfo = verify ? await readManifest(base, { signal: load.signal, store: load.storing }) : null;
    manifestRead();
    const opened = timeStep('open cache');
    load.store = await load.storing;
    opened();
    if (verify === 'require' && !load.manifestInfo) {
      throw operationError(`residual-mt: ${new URL(MANIFEST, base)} not found (needed to verify the model)`);
    }
    const unlisted = verify === 'require' ? MODEL_FILES.find((name) => !load.manifestInfo.manifest.files[name]) : undefined;
    if (unlisted) {
      throw operationError(`residual-mt: ${new URL(MANIFEST, base)} does not list ${unlisted} (verify: 'require' checks every model file)`);
    }
    if (load.store && load.manifestInfo) load.hash = await sha256Hex(load.manifestInfo.bytes);
    const asked = await early;
    if (asked?.hash === load.hash) load.reads = asked.reads;
  } catch (err) {
    for (const o of await Promise.allSettled(load.openings.values())) if (o.status === 'fulfilled') o.value.file.cancel?.();
    throw err;
  }
}

// Whether the caller checks these weights (deferVerify).
const deferred = (load, f) => f.entry && load.deferVerify && f.name === WEIGHTS;

// The caller's check of the weights (checkWeights). Weights that pass are
// what keep() keeps, unless they came from the cache (kept); a copy (kept,
// or the page's) that fails says so (err.cachedCopy), and a kept one is no
// longer kept.
function checkOf(load, f, { copy = false, kept = false } = {}) {
  return (weights) => verifyTimed(f, weights).then(() => {
    if (!kept) load.checked = weights;
  }, async (err) => {
    if (kept) await load.dropKept();
    throw copy ? Object.assign(err, { cachedCopy: true }) : err;
  });
}

// File f from a copy on this device (load.found), or else opened to be
// downloaded (load.openings): the weights as the file the cache keeps them
// in, a copy in the cache, or the page's Cache Storage.
async function fromCopies(load, f) {
  const { store, hash } = load;
  const read = load.reads?.get(f.name);
  const maybeKept = load.cachedCopies && load.deferVerify && load.storeWanted && f.name === WEIGHTS;
  const kept = maybeKept && store?.keptFile && hash && f.entry ? await (read?.kept ?? store.keptFile(hash, f.name, f.entry.size)) : null;
  if (kept) {
    load.found[f.key] = kept;
    load.checkWeights = checkOf(load, f, { copy: true, kept: true });
    load.dropKept = () => store.drop(hash, f.name);
    return;
  }
  let bytes = await fromCache(store, hash, f, read?.bytes);
  const pageRead = () => load.pageReads.get(f) ?? readPageCache(f);
  if (!bytes && load.pageCache && deferred(load, f)) {
    bytes = await pageRead();
    if (bytes) load.checkWeights = checkOf(load, f, { copy: true });
  } else if (!bytes && load.pageCache) bytes = await pageCopy(f, pageRead());
  if (bytes) load.found[f.key] = bytes;
  else load.openings.set(f, openTimed(f, load.signal));
}

// The files opened to be downloaded, or the first failure among them (then
// all are cancelled; where a kept copy had failed its check, the error says so).
async function openedFiles(load) {
  const opened = await Promise.allSettled(load.openings.values());
  const files = opened.filter((o) => o.status === 'fulfilled').map((o) => o.value);
  const missing = files.find((f) => f.file.missing);
  const failure = opened.find((o) => o.status === 'rejected')?.reason ?? files.find((f) => f.file.error)?.file.error ??
    (missing && networkError(missing.file.message));
  if (!failure) return files;
  for (const f of files) f.file.cancel?.();
  const kept = [...load.openings.keys()].find((f) => f.keptFailed);
  throw kept ? keptCopyFailed(kept.name, kept.keptFailed, failure) : failure;
}

// Reads the opened files and the engine (load.found), with progress over
// their bytes; checks each (the weights' SHA-256 left to the caller when
// deferred) and keeps it in the cache. Returns the bytes downloaded.
async function download(load, files, engine, onProgress) {
  const { found, hash, store } = load;
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
  const limits = fileLimits(load, files);
  await Promise.all([engineDone, ...files.map(async (f) => {
    const onBytes = (n) => counted(f.name, n);
    const bytes = await (f.name === CONFIG ? readJson(f.file, f.url, onBytes) : readAll(f.file, onBytes, f.file.size ?? f.entry?.size, limits.get(f)));
    f.fetched();
    checkContent(f.name, bytes, f.file.contentType, f.url);
    if (f.name === CONFIG) limits.configRead(bytes);
    if (deferred(load, f)) {
      load.checkWeights = checkOf(load, f);
    } else if (f.entry) {
      await verifyTimed(f, bytes);
      if (hash) await store.put(hash, f.name, bytes);
    }
    found[f.key] = bytes;
  })]).catch(async (err) => {
    for (const f of files) f.file.cancel?.();
    throw err;
  });
  return loaded;
}

// Each file's bound as it downloads (readAll's limit): its manifest entry's
// size, else for the weights what the config's dimensions allow once it is
// here (bounded.js weightsBound; the bound tightens while they come), else
// maxModelBytes. configRead(bytes) takes the config when it is downloaded.
function fileLimits(load, files) {
  const limits = new Map(files.map((f) => [f, typeof f.entry?.size === 'number'
    ? { maxBytes: f.entry.size, name: `${f.name} (${f.url})`, why: 'the size manifest.json says' }
    : { maxBytes: load.maxBytes, name: `${f.name} (${f.url})`, why: 'maxModelBytes' }]));
  const weights = files.find((f) => f.name === WEIGHTS && !f.entry);
  const fromConfig = (bytes) => {
    let config = null;
    try {
      config = JSON.parse(textDecoder.decode(bytes));
    } catch {
      return; // checkContent says what is wrong with it
    }
    const bound = weightsBound(config);
    if (weights && bound !== null && bound < load.maxBytes) {
      Object.assign(limits.get(weights), { maxBytes: bound, why: "what config.json's dimensions allow" });
    }
  };
  if (load.found[CONFIG]) fromConfig(load.found[CONFIG]);
  limits.configRead = fromConfig;
  return limits;
}

// Reads just config.json (for availability() and language lists); offline,
// the cached model's. Calls while one is under way share its request.
const configReads = new Map(); // config.json URL and cache option -> Promise of the read under way
export function readConfig(base, { signal, cache = true } = {}) {
  const key = `${new URL(CONFIG, base).href} ${cache}`;
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
  const url = new URL(CONFIG, base);
  const probed = probedConfig(url.href);
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
    bytes = err.name === 'NetworkError' ? await cachedFile(base, CONFIG, cache, kept) : null;
    if (!bytes) throw kept.keptFailed ? keptCopyFailed(CONFIG, kept.keptFailed, err) : err;
  }
  return parseConfig(bytes, contentType, url);
}

function parseConfig(bytes, contentType, url) {
  checkContent(CONFIG, bytes, contentType, url);
  return JSON.parse(textDecoder.decode(bytes));
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
