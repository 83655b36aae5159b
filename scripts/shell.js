// The demo's app shell: the files the service worker (web/sw.js) keeps for
// offline use, and dist/shell.json, their SHA-256 and size. The worker makes a
// new version only of files that match shell.json, so a captive portal's page
// or a half-updated server never becomes the cached app. build.sh writes
// shell.json after each build, and `npm start` before serving (edit web/ or
// js/, restart, and the worker picks the change up on the next visit).
//
//   node scripts/shell.js      writes dist/shell.json

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DETECTOR_MODEL, MANIFEST } from '../js/defaults.js';

// Paths relative to web/ (where sw.js is served from); './' is index.html.
export const SHELL = Object.freeze([
  './', 'index.html', 'app.js', 'style.css', 'manifest.webmanifest',
  'icons/icon.svg', 'icons/icon-192.png', 'icons/icon-512.png',
  '../js/index.js', '../js/translator.js', '../js/catalog.js', '../js/registry.js', '../js/pivot.js', '../js/host.js', '../js/backends.js', '../js/port.js', '../js/queue.js', '../js/languages.js',
  '../js/events.js', '../js/errors.js', '../js/env.js', '../js/streams.js', '../js/loader.js', '../js/files.js', '../js/bounded.js', '../js/verify.js', '../js/copies.js',
  '../js/discover.js', '../js/engine-fetch.js', '../js/cache.js',
  '../js/runner.js', '../js/worker.js', '../js/engine.js', '../js/wasm.js', '../js/wasm-binary.js', '../js/segment.js', '../js/pipeline.js', '../js/defaults.js',
  '../js/html.js', '../js/html-tree.js', '../js/page.js', '../js/live.js', '../js/threads.js', '../js/pool-worker.js', '../js/detector.js', '../js/langid.js',
  // Imported only for a Marian model (scripts/bundle.js leaves them out of the bundles).
  '../js/marian-load.js', '../js/marian.js', '../js/marian-files.js', '../js/marian-vocab.js',
  // and for one whose files are zstd's (Firefox's registry: marian-load.js imports it then).
  '../js/zstd.js', '../js/zstd-block.js', '../js/zstd-entropy.js', '../js/xxh64.js',
  '../dist/demo.js', '../dist/worker.js', '../dist/pool-worker.js', '../dist/residual-mt.wasm', '../dist/residual-mt-relaxed.wasm', '../dist/residual-mt-threads.wasm',
  '../dist/residual-mt-relaxed-threads.wasm',
  // The language detector's model (the demo's direction follows the language typed, offline too).
  `../${DETECTOR_MODEL.repoPath}package.json`, `../${DETECTOR_MODEL.repoPath}${DETECTOR_MODEL.file}`,
]);
export const SHELL_MANIFEST = '../dist/shell.json'; // relative to web/, as the paths above
export const SHELL_FORMAT = 'residual-mt-shell/1';

const ROOT = new URL('../', import.meta.url);

// The file behind a shell path: web/ is served at the site's root, js/ and dist/ beside it.
function fileOf(path) {
  if (path.startsWith('../')) return new URL(path.slice(3), ROOT);
  return new URL(path === './' ? 'index.html' : path, new URL('web/', ROOT));
}

// { format, files: { path: { sha256, size } }, modelManifest } of the files
// as they are now; modelManifest: the name of a model's manifest (defaults.js),
// which the worker cannot import.
export function shellManifest() {
  const files = {};
  for (const path of SHELL) {
    const bytes = readFileSync(fileOf(path));
    files[path] = { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
  }
  return { format: SHELL_FORMAT, files, modelManifest: MANIFEST };
}

export function writeShellManifest() {
  const url = fileOf(SHELL_MANIFEST);
  mkdirSync(new URL('./', url), { recursive: true });
  writeFileSync(url, `${JSON.stringify(shellManifest(), null, 1)}\n`);
  return fileURLToPath(url);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(`wrote ${writeShellManifest()}`);
