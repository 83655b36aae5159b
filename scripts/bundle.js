// The demo's modules as three files (web/index.html loads dist/demo.js): the
// page (web/app.js and the library it imports), its worker and the engine's
// worker threads, each one module, bundled by esbuild (a devDependency). A
// page controlled by its service worker pays a round trip through the
// worker's fetch handler for every module it loads: one module instead of
// ~18 (and ~8 for the worker) saves most of the warm reload's first 100 ms
// (docs/load.md). The unbundled modules in js/ stay the library's source.
//
// The bundles live in dist/, a sibling of web/ and js/, so that the URLs the
// library computes from import.meta.url (its worker, the engine's threads,
// the package root: defaults.js packageUrl) resolve as they do from js/:
// defaults.js's `new URL('./worker.js', import.meta.url)` is dist/worker.js.
// Without esbuild (a clone whose devDependencies are not installed) the same
// three files load the modules in js/ instead: slower, the same page.
// build.sh writes them (bash build.sh wasm), and so does `npm start`.
//
//   node scripts/bundle.js      writes dist/demo.js, dist/worker.js, dist/pool-worker.js

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = new URL('../', import.meta.url);

// dist/ file -> its entry module, relative to the repository root.
export const BUNDLES = Object.freeze({
  'demo.js': 'web/app.js',
  'worker.js': 'js/worker.js',
  'pool-worker.js': 'js/pool-worker.js',
});

const ESBUILD_OPTIONS = {
  bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent', minify: true,
  // Node's modules (the library imports them only where it runs in Node),
  // the optional HTML parser for Node (html-tree.js) and the Marian converter stay imports.
  external: ['node:*', 'parse5'],
  plugins: [{
    // The Marian converter (js/marian/load.js and its YAML parser, ~90 KB),
    // imported only for a Marian model, stays out of the bundles: it loads
    // unbundled from js/, beside dist/, when a page asks for one.
    name: 'marian-apart',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/marian\/load\.js$/ }, () => ({ path: '../js/marian/load.js', external: true }));
    },
  }],
};

// Without esbuild: each file loads its entry module unbundled. web/app.js's
// own imports are relative to web/, which is dist/'s sibling: a copy works.
function unbundled(name, entry) {
  if (name === 'demo.js') return readFileSync(new URL(entry, ROOT), 'utf8');
  return `// esbuild was not found (npm install): the module unbundled.\nimport '../${entry}';\n`;
}

// { name: text } of the three files as they are built now, and whether esbuild built them.
export async function demoBundles() {
  let esbuild = null;
  try {
    esbuild = await import('esbuild');
  } catch { /* not installed */ }
  const out = {};
  for (const [name, entry] of Object.entries(BUNDLES)) {
    if (!esbuild) {
      out[name] = unbundled(name, entry);
      continue;
    }
    const result = await esbuild.build({ ...ESBUILD_OPTIONS, entryPoints: [fileURLToPath(new URL(entry, ROOT))], outfile: name });
    out[name] = `// Built by scripts/bundle.js from ${entry}: edit that, not this.\n${result.outputFiles[0].text}`;
  }
  return { files: out, bundled: !!esbuild };
}

export async function writeDemoBundles() {
  const { files, bundled } = await demoBundles();
  const dist = new URL('dist/', ROOT);
  mkdirSync(dist, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(new URL(name, dist), text);
  return bundled;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const bundled = await writeDemoBundles();
  if (!bundled) console.error('scripts/bundle.js: esbuild not found (npm install): dist/demo.js loads the unbundled modules');
}
