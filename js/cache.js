// Models the library downloads, kept for reuse (offline, and no second
// download): in Cache Storage in browsers, in $XDG_CACHE_HOME/residual-mt
// (~/.cache/residual-mt) in Node. Files are keyed by the SHA-256 of the
// model's manifest.json, so a new version of a model is a new key and two
// versions never mix; the last manifest seen at each model URL is kept too,
// to find the files when the network is gone. Best effort: a cache that
// cannot be read or written is skipped, never an error.

import { isNode } from './env.js';

// Not the demo service worker's "residual-mt-" caches, which it cleans up.
const CACHE_NAME = 'residual-mt.models/1';
// Cache Storage keys are URLs; these are never fetched.
const KEY_BASE = 'https://residual-mt.invalid/';

const bytesOf = async (response) => (response ? new Uint8Array(await response.arrayBuffer()) : null);

function browserStore(cache) {
  const urlKey = (modelHref) => `${KEY_BASE}urls/${encodeURIComponent(modelHref)}`;
  const fileKey = (hash, name) => `${KEY_BASE}${hash}/${name}`;
  const put = (key, bytes) => cache.put(key, new Response(bytes)).catch(() => {});
  return {
    manifest: async (modelHref) => bytesOf(await cache.match(urlKey(modelHref))),
    saveManifest: (modelHref, bytes) => put(urlKey(modelHref), bytes),
    get: async (hash, name) => bytesOf(await cache.match(fileKey(hash, name))),
    has: async (hash, name) => !!await cache.match(fileKey(hash, name)),
    put: (hash, name, bytes) => put(fileKey(hash, name), bytes),
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

// The store for models at `base` (a URL), or null: none for files on disk,
// when caching is off, or where there is no cache to use.
export async function modelStore(base, enabled = true) {
  if (!enabled || !/^https?:$/.test(base.protocol)) return null;
  if (isNode()) return nodeStore();
  try {
    return typeof caches === 'object' && caches ? browserStore(await caches.open(CACHE_NAME)) : null;
  } catch {
    return null; // no Cache Storage here (an opaque origin)
  }
}
