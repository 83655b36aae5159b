// One variant's figures on the shipped model and the test books, in Node or
// in Chromium (no Node modules here): load time, first translation, target
// tokens/s greedy and at beam 5, one sentence a call and batched, peak and
// GEMM GFLOP/s of its build (f32; an int8 variant also its int8 kernel's
// GOP/s against the dot_i16x8 peak, and a relaxed build the relaxed dot's
// peak), and the engine's memory at its peak.
import { gemmFigures, modelGemmShapes, peakRunner } from './kernels.js';
import { isInt8, loadVariant } from './variants.js';
import { hasThreads } from '../../js/util/env.js';
import { BATCH_SENTENCES } from '../../js/defaults.js';

// The 20 words the first translation translates (software text, which the
// default model knows; tests/bench/load_bench.js types the same in the demo).
export const SENTENCE_20_WORDS = 'No se pudo abrir el archivo porque otro programa lo está usando; ' +
  'cierre ese programa y vuelva a intentarlo después.';
export const BATCH = BATCH_SENTENCES; // the API's batch

const round = (x, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

// Target tokens/s (with </s>) of translating `texts`, `batch` a call; also the first hypotheses.
export function throughput(model, texts, batch, options) {
  let tokens = 0;
  const outputs = [];
  const start = performance.now();
  for (let i = 0; i < texts.length; i += batch) {
    for (const hyps of model.translateTexts(texts.slice(i, i + batch), { ...options, batch })) {
      tokens += hyps[0].ids.length + 1;
      outputs.push(hyps[0].text);
    }
  }
  return { tokensPerSecond: tokens / ((performance.now() - start) / 1000), tokens, outputs };
}

// variant: tests/bench/variants.js; readFile(path) -> bytes; texts: source
// sentences; rounds: best of, for the arithmetic figures; relaxedSimd: the
// runtime has it. Returns the variant's figures, or { skipped: why }.
export async function measureVariant(variant, { readFile, texts, targetLanguage, rounds = 3, relaxedSimd }) {
  const needs = [].concat(variant.needs ?? []);
  if (needs.includes('relaxed-simd') && !relaxedSimd) return { about: variant.about, skipped: 'no relaxed SIMD in this runtime' };
  if (needs.includes('threads') && !hasThreads()) return { about: variant.about, skipped: 'no shared memory here (not cross-origin isolated)' };
  // The peaks are measured before and after the rest (best of both): one moment of a shared machine can be a slow one.
  const relaxed = needs.includes('relaxed-simd'), int8 = isInt8(variant);
  const peakKinds = ['f32', ...(int8 ? ['dot_i16'] : []), ...(int8 && relaxed ? ['relaxed_dot_i8'] : [])];
  const runners = peakKinds.map((kind) => peakRunner(kind === 'f32' && relaxed ? 'relaxed_madd' : kind));
  const peaks = peakKinds.map(() => 0);
  const runPeaks = () => runners.forEach((run, i) => { for (let r = 0; r < rounds; r++) peaks[i] = Math.max(peaks[i], run()); });
  runPeaks();
  // First: the load and the first translation, on code the JS engine has not optimized yet.
  const { engine, model, ms: loadMs } = await loadVariant(variant, readFile);
  const search = { targetLanguage, ...variant.options };
  let t = performance.now();
  model.translateTexts([SENTENCE_20_WORDS], search);
  const firstMs = performance.now() - t;
  t = performance.now();
  model.translateTexts([SENTENCE_20_WORDS], search);
  const secondMs = performance.now() - t;

  for (const beam of [1, 5]) model.translateTexts(texts.slice(0, 8), { ...search, beam }); // warm up
  const tokensPerSecond = {};
  let greedy;
  for (const beam of [1, 5]) {
    for (const [label, batch] of [['batch1', 1], ['batched', BATCH]]) {
      const r = throughput(model, texts, batch, { ...search, beam });
      tokensPerSecond[`${beam === 1 ? 'greedy' : 'beam5'}_${label}`] = round(r.tokensPerSecond, 0);
      if (beam === 1 && batch === BATCH) greedy = r.outputs;
    }
  }
  runPeaks();
  const [peak, int8Peak, relaxedDotPeak] = peaks;
  // The kernel the model's 8-bit layers run here: the relaxed dot for all of them (2), else dot_i16x8 for most.
  const int8Kernel = int8 && engine.wasm.exports.rmt_kernel_i8_relaxed_dot() === 2 ? 'relaxed_dot' : 'dot_i16x8';
  const int8KernelPeak = int8Kernel === 'relaxed_dot' ? relaxedDotPeak : int8Peak;
  const gemm = gemmFigures(engine.wasm, modelGemmShapes(model.config), rounds);
  const gemmI8 = int8 ? gemmFigures(engine.wasm, modelGemmShapes(model.config), rounds, true) : null;
  const peakMemory = engine.wasm.memory.buffer.byteLength;
  const threads = engine.threads;
  model.dispose();
  engine.dispose(); // a threaded engine's workers
  return {
    about: variant.about,
    wasm: variant.wasm,
    model: variant.model,
    options: variant.options,
    threads,
    load_ms: round(loadMs),
    first_translation_ms: round(firstMs),
    second_translation_ms: round(secondMs),
    tokens_per_s: tokensPerSecond,
    peak_memory_bytes: peakMemory,
    peak_gflops: round(peak, 2),
    gemm_gflops: round(gemm.gflops, 2),
    gemm_efficiency: round(gemm.gflops / peak, 3),
    gemm_shapes: gemm.shapes.map((s) => ({ ...s, gflops: round(s.gflops, 2) })),
    ...(int8 ? {
      int8_peak_gops: round(int8Peak, 2),
      int8_gemm_gops: round(gemmI8.gflops, 2),
      int8_kernel: int8Kernel,
      int8_gemm_efficiency: round(gemmI8.gflops / int8KernelPeak, 3),
      int8_gemm_shapes: gemmI8.shapes.map(({ gflops, ...s }) => ({ ...s, gops: round(gflops, 2) })),
    } : {}),
    ...(relaxedDotPeak ? { relaxed_dot_peak_gops: round(relaxedDotPeak, 2) } : {}),
    greedy_outputs: greedy,
  };
}
