// Copies of model files kept on this device, read instead of downloading
// them when they still match the manifest: the model cache's (cache.js
// modelStore: by the manifest last seen at a model's URL), and the page's
// Cache Storage where its service worker keeps the model (the demo's web/sw.js).

import { modelStore, sha256Hex } from './cache.js';
import { MANIFEST, WEIGHTS } from '../defaults.js';
import { isNode, timeStep } from '../util/env.js';
import { networkError } from './files.js';
import { checkEntry, parseManifest, verifyTimed } from './verify.js';

// A cached copy of a model file, if it is there and matches the manifest.
// `read`: the store's answer for this file, if asked already (cacheReads).
// A copy that fails its check is downloaded again; f.keptFailed says why,
// for when it cannot be (keptCopyFailed).
export async function fromCache(store, hash, f, read = null) {
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
export async function cacheReads(store, base, wanted) {
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
export function pageCacheUsable(base) {
  return !isNode() && typeof caches === 'object' && !!globalThis.navigator?.serviceWorker?.controller &&
    base.origin === globalThis.location?.origin;
}

// A model file's bytes from the page's Cache Storage, or null: read while
// the manifest is, and checked against it once it is there (pageCopy).
export async function readPageCache(f) {
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
export async function pageCopy(f, read) {
  const bytes = await read;
  if (!bytes || !f.entry) return null;
  try {
    await verifyTimed(f, bytes);
    return bytes;
  } catch {
    return null;
  }
}

// A model file from the cache, found by the manifest last seen at `base`
// (f: fromCache's record of it, keptFailed included).
export async function cachedFile(base, name, cache, f = {}) {
  const store = await modelStore(base, cache);
  const manifestBytes = await store?.manifest(base.href);
  if (!manifestBytes) return null;
  const { manifest } = parseManifest(manifestBytes, new URL(MANIFEST, base));
  return fromCache(store, await sha256Hex(manifestBytes), Object.assign(f, { name, url: new URL(name, base), entry: manifest.files[name] }));
}

