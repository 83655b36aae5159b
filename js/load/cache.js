// Models the library downloads, kept for reuse (offline, and no second
// download): in browsers the weights (model.safetensors) in the Origin
// Private File System where there is one, which the engine's worker reads
// straight into the engine's memory (openKeptWeights), and the rest in Cache
// Storage (the weights too where there is no such file system); in Node in
// $XDG_CACHE_HOME/residual-mt (~/.cache/residual-mt). Files are keyed by the
// SHA-256 of the model's manifest.json, so a new version of a model is a new
// key and two versions never mix; the last manifest seen at each model URL is
// kept too, to find the files when the network is gone, and in browsers a
// version no URL's manifest names any more is deleted when that manifest
// changes. Best effort: a cache that cannot be read or written is skipped,
// never an error.

import { WEIGHTS } from '../defaults.js';
import { isNode } from '../util/env.js';
import { notSupported } from '../util/errors.js';

// Not the demo service worker's "residual-mt-" caches, which it cleans up.
const CACHE_NAME = 'residual-mt.models/1';
// Cache Storage keys are URLs; these are never fetched.
const KEY_BASE = 'https://residual-mt.invalid/';

// The weights' directory in the Origin Private File System: one
// subdirectory per manifest hash, holding model.safetensors.
const OPFS_PATH = ['residual-mt.models', '1'];

const bytesOf = async (response) => (response ? new Uint8Array(await response.arrayBuffer()) : null);
const sameBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw notSupported('Web Crypto (crypto.subtle) is not available, so the model cannot be verified: ' +
      'serve the page over https or from localhost, or pass { verify: false }');
  }
  return hexDigest(new Uint8Array(await subtle.digest('SHA-256', bytes)));
}

// A digest's bytes as lowercase hex, as manifest.json writes SHA-256 (also the engine's: engine.js).
export const hexDigest = (digest) => Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');

async function opfsDirectory(path, create) {
  let dir = await navigator.storage.getDirectory();
  for (const name of path) dir = await dir.getDirectoryHandle(name, { create });
  return dir;
}

function browserStore(cache) {
  const urlKey = (modelHref) => `${KEY_BASE}urls/${encodeURIComponent(modelHref)}`;
  const fileKey = (hash, name) => `${KEY_BASE}${hash}/${name}`;
  const put = (key, bytes) => cache.put(key, new Response(bytes)).catch(() => {});
  // The weights go to the Origin Private File System where there is one (an
  // opaque origin or private browsing may refuse it: then nothing is kept).
  // Cache Storage holds a note of each file written whole, its size: finding
  // them costs the page no trip to the file system, which is slow to open.
  const apart = (name) => name === WEIGHTS && typeof navigator === 'object' && typeof navigator.storage?.getDirectory === 'function';
  const noteKey = (hash) => `${fileKey(hash, WEIGHTS)}?kept`;
  let weightsDir = null;
  const weights = () => {
    weightsDir ??= opfsDirectory(OPFS_PATH, true);
    return weightsDir;
  };
  const dropFile = async (hash) => {
    await cache.delete(noteKey(hash)).catch(() => {});
    await weights().then((dir) => dir.getDirectoryHandle(hash)).then((dir) => dir.removeEntry(WEIGHTS)).catch(() => {});
  };
  // Deletes a version's files unless the manifest kept for some URL is still that version's.
  const forget = async (hash) => {
    const keys = (await cache.keys()).map((request) => request.url);
    for (const key of keys.filter((k) => k.startsWith(`${KEY_BASE}urls/`))) {
      const kept = await bytesOf(await cache.match(key));
      if (kept && await sha256Hex(kept) === hash) return;
    }
    for (const key of keys.filter((k) => k.startsWith(`${KEY_BASE}${hash}/`))) await cache.delete(key);
    await weights().then((dir) => dir.removeEntry(hash, { recursive: true })).catch(() => {}); // absent, or being read: left
  };
  const noted = async (hash) => Number(await (await cache.match(noteKey(hash)))?.text());
  return {
    manifest: async (modelHref) => bytesOf(await cache.match(urlKey(modelHref))),
    // A new manifest at a URL: the version it replaces is deleted if no other URL names it.
    saveManifest: async (modelHref, bytes) => {
      const before = await bytesOf(await cache.match(urlKey(modelHref)));
      if (before && sameBytes(before, bytes)) return;
      await put(urlKey(modelHref), bytes);
      if (before) await forget(await sha256Hex(before)).catch(() => {});
    },
    // Bytes for the page; null for the weights in the file system (keptFile).
    get: async (hash, name) => (apart(name) ? null : bytesOf(await cache.match(fileKey(hash, name)))),
    has: async (hash, name) => (apart(name) ? await noted(hash) > 0 : !!await cache.match(fileKey(hash, name))),
    // The weights in the file system as openKeptWeights takes them ({ kept:
    // path, size }) if a file of `size` bytes was written there; else null.
    keptFile: async (hash, name, size) => (apart(name) && await noted(hash) === size ? { kept: [...OPFS_PATH, hash, WEIGHTS], size } : null),
    // Written whole or not at all (a writable's changes appear when it
    // closes), then noted.
    put: async (hash, name, bytes) => {
      if (!apart(name)) return put(fileKey(hash, name), bytes);
      let writable;
      try {
        writable = await (await (await weights()).getDirectoryHandle(hash, { create: true })).getFileHandle(WEIGHTS, { create: true })
          .then((file) => file.createWritable());
        await writable.write(bytes);
        await writable.close();
        await put(noteKey(hash), String(bytes.length));
      } catch {
        await writable?.abort().catch(() => {});
        await dropFile(hash);
      }
    },
    // A kept copy that failed its check, or could not be read.
    drop: (hash, name) => (apart(name) ? dropFile(hash) : cache.delete(fileKey(hash, name)).catch(() => {})),
  };
}

// The engine's side of keptFile's answer: where a dedicated worker may read
// the file synchronously, { size, readInto(view) }, which reads it into
// `view` (the engine's memory, view.length === size) and closes it; else its
// bytes. Rejects if the file is gone or locked (the caller loads otherwise).
export async function openKeptWeights({ kept, size }) {
  const file = await (await opfsDirectory(kept.slice(0, -1), false)).getFileHandle(kept.at(-1));
  if (typeof file.createSyncAccessHandle !== 'function') return new Uint8Array(await (await file.getFile()).arrayBuffer());
  // Several readers at once where the browser allows it (mode), else one.
  const handle = await file.createSyncAccessHandle({ mode: 'read-only' });
  return {
    size,
    readInto(view) {
      try {
        const read = handle.getSize() === size ? handle.read(view, { at: 0 }) : -1;
        if (read !== size) throw new Error(`residual-mt: the kept weights (${kept.join('/')}) could not be read whole`);
      } finally {
        handle.close();
      }
    },
  };
}

// The Node cache directory: $XDG_CACHE_HOME/residual-mt, else ~/.cache/residual-mt.
export async function cacheDirectory() {
  const { homedir } = await import('node:os');
  const { join } = await import('node:path');
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'residual-mt');
}

async function nodeStore() {
  const fs = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { createHash } = await import('node:crypto');
  const dir = await cacheDirectory();
  const urlPath = (modelHref) => join(dir, 'urls', `${createHash('sha256').update(modelHref).digest('hex')}.json`);
  const filePath = (hash, name) => join(dir, hash, name);
  const read = (path) => fs.readFile(path).then((b) => new Uint8Array(b.buffer, b.byteOffset, b.length), () => null);
  // Written to a temporary name, then renamed: a reader never sees half a file.
  const write = async (path, bytes) => {
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await fs.mkdir(join(path, '..'), { recursive: true });
      await fs.writeFile(tmp, bytes);
      await fs.rename(tmp, path);
    } catch {
      await fs.rm(tmp, { force: true }).catch(() => {});
    }
  };
  return {
    manifest: (modelHref) => read(urlPath(modelHref)),
    saveManifest: (modelHref, bytes) => write(urlPath(modelHref), bytes),
    get: (hash, name) => read(filePath(hash, name)),
    has: (hash, name) => fs.stat(filePath(hash, name)).then((s) => s.isFile(), () => false),
    put: (hash, name, bytes) => write(filePath(hash, name), bytes),
  };
}

// Whether models at `base` (a URL) are cached: not files on disk, nor when caching is off.
export function cached(base, enabled = true) {
  return enabled && /^https?:$/.test(base.protocol);
}

// The store for models at `base` (a URL), or null: none where cached() says
// so, or where there is no cache to use.
export async function modelStore(base, enabled = true) {
  if (!cached(base, enabled)) return null;
  if (isNode()) return nodeStore();
  try {
    return typeof caches === 'object' && caches ? browserStore(await caches.open(CACHE_NAME)) : null;
  } catch {
    return null; // no Cache Storage here (an opaque origin)
  }
}
