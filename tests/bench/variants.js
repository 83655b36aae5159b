// The engine variants `npm run bench -- --json` measures, one row each, in
// Node and in Chromium alike (no Node modules here). A variant:
//   name     its key in the JSON
//   about    what it is, in a few words
//   wasm     the engine build, a path from the repository root
//   model    the model directory (default: the shipped models/es-en/)
//   needs    what the runtime must have, else the row is skipped: 'relaxed-simd' (relaxed SIMD),
//            'threads' (shared memory: a cross-origin isolated page), or an array of them
//   options  search options for every translation (default: the engine's)
//   load({ wasm, files }): optional; { engine, model } from the bytes of the
//            build and of the model's files ({ config, weights, spm }).
//            Default: Engine.load(wasm), then engine.loadModel(files). A
//            threaded engine passes its options here; an int8 model is just
//            another `model` directory.
import { Engine } from '../../js/engine/binding.js';
import { DEFAULT_WASM, RELAXED_THREADS_WASM, RELAXED_WASM, THREADS_WASM } from '../../js/defaults.js';

// The shipped model is int8 (models/quantize.py); the same weights before
// quantization, in float16, are models/es-en-f16/ (models/es-en/CARD.md).
export const SHIPPED_MODEL = 'models/es-en/';
export const FLOAT_MODEL = 'models/es-en-f16/';
// Whether a variant runs the int8 kernels: its model is the shipped one.
export const isInt8 = (variant) => (variant.model ?? SHIPPED_MODEL) === SHIPPED_MODEL;
const BENCH_THREADS = 2;

// The shipped model's config without "output_layer": its output layer in
// float32, as model 0.4.0 computed it (the same weights).
const floatOutputLoad = async ({ wasm, files }) => {
  const engine = await Engine.load(wasm);
  const config = JSON.parse(new TextDecoder().decode(files.config));
  delete config.output_layer;
  return { engine, model: engine.loadModel({ ...files, config: JSON.stringify(config) }) };
};

const threadedLoad = async ({ wasm, files }) => {
  const engine = await Engine.load(wasm, { threads: BENCH_THREADS });
  return { engine, model: engine.loadModel(files) };
};

export const VARIANTS = [
  { name: 'f32', about: 'plain SIMD128 build, f32 arithmetic (f16 weights widened at load)', wasm: DEFAULT_WASM, model: FLOAT_MODEL },
  { name: 'f32_all_words', about: 'f32 without the lexical shortlist: the output layer scores all 8,000 words', wasm: DEFAULT_WASM, model: FLOAT_MODEL, options: { shortlist: false } },
  { name: 'relaxed', about: 'relaxed-SIMD build (f32x4.relaxed_madd), f32 arithmetic', wasm: RELAXED_WASM, model: FLOAT_MODEL, needs: 'relaxed-simd' },
  { name: 'int8', about: 'plain SIMD128 build, int8 weights and activations (i32x4.dot_i16x8_s), the output layer in 16 bits', wasm: DEFAULT_WASM, model: SHIPPED_MODEL },
  { name: 'int8_all_words', about: 'int8 without the lexical shortlist', wasm: DEFAULT_WASM, model: SHIPPED_MODEL, options: { shortlist: false } },
  { name: 'int8_float_output', about: 'int8 with the output layer in float32 (model 0.4.0: config without "output_layer")', wasm: DEFAULT_WASM, model: SHIPPED_MODEL, load: floatOutputLoad },
  { name: 'int8_relaxed', about: 'relaxed-SIMD build, int8 (relaxed_dot_i8x16_i7x16 where the runtime computes it exactly: fc2; every 8-bit layer with VNNI)', wasm: RELAXED_WASM, model: SHIPPED_MODEL, needs: 'relaxed-simd' },
  { name: 'threads', about: `threads build on ${BENCH_THREADS} threads, f32`, wasm: THREADS_WASM, model: FLOAT_MODEL, needs: 'threads', load: threadedLoad },
  { name: 'int8_threads', about: `threads build on ${BENCH_THREADS} threads, int8`, wasm: THREADS_WASM, model: SHIPPED_MODEL, needs: 'threads', load: threadedLoad },
  { name: 'int8_relaxed_threads', about: `relaxed threads build on ${BENCH_THREADS} threads, int8 (a cross-origin isolated page's engine in Chromium)`, wasm: RELAXED_THREADS_WASM, model: SHIPPED_MODEL, needs: ['relaxed-simd', 'threads'], load: threadedLoad },
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
