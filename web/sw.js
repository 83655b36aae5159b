// Service worker (a module): keeps the app shell, the engine and the default
// model in one versioned cache so that the demo loads and translates offline.
//
// - The cache name is residual-mt-<SHELL_VERSION>-<first 16 hex of the
//   SHA-256 of the model's manifest.json>.
// - Model files (and their manifest) are served cache-first from the current
//   cache only, and stored there only when their SHA-256 matches that
//   manifest. A new model is downloaded into a new cache, checked completely,
//   and only then made current (the old cache is deleted): a page never gets
//   files of two model versions.
// - The shell (HTML, JS, CSS, wasm, icons) is network-first, falling back to
//   the cache when offline.
import { DEFAULT_MODELS, MANIFEST, MODEL_FILES } from '../js/defaults.js';

const SHELL_VERSION = 'v1';
const PREFIX = 'residual-mt-';
const STATE_CACHE = `${PREFIX}state`;
const STATE_KEY = new URL('./__residual-mt-state__', self.location).href;
const SHELL = [
  './', './index.html', './app.js', './style.css', './manifest.webmanifest',
  './icons/icon.svg', './icons/icon-192.png', './icons/icon-512.png',
  '../js/index.js', '../js/loader.js', '../js/runner.js', '../js/worker.js', '../js/engine.js', '../js/wasm.js',
  '../js/segment.js', '../js/defaults.js', '../dist/residual-mt.wasm',
].map((path) => new URL(path, self.location).href);
// DEFAULT_MODELS are relative to the package root, which js/ sits in.
const PACKAGE_ROOT = new URL('../', self.location);
const MODEL_CANDIDATES = DEFAULT_MODELS.map((path) => new URL(path, PACKAGE_ROOT).href);

let state = null; // { cache, model, manifest } of the current version

async function loadState() {
  if (state) return state;
  const hit = await (await caches.open(STATE_CACHE)).match(STATE_KEY);
  state = hit ? await hit.json() : { cache: null, model: null, manifest: null };
  return state;
}

async function saveState(next) {
  await (await caches.open(STATE_CACHE)).put(STATE_KEY, new Response(JSON.stringify(next), { headers: { 'Content-Type': 'application/json' } }));
  state = next;
}

async function sha256Hex(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The default model as the network has it now: { model, manifest, text, version }, or null.
async function findModel() {
  for (const model of MODEL_CANDIDATES) {
    try {
      const response = await fetch(new URL(MANIFEST, model), { cache: 'no-cache' });
      if (!response.ok) continue;
      const text = await response.text();
      const manifest = JSON.parse(text);
      const version = (await sha256Hex(new TextEncoder().encode(text))).slice(0, 16);
      return { model, manifest, text, version };
    } catch {
      return null; // offline
    }
  }
  return null;
}

const cacheName = (version) => `${PREFIX}${SHELL_VERSION}-${version}`;

// Puts a model file in `cache` if its bytes match the manifest entry.
async function storeVerified(cache, url, response, entry) {
  const buffer = await response.arrayBuffer();
  if (!entry || (entry.size !== undefined && entry.size !== buffer.byteLength) || await sha256Hex(buffer) !== entry.sha256) return false;
  const headers = new Headers(response.headers);
  headers.set('Content-Length', String(buffer.byteLength));
  headers.delete('Content-Encoding');
  await cache.put(url, new Response(buffer, { status: 200, headers }));
  return true;
}

// Fills `cache` with whatever of the shell and the model it lacks.
async function fill(cache, found) {
  await Promise.all(SHELL.map(async (url) => {
    if (await cache.match(url)) return;
    const response = await fetch(url, { cache: 'no-cache' });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    await cache.put(url, response);
  }));
  if (!found) return;
  for (const name of MODEL_FILES) {
    const url = new URL(name, found.model).href;
    if (await cache.match(url)) continue;
    const response = await fetch(url, { cache: 'no-cache' });
    if (!response.ok || !await storeVerified(cache, url, response, found.manifest.files?.[name])) {
      throw new Error(`${url} could not be cached (HTTP ${response.status}, or it does not match ${MANIFEST})`);
    }
  }
  await cache.put(new URL(MANIFEST, found.model).href, new Response(found.text, { headers: { 'Content-Type': 'application/json' } }));
}

async function deleteOtherCaches(keep) {
  for (const name of await caches.keys()) {
    if (name.startsWith(PREFIX) && name !== keep && name !== STATE_CACHE) await caches.delete(name);
  }
}

// Makes the current cache complete, or builds the cache of a newer model and
// switches to it. Returns { ok, updated }.
let updating = null;
function update() {
  updating ??= (async () => {
    const now = await loadState();
    const found = await findModel();
    if (!found) {
      // Offline (or no model): what we have is what we serve.
      return { ok: !!now.cache && !!now.manifest, updated: false };
    }
    const name = cacheName(found.version);
    const cache = await caches.open(name);
    await fill(cache, found);
    const updated = now.cache !== null && now.cache !== name;
    if (now.cache !== name || !now.manifest) await saveState({ cache: name, model: found.model, manifest: found.manifest });
    await deleteOtherCaches(name);
    return { ok: true, updated };
  })().finally(() => { updating = null; });
  return updating;
}

self.addEventListener('install', (event) => {
  // Only the shell (small) is fetched here; the page then downloads the model
  // through this worker (with its progress bar), and the model lands in the
  // cache as it passes. The page asks for 'precache' when ready.
  event.waitUntil((async () => {
    const now = await loadState();
    const found = await findModel();
    const name = found ? cacheName(found.version) : now.cache ?? cacheName('none');
    const cache = await caches.open(name);
    await fill(cache, null);
    if (found) await cache.put(new URL(MANIFEST, found.model).href, new Response(found.text, { headers: { 'Content-Type': 'application/json' } }));
    if (!now.cache) await saveState({ cache: name, model: found?.model ?? null, manifest: found?.manifest ?? null });
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    const now = await loadState();
    if (now.cache) await deleteOtherCaches(now.cache);
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data?.type !== 'precache') return;
  event.waitUntil(update().then(async (result) => {
    event.source?.postMessage({ type: 'precached', ...result });
    if (result.updated) {
      for (const client of await self.clients.matchAll()) client.postMessage({ type: 'model-updated' });
    }
  }, (err) => {
    event.source?.postMessage({ type: 'precached', ok: false, error: String(err?.message ?? err) });
  }));
});

function modelFileName(current, url) {
  if (!current.model || !url.startsWith(current.model)) return null;
  const name = url.slice(current.model.length);
  return name === MANIFEST || MODEL_FILES.includes(name) ? name : null;
}

async function respond(event) {
  const { request } = event;
  const url = new URL(request.url);
  const key = url.origin + url.pathname;
  const current = await loadState();
  const cache = current.cache ? await caches.open(current.cache) : null;
  const modelFile = cache && modelFileName(current, key);
  if (modelFile) {
    const hit = await cache.match(key);
    if (hit) return hit;
    try {
      const response = await fetch(request);
      if (response.ok && modelFile !== MANIFEST) {
        event.waitUntil(storeVerified(cache, key, response.clone(), current.manifest?.files?.[modelFile]).catch(() => {}));
      }
      return response;
    } catch {
      return offline(key);
    }
  }
  try {
    const response = await fetch(request);
    if (cache && response.ok && SHELL.includes(key)) event.waitUntil(cache.put(key, response.clone()).catch(() => {}));
    return response;
  } catch {
    const hit = cache && (await cache.match(key) ?? (request.mode === 'navigate' ? await cache.match(SHELL[0]) : undefined));
    return hit ?? offline(key);
  }
}

function offline(url) {
  return new Response(`offline, and ${url} is not cached\n`, { status: 503, statusText: 'Offline', headers: { 'Content-Type': 'text/plain' } });
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (request.headers.has('range')) return;
  event.respondWith(respond(event));
});
