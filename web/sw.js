// Service worker: keeps the app shell, the engine and the default
// model in one versioned cache so that the demo loads and translates offline.
//
// - One cache per version: residual-mt-v1-<hash of the shell's shell.json>-<first
//   16 hex of the SHA-256 of the model's manifest.json>. Everything in the
//   current cache is served cache-first, so a page gets one consistent
//   version; other requests go to the network.
// - The page registers this worker once it is ready (its first download goes
//   straight to the network, at full speed). Install caches the shell (HTML,
//   JS, CSS, wasm, icons: the files dist/shell.json lists, each stored only if
//   its SHA-256 and size match it, so a captive portal's page never becomes the
//   app) and the model's manifest; then the page asks for 'precache', which
//   adds the model files from the HTTP cache (the page has just downloaded
//   them: no second download; the network otherwise), each stored only if its
//   SHA-256 matches the manifest.
// - 'precache' also looks for a newer shell or model: a new version is built
//   completely in a new cache (unchanged files copied, changed ones downloaded
//   and verified) and only then made current; the old cache is deleted. A page
//   never gets files of two versions: each page (and its worker) keeps being
//   served from the cache it started with, which is deleted once it is gone.
//   These pins are stored in the state cache: the browser stops an idle
//   worker, and the next one must still know which version each live page uses.
//
// A classic script (module service workers are not everywhere yet): the page
// passes the model it uses (js/load/loader.js resolves the default) in the script
// URL (?models=URL). The model's files are the ones its manifest lists, and
// the manifest's name is js/defaults.js's, which shell.json carries (js/shell.js).

const DEFAULT_MODELS = (new URL(self.location).searchParams.get('models') ?? '').split(',').filter(Boolean);

const SCHEMA = 'v1';
const PREFIX = 'residual-mt-';
const STATE_CACHE = `${PREFIX}state`;
const STATE_KEY = new URL('./__residual-mt-state__', self.location).href;
const PINS_KEY = new URL('./__residual-mt-pins__', self.location).href;
const SHELL_MANIFEST = new URL('../dist/shell.json', self.location).href; // as in scripts/shell.js
const SHELL_FORMAT = 'residual-mt-shell/1';
const INDEX = new URL('./', self.location).href;
// Absolute, or relative to the package root (the parent of js/).
const MODEL_CANDIDATES = DEFAULT_MODELS.map((path) => new URL(path, new URL('../', self.location)).href);
const JSON_HEADERS = { 'Content-Type': 'application/json' };

let state = null; // { cache, model, manifest } of the current version

async function loadState() {
  if (state) return state;
  const hit = await (await caches.open(STATE_CACHE)).match(STATE_KEY);
  state = hit ? await hit.json() : { cache: null, model: null, manifest: null };
  return state;
}

async function saveState(next) {
  await (await caches.open(STATE_CACHE)).put(STATE_KEY, new Response(JSON.stringify(next), { headers: JSON_HEADERS }));
  state = next;
}

async function sha256Hex(data) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

// A copy of `response` to cache, if its bytes match the entry { sha256, size }; else null.
// Without a Link header: the server's preload of the model for a first visit
// (scripts/serve.js), which the HTTP cache may have kept with the page, must not
// come with the copy later visits get (they read the model from the cache).
async function verified(response, entry) {
  if (!response.ok || !entry) return null;
  const buffer = await response.arrayBuffer();
  if ((entry.size !== undefined && entry.size !== buffer.byteLength) || await sha256Hex(buffer) !== entry.sha256) return null;
  const headers = new Headers(response.headers);
  headers.set('Content-Length', String(buffer.byteLength));
  headers.delete('Content-Encoding');
  headers.delete('Link');
  return new Response(buffer, { status: 200, headers });
}

// The shell as the network has it, every file checked against shell.json:
// { responses: [[url, Response]], hash }, or null (offline, or a file that does not match).
async function fetchShell() {
  try {
    const response = await fetch(SHELL_MANIFEST, { cache: 'no-cache' });
    if (!response.ok) return null;
    const text = await response.text();
    const manifest = JSON.parse(text);
    if (manifest?.format !== SHELL_FORMAT || typeof manifest.files !== 'object') return null;
    const responses = await Promise.all(Object.entries(manifest.files).map(async ([path, entry]) => {
      const url = new URL(path, self.location).href;
      const checked = await verified(await fetch(url, { cache: 'no-cache' }), entry);
      if (!checked) throw new Error(`${url} does not match shell.json`);
      return [url, checked];
    }));
    if (typeof manifest.modelManifest !== 'string') return null;
    return { responses, hash: (await sha256Hex(new TextEncoder().encode(text))).slice(0, 8), modelManifest: manifest.modelManifest };
  } catch {
    return null;
  }
}

// The files a model's manifest lists (config.json, ...).
const modelFiles = (manifest) => Object.keys(manifest?.files ?? {});

// The default model as the network has it: { model, manifest, manifestUrl,
// text, version }, null when there is none, { offline: true } when the
// network fails. name: the manifest's file name (shell.json's modelManifest).
async function findModel(name) {
  for (const model of MODEL_CANDIDATES) {
    const manifestUrl = new URL(name, model).href;
    let response;
    try {
      response = await fetch(manifestUrl, { cache: 'no-cache' });
    } catch {
      return { offline: true };
    }
    if (!response.ok) continue;
    const text = await response.text();
    try {
      const manifest = JSON.parse(text);
      const version = (await sha256Hex(new TextEncoder().encode(text))).slice(0, 16);
      return { model, manifest, manifestUrl, text, version };
    } catch {
      continue;
    }
  }
  return null;
}

const cacheName = (shellHash, modelVersion) => `${PREFIX}${SCHEMA}-${shellHash}-${modelVersion}`;

// Puts a model file in `cache` if its bytes match the manifest entry.
async function storeVerified(cache, url, response, entry) {
  const checked = await verified(response, entry);
  if (checked) await cache.put(url, checked);
  return !!checked;
}

// Model files being stored from a page's download: url -> Promise.
const storing = new Map();

function storeFromPage(cache, url, response, entry) {
  const done = storeVerified(cache, url, response, entry).catch(() => false).finally(() => storing.delete(url));
  storing.set(url, done);
  return done;
}

// Adds the model files `cache` lacks: from `previous` (the old cache) when the
// manifest says the file did not change, else from the HTTP cache (the page
// has just downloaded them), else from the network.
async function fillModel(cache, found, previous) {
  for (const name of modelFiles(found.manifest)) {
    const url = new URL(name, found.model).href;
    await storing.get(url);
    if (await cache.match(url)) continue;
    const entry = found.manifest.files?.[name];
    const old = previous && previous.state.model === found.model && previous.state.manifest?.files?.[name]?.sha256 === entry?.sha256
      ? await previous.cache.match(url) : undefined;
    if (old && await storeVerified(cache, url, old, entry)) continue;
    if (await storeVerified(cache, url, await fetch(url, { cache: 'force-cache' }), entry)) continue;
    const response = await fetch(url, { cache: 'no-cache' });
    if (!await storeVerified(cache, url, response, entry)) {
      throw new Error(`${url} could not be cached (HTTP ${response.status}, or it does not match ${found.manifestUrl})`);
    }
  }
}

// Whether the current cache holds the whole model.
async function complete(current) {
  if (!current.cache || !current.model) return false;
  const cache = await caches.open(current.cache);
  for (const name of modelFiles(current.manifest)) if (!await cache.match(new URL(name, current.model).href)) return false;
  return true;
}

// Each page (client) is served from the version it started with, even if a
// newer one becomes current while it loads; that cache is kept while it lives.
// The pins live in the state cache too, for the next worker.
let pins = null; // Promise<Map client id -> cache name>
let pinsSaved = Promise.resolve();

function loadPins() {
  pins ??= (async () => {
    const hit = await (await caches.open(STATE_CACHE)).match(PINS_KEY);
    return new Map(Object.entries(hit ? await hit.json() : {}));
  })();
  return pins;
}

function savePins(map) {
  const body = JSON.stringify(Object.fromEntries(map));
  pinsSaved = pinsSaved.catch(() => {}).then(async () => {
    await (await caches.open(STATE_CACHE)).put(PINS_KEY, new Response(body, { headers: JSON_HEADERS }));
  });
  return pinsSaved;
}

// The caches this worker has opened, by name: each request needs its page's,
// and opening (or asking whether one exists) is a round trip to the browser.
// A cache this worker deletes is forgotten.
const opened = new Map();
function openCache(name) {
  if (!opened.has(name)) opened.set(name, caches.open(name));
  return opened.get(name);
}

async function cacheFor(event, current) {
  const id = event.resultingClientId || event.clientId;
  const pinned = await loadPins();
  let name = id ? pinned.get(id) : undefined;
  if (!name || !(opened.has(name) || await caches.has(name))) {
    name = current.cache;
    if (id && name) {
      pinned.set(id, name);
      event.waitUntil(savePins(pinned)); // the response need not wait for it
    }
  }
  return name ? openCache(name) : null;
}

async function deleteOtherCaches(keep) {
  const alive = new Set((await self.clients.matchAll({ includeUncontrolled: true, type: 'all' })).map((c) => c.id));
  const pinned = await loadPins();
  const before = pinned.size;
  for (const id of pinned.keys()) if (!alive.has(id)) pinned.delete(id);
  if (pinned.size !== before) await savePins(pinned);
  const inUse = new Set(pinned.values());
  for (const name of await caches.keys()) {
    if (name.startsWith(PREFIX) && name !== keep && name !== STATE_CACHE && !inUse.has(name)) {
      opened.delete(name);
      await caches.delete(name);
    }
  }
}

// Builds (or completes) the cache of what the network has now and makes it
// current. withModel: also cache the model files. Returns { ok, updated }.
let updating = null;
function update({ withModel }) {
  const run = (updating ?? Promise.resolve()).catch(() => {}).then(async () => {
    const now = await loadState();
    const shell = await fetchShell();
    const found = shell && await findModel(shell.modelManifest);
    // Offline, or no model on the server: what we have is what we serve.
    if (!shell || found?.offline || (!found && now.cache)) return { ok: await complete(now), updated: false };
    const name = cacheName(shell.hash, found?.version ?? 'none');
    const cache = await openCache(name);
    if (name !== now.cache) {
      await Promise.all(shell.responses.map(([url, response]) => cache.put(url, response)));
      if (found) await cache.put(found.manifestUrl, new Response(found.text, { headers: JSON_HEADERS }));
    }
    const previous = now.cache && now.cache !== name ? { cache: await caches.open(now.cache), state: now } : null;
    if (found && withModel) await fillModel(cache, found, previous);
    const updated = !!now.cache && now.cache !== name && withModel;
    if (name !== now.cache && (withModel || !now.cache)) {
      await saveState({ cache: name, model: found?.model ?? null, manifest: found?.manifest ?? null });
    }
    if (withModel) await deleteOtherCaches(state.cache);
    return { ok: !!found || !!now.manifest, updated };
  });
  updating = run;
  return run;
}

self.addEventListener('install', (event) => {
  event.waitUntil(update({ withModel: false }).then(() => self.skipWaiting()));
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
  const { id } = event.data; // echoed, so that a caller can tell its answer from another's
  event.waitUntil(update({ withModel: true }).then(async (result) => {
    event.source?.postMessage({ type: 'precached', id, ...result });
    if (result.updated) {
      for (const client of await self.clients.matchAll()) client.postMessage({ type: 'updated' });
    }
  }, (err) => {
    event.source?.postMessage({ type: 'precached', id, ok: false, error: String(err?.message ?? err) });
  }));
});

function modelFileName(current, url) {
  if (!current.model || !url.startsWith(current.model)) return null;
  const name = url.slice(current.model.length);
  return modelFiles(current.manifest).includes(name) ? name : null;
}

function offline(url) {
  return new Response(`offline, and ${url} is not cached\n`, { status: 503, statusText: 'Offline', headers: { 'Content-Type': 'text/plain' } });
}

async function respond(event) {
  const { request } = event;
  const url = new URL(request.url);
  const key = url.origin + url.pathname;
  const current = await loadState();
  const cache = await cacheFor(event, current);
  const hit = cache && await cache.match(key);
  if (hit) return hit;
  try {
    const response = await fetch(request);
    // A model file of the current version downloaded by a controlled page: keep it.
    const name = cache && response.ok && modelFileName(current, key);
    if (name && !storing.has(key)) event.waitUntil(storeFromPage(cache, key, response.clone(), current.manifest?.files?.[name]));
    return response;
  } catch {
    const fallback = cache && request.mode === 'navigate' ? await cache.match(INDEX) : undefined;
    return fallback ?? offline(key);
  }
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (request.headers.has('range')) return;
  event.respondWith(respond(event));
});
