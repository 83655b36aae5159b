#!/usr/bin/env node
// A small static server for the demo (npm start): web/ at "/", and what the
// page needs from the package at the same relative paths (js/, dist/, model
// directories). application/wasm, COOP/COEP (cross-origin isolated), a strict
// Content-Security-Policy, ETags. Only files inside a mount are served: no
// "..", no symbolic link that leads out of it; a malformed request gets a 400.
//
//   node scripts/serve.js [--port 8080] [--host 127.0.0.1]     (PORT overrides the default)

import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs, readFileSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CATALOG, DEFAULT_MODEL, MANIFEST, MODEL_FILES, PULLED_MODELS } from '../js/defaults.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
  '.model': 'application/octet-stream',
};

// The demo's layout: URL prefix -> directory, and which files may be served:
// of a model, DIR/NAME with NAME one of its files (defaults.js names them) or its package.json.
const MODEL_FILE_NAMES = new Set([...MODEL_FILES, MANIFEST, 'package.json']);
function isModelFile(rest) {
  const [dir, name, ...more] = rest.split('/');
  return dir !== '' && !more.length && MODEL_FILE_NAMES.has(name);
}
// The models `residual-mt models pull --out DIR` wrote (PULLED_MODELS in a
// clone): DIR/catalog.json and DIR/PAIR/NAME, which the demo's menus offer;
// none pulled, an empty catalogue (not a 404 the page's console would show).
export function pulledMount(dir) {
  return { prefix: `/${PULLED_MODELS}`, dir, allow: (rest) => rest === CATALOG || isModelFile(rest),
    missing: (rest) => (rest === CATALOG ? '{ "models": [] }\n' : null) };
}

export function demoMounts(root = ROOT) {
  return [
    { prefix: '/js/', dir: join(root, 'js') },
    { prefix: '/dist/', dir: join(root, 'dist') },
    pulledMount(join(root, PULLED_MODELS)),
    { prefix: '/models/', dir: join(root, 'models'), allow: isModelFile },
    { prefix: '/tests/fixtures/models/', dir: join(root, 'tests/fixtures/models'), allow: isModelFile },
    { prefix: '/', dir: join(root, 'web') },
  ];
}

// The demo page's inline import map (web/index.html: where the default
// model is, so that the page need not ask the server), allowed by its hash.
export function importMapHash(html = readFileSync(join(ROOT, 'web/index.html'), 'utf8')) {
  const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html);
  return map ? `'sha256-${createHash('sha256').update(map[1]).digest('base64')}'` : null;
}

// The demo's first visit starts downloading its default model with the
// page: a Link header asks the browser to preload the model's files (the
// directory the page's import map names), which the library's fetches then
// take over. Only for a navigation to the demo's page without ?model= (a
// page that loads another model would download this one for nothing): the
// service worker's copy of the page, which later visits get, has no such
// header (web/sw.js drops it: the HTTP cache keeps the navigation's headers
// with the page), and these visits read the model from the cache instead.
// (Without the service worker, ?sw=0, a reload preloads the model again.)
const DEMO_PAGE = join(ROOT, 'web/index.html');
export function demoPreload(html = readFileSync(DEMO_PAGE, 'utf8')) {
  const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html);
  const dir = map && JSON.parse(map[1]).imports?.[`${DEFAULT_MODEL.package}/`];
  if (!dir) return null;
  const base = new URL(dir, 'http://localhost/');
  return [MANIFEST, ...MODEL_FILES].map((name) => `<${new URL(name, base).pathname}>; rel=preload; as=fetch; crossorigin`).join(', ');
}
const DEMO_PRELOAD = demoPreload();

// The demo's policy: scripts and workers only from this origin, no eval
// (WebAssembly compilation allowed), no inline script or style but the
// page's import map, no requests to other origins (a ?model=URL link cannot
// make the page load a file from elsewhere), no plugins, no framing.
export const DEMO_CSP = [
  "default-src 'self'", `script-src 'self' 'wasm-unsafe-eval'${importMapHash() ? ` ${importMapHash()}` : ''}`, "worker-src 'self'", "connect-src 'self'",
  "img-src 'self'", "style-src 'self'", "manifest-src 'self'", "object-src 'none'", "base-uri 'none'",
  "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

// Resolves a URL path to { file, dir, missing } inside a mount (lexically), or
// null; missing: what to answer if the file is not there (else a 404).
function locate(mounts, pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.split('/').includes('..')) return null;
  for (const mount of mounts) {
    if (!decoded.startsWith(mount.prefix)) continue;
    const rest = decoded.slice(mount.prefix.length);
    if (mount.allow && !mount.allow(rest)) return null;
    const dir = resolve(mount.dir);
    const file = normalize(join(dir, rest));
    if (file !== dir && !file.startsWith(dir + sep)) return null;
    return { file, dir, missing: mount.missing?.(rest) ?? null };
  }
  return null;
}

// Whether `file` is inside `dir` once symbolic links are followed (a link in
// a served directory may point anywhere on the disk).
async function insideAfterLinks(file, dir) {
  try {
    const [realFile, realDir] = await Promise.all([fs.realpath(file), fs.realpath(dir)]);
    return realFile === realDir || realFile.startsWith(realDir + sep);
  } catch {
    return false;
  }
}

// mounts: [{ prefix, dir, allow? }] (first match wins). Returns an
// http.Server with .stats = { requests, bytes (response bytes sent), full }.
// cors: allow other origins (as a CDN does). csp: the Content-Security-Policy
// header (DEMO_CSP; null for none, as for a page with an inline import map).
// isolated: send COOP and COEP, which make the page cross-origin isolated
// (shared memory: the engine's threads); tests turn it off to see the fallback.
export function createStaticServer({ mounts = demoMounts(), log = false, cors = false, csp = DEMO_CSP, isolated = true } = {}) {
  const stats = { requests: 0, bytes: 0, full: {} }; // full: path -> 200 responses with a body
  const server = createServer((req, res) => {
    stats.requests++;
    serve(req, res).catch((err) => {
      // A bug or an I/O error: this request fails, the server goes on.
      if (log) console.error(`500 ${req.method} ${req.url}: ${err.message}`);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end();
    });
  });

  async function serve(req, res) {
    const headers = {
      ...(isolated ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {}),
      'Cross-Origin-Resource-Policy': cors ? 'cross-origin' : 'same-origin',
      ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
      ...(csp ? { 'Content-Security-Policy': csp } : {}),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    };
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
      stats.bytes += Buffer.byteLength(body);
      res.end(req.method === 'HEAD' ? undefined : body);
      if (log) console.log(`${status} ${req.method} ${req.url}`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let url;
    try {
      url = new URL(req.url, 'http://localhost');
    } catch {
      return send(400, 'bad request: malformed request target\n');
    }
    const found = locate(mounts, url.pathname);
    if (!found) return send(404, 'not found\n');
    let { file } = found;
    let info;
    try {
      info = await fs.stat(file);
      if (info.isDirectory()) {
        if (!url.pathname.endsWith('/')) {
          res.writeHead(301, { ...headers, Location: `${url.pathname}/${url.search}` });
          return res.end();
        }
        file = join(file, 'index.html');
        info = await fs.stat(file);
      }
    } catch {
      return found.missing === null ? send(404, 'not found\n') : send(200, found.missing, MIME[extname(file)]);
    }
    if (!info.isFile() || !await insideAfterLinks(file, found.dir)) return send(404, 'not found\n');
    const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const type = MIME[extname(file).toLowerCase()] ?? 'application/octet-stream';
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ...headers, ETag: etag });
      if (log) console.log(`304 ${req.method} ${req.url}`);
      return res.end();
    }
    const preload = file === DEMO_PAGE && DEMO_PRELOAD && req.headers['sec-fetch-mode'] === 'navigate' && !url.searchParams.has('model');
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': info.size, ETag: etag, ...(preload ? { Link: DEMO_PRELOAD } : {}) });
    if (log) console.log(`200 ${req.method} ${req.url}`);
    if (req.method === 'HEAD') return res.end();
    stats.full[url.pathname] = (stats.full[url.pathname] ?? 0) + 1;
    const stream = createReadStream(file, { highWaterMark: 1 << 20 }); // large chunks: a model file goes out in fewer writes
    stream.on('data', (chunk) => { stats.bytes += chunk.length; });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }
  server.stats = stats;
  return server;
}

async function main() {
  const args = process.argv.slice(2);
  const arg = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const port = Number(arg('--port') ?? process.env.PORT ?? 8080);
  const host = arg('--host') ?? process.env.HOST ?? '127.0.0.1';
  const server = createStaticServer({ log: args.includes('--log') });
  server.on('error', (err) => {
    console.error(`residual-mt serve: ${err.code === 'EADDRINUSE' ? `port ${port} is in use (set PORT)` : err.message}`);
    process.exit(1);
  });
  const { resolveDefaultModel } = await import('../js/load/loader.js');
  try {
    // The page's bundled modules, and the shell the service worker caches
    // (only as listed here), as js/ and web/ are now.
    if (!await (await import('./bundle.js')).writeDemoBundles()) console.warn('residual-mt serve: esbuild not found (npm install): the page loads its modules unbundled');
    (await import('./shell.js')).writeShellManifest();
  } catch (err) {
    console.warn(`residual-mt serve: no offline support (dist/shell.json: ${err.message}); run npm run build`);
  }
  const model = (await resolveDefaultModel()).href.replace(pathToFileURL(ROOT).href, '');
  server.listen(port, host, () => {
    const { port: actual } = server.address();
    // The address it listens on: "localhost" may name ::1 first (Debian's /etc/hosts does), where it does not listen.
    console.log(`residual-mt demo: http://${host.includes(':') ? `[${host}]` : host}:${actual}/`);
    console.log(`  default model: ${model}`);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
