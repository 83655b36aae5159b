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
  '../js/index.js', '../js/api/translator.js', '../js/api/catalog.js', '../js/load/registry.js', '../js/api/pivot.js', '../js/host/models.js', '../js/host/engine-registry.js', '../js/host/backends.js', '../js/util/port.js', '../js/host/queue.js', '../js/engine/lock.js', '../js/util/languages.js',
  '../js/api/events.js', '../js/util/errors.js', '../js/util/env.js', '../js/util/streams.js', '../js/load/loader.js', '../js/load/files.js', '../js/load/bounded.js', '../js/load/verify.js', '../js/load/copies.js',
  '../js/load/discover.js', '../js/load/engine-fetch.js', '../js/load/cache.js',
  '../js/engine/runner.js', '../js/engine/protocol.js', '../js/worker.js', '../js/engine/binding.js', '../js/engine/wasm.js', '../js/engine/wasm-binary.js', '../js/text/segment.js', '../js/engine/pipeline.js', '../js/defaults.js',
  '../js/text/html.js', '../js/text/html-tree.js', '../js/text/groups.js', '../js/text/page.js', '../js/text/live.js', '../js/engine/threads.js', '../js/pool-worker.js', '../js/api/detector.js', '../js/engine/langid.js',
  // Imported only for a Marian model (scripts/bundle.js leaves them out of the bundles).
  '../js/marian/load.js', '../js/marian/convert.js', '../js/marian/files.js', '../js/marian/vocab.js',
  // and for one whose files are zstd's (Firefox's registry: marian-load.js imports it then).
  '../js/load/zstd/zstd.js', '../js/load/zstd/block.js', '../js/load/zstd/entropy.js', '../js/load/zstd/xxh64.js',
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
