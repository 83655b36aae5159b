// The package's fixed names and paths, each defined here once.

import { hasRelaxedSimd } from './env.js';

// The default model: its own npm package (the directory models/es-en/ of this
// repository, with its package.json), found in this order (loader.js):
// installed next to residual-mt, then the repository's copy, then `url`, the
// package at its pinned version on an npm CDN.
const MODEL_PACKAGE = 'residual-mt-es-en';
const MODEL_VERSION = '0.2.0'; // models/es-en/package.json's version
export const DEFAULT_MODEL = Object.freeze({
  package: MODEL_PACKAGE,
  version: MODEL_VERSION,
  repoPath: 'models/es-en/',
  url: `https://cdn.jsdelivr.net/npm/${MODEL_PACKAGE}@${MODEL_VERSION}/`,
});

// The engine, relative to the package root: two builds of one source, the
// plain SIMD128 one, and the relaxed-SIMD one (fused multiply-adds) that
// runtimes with relaxed SIMD get by default (defaultWasmUrl, the one place
// the choice is made).
export const DEFAULT_WASM = 'dist/residual-mt.wasm';
export const RELAXED_WASM = 'dist/residual-mt-relaxed.wasm';

// The files a model directory holds; manifest.json lists their SHA-256 and size.
export const MODEL_FILES = Object.freeze(['config.json', 'model.safetensors', 'spm.model']);
export const MANIFEST = 'manifest.json';

// Input usage (tokens) one translate() call may have; a QuotaExceededError
// past it. Long text is split into sentences, so this bounds only the work and
// memory of one call (a few MB of text).
export const INPUT_QUOTA = 1 << 20;

const PACKAGE_ROOT = new URL('../', import.meta.url);

export function packageUrl(path) {
  return new URL(path, PACKAGE_ROOT);
}

// The engine this runtime loads when none is given.
export function defaultWasmUrl() {
  return packageUrl(hasRelaxedSimd() ? RELAXED_WASM : DEFAULT_WASM);
}
