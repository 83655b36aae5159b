// The one place that names the default model. Paths are relative to the
// package root; the first that exists wins, so the shipped model replaces the
// test fixture as soon as it is there (the fixture is not in the npm package).
export const DEFAULT_MODELS = Object.freeze([
  'models/es-en/',
  'tests/fixtures/models/residual-text/',
]);

// The engine, relative to the package root.
export const DEFAULT_WASM = 'dist/residual-mt.wasm';

// The files a model directory holds; manifest.json lists their SHA-256 and size.
export const MODEL_FILES = Object.freeze(['config.json', 'model.safetensors', 'spm.model']);
export const MANIFEST = 'manifest.json';

const PACKAGE_ROOT = new URL('../', import.meta.url);

export function packageUrl(path) {
  return new URL(path, PACKAGE_ROOT);
}

export function defaultModelUrls() {
  return DEFAULT_MODELS.map(packageUrl);
}
