// The engine variants `npm run bench -- --json` measures, one row each, in
// Node and in Chromium alike (no Node modules here). A variant:
//   name     its key in the JSON
//   about    what it is, in a few words
//   wasm     the engine build, a path from the repository root
//   model    the model directory (default: the shipped models/es-en/)
//   needs    'relaxed-simd' when the runtime must have relaxed SIMD (else the row is skipped)
//   load({ wasm, files }): optional; { engine, model } from the bytes of the
//            build and of the model's files ({ config, weights, spm }).
//            Default: Engine.load(wasm), then engine.loadModel(files). A
//            threaded engine passes its options here; an int8 model is just
//            another `model` directory.
import { Engine } from '../../js/engine.js';
import { DEFAULT_WASM, RELAXED_WASM } from '../../js/defaults.js';

export const SHIPPED_MODEL = 'models/es-en/';

export const VARIANTS = [
  { name: 'f32', about: 'plain SIMD128 build, f32 arithmetic (f16 weights widened at load)', wasm: DEFAULT_WASM },
  { name: 'relaxed', about: 'relaxed-SIMD build (f32x4.relaxed_madd), f32 arithmetic', wasm: RELAXED_WASM, needs: 'relaxed-simd' },
];

const defaultLoad = async ({ wasm, files }) => {
  const engine = await Engine.load(wasm);
  return { engine, model: engine.loadModel(files) };
};

// { engine, model, ms } of a variant, read with readFile(path) -> bytes
// (Node: the file system; Chromium: fetch); ms: the load from bytes already
// read (compiling the engine, then loading the model), not the reading.
export async function loadVariant(variant, readFile) {
  const dir = variant.model ?? SHIPPED_MODEL;
  const files = { config: await readFile(`${dir}config.json`), weights: await readFile(`${dir}model.safetensors`), spm: await readFile(`${dir}spm.model`) };
  const wasm = await readFile(variant.wasm);
  const start = performance.now();
  const { engine, model } = await (variant.load ?? defaultLoad)({ wasm, files });
  return { engine, model, ms: performance.now() - start };
}
