// `npm run bench -- --json`: one JSON object, from this one process, on the
// shipped model (models/es-en) and the test books (tests/fixtures/test-books,
// es -> en): the machine; peak_gflops, gemm_gflops and gemm_efficiency (the
// plain build, f32); then for each variant (tests/bench/variants.js) in Node
// and in Chromium: target tokens/s greedy and beam 5, one sentence a call and
// batched, load_ms, first_translation_ms, peak_memory_bytes, the build's
// peak and GEMM GFLOP/s, the wasm's bytes and gzipped bytes, and how many
// greedy translations equal f32's; and the demo page's load in Chromium
// (tests/bench/load_bench.js: demo_cold_ready_ms, demo_warm_ready_ms,
// first_translation_ms). Progress goes to stderr.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { demoMounts } from '../../scripts/serve.js';
import { hasRelaxedSimd } from '../../js/util/env.js';
import { MODEL_FILES } from '../../js/defaults.js';
import { withServer } from '../lib/server.js';
import { CHROMIUM, chromiumVersion, demoLoadBench, launchChromium } from './load_bench.js';
import { BATCH, SENTENCE_20_WORDS, measureVariant } from './measure.js';
import { SHIPPED_MODEL, VARIANTS } from './variants.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const TEST_BOOKS = 'tests/fixtures/test-books/';
// The first 64 of the 191 verses: every figure of a run within about three minutes
// (the batch-1 beam-5 pass is the slow one).
const FULL_SENTENCES = 64;
const log = (text) => process.stderr.write(`bench: ${text}\n`);

function testBooks(count) {
  const lines = readFileSync(`${root}${TEST_BOOKS}test.es`, 'utf8').split('\n').filter(Boolean);
  return count ? lines.slice(0, count) : lines;
}

// Greedy translations equal to f32's (same runtime), then the outputs dropped.
function compareOutputs(variants) {
  const base = variants.f32?.greedy_outputs;
  for (const v of Object.values(variants)) {
    if (base && v.greedy_outputs) v.greedy_equal_to_f32 = `${v.greedy_outputs.filter((o, i) => o === base[i]).length}/${base.length}`;
  }
  for (const v of Object.values(variants)) delete v.greedy_outputs;
  return variants;
}

// A variant's figures over passes: each its best (throughput and GFLOP/s
// the highest, times the lowest). The passes go over all the variants in
// turn, so a busy moment of a shared machine costs one variant one pass, and
// ratios between variants come from figures measured minutes apart at most.
function bestOf(a, b) {
  if (!a || a.skipped) return b;
  const out = { ...a, tokens_per_s: {} };
  for (const key of Object.keys(a.tokens_per_s)) out.tokens_per_s[key] = Math.max(a.tokens_per_s[key], b.tokens_per_s[key]);
  for (const key of ['load_ms', 'first_translation_ms', 'second_translation_ms']) out[key] = Math.min(a[key], b[key]);
  for (const key of ['peak_gflops', 'gemm_gflops', 'peak_memory_bytes', 'int8_peak_gops', 'int8_gemm_gops', 'relaxed_dot_peak_gops']) {
    if (key in a) out[key] = Math.max(a[key], b[key]);
  }
  out.gemm_efficiency = Math.round((out.gemm_gflops / out.peak_gflops) * 1000) / 1000;
  if (b.gemm_gflops > a.gemm_gflops) out.gemm_shapes = b.gemm_shapes;
  if ('int8_gemm_gops' in a) {
    const peak = out.int8_kernel === 'relaxed_dot' ? out.relaxed_dot_peak_gops : out.int8_peak_gops;
    out.int8_gemm_efficiency = Math.round((out.int8_gemm_gops / peak) * 1000) / 1000;
    if (b.int8_gemm_gops > a.int8_gemm_gops) out.int8_gemm_shapes = b.int8_gemm_shapes;
  }
  return out;
}

async function inNode(options) {
  const readFile = async (path) => {
    const b = readFileSync(`${root}${path}`);
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  };
  const variants = {};
  for (let pass = 1; pass <= options.passes; pass++) {
    for (const variant of VARIANTS) {
      log(`node: ${variant.name} (pass ${pass} of ${options.passes})`);
      const figures = await measureVariant(variant, { ...options, readFile, relaxedSimd: hasRelaxedSimd() });
      variants[variant.name] = bestOf(variants[variant.name], figures);
    }
  }
  return compareOutputs(variants);
}

// The same figures in Chromium: tests/bench/measure.js in an empty page of
// the demo's server, the files fetched from it.
async function inChromium(options) {
  const { context, close } = await launchChromium();
  try {
    const mounts = [{ prefix: '/tests/bench/', dir: `${root}tests/bench` }, { prefix: `/${TEST_BOOKS}`, dir: `${root}${TEST_BOOKS}` },
      ...demoMounts()];
    return await withServer({ mounts }, async (base) => {
      const page = context.pages()[0] ?? await context.newPage();
      await page.goto(`${base}tests/bench/page.html`);
      const variants = {};
      for (let pass = 1; pass <= options.passes; pass++) for (const { name } of VARIANTS) {
        log(`chromium: ${name} (pass ${pass} of ${options.passes})`);
        const figures = await page.evaluate(async ([variantName, opts]) => {
          const { measureVariant } = await import('/tests/bench/measure.js');
          const { VARIANTS } = await import('/tests/bench/variants.js');
          const { hasRelaxedSimd } = await import('/js/util/env.js');
          const readFile = async (path) => new Uint8Array(await (await fetch(`/${path}`)).arrayBuffer());
          const variant = VARIANTS.find((v) => v.name === variantName);
          return measureVariant(variant, { ...opts, readFile, relaxedSimd: hasRelaxedSimd() });
        }, [name, options]);
        variants[name] = bestOf(variants[name], figures);
      }
      return compareOutputs(variants);
    });
  } finally {
    await close();
  }
}

function machine() {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? null,
    cores: cpu.length,
    memory_bytes: totalmem(),
    os: `${type()} ${release()}`,
    node: process.version,
    chromium: existsSync(CHROMIUM) ? chromiumVersion() : null,
  };
}

function sizes(variant) {
  const wasm = readFileSync(`${root}${variant.wasm}`);
  const dir = variant.model ?? SHIPPED_MODEL;
  const modelBytes = MODEL_FILES.reduce((n, f) => n + statSync(`${root}${dir}${f}`).size, 0);
  const modelGzip = MODEL_FILES.reduce((n, f) => n + gzipSync(readFileSync(`${root}${dir}${f}`), { level: 9 }).length, 0);
  return { wasm_bytes: wasm.length, wasm_gzip_bytes: gzipSync(wasm, { level: 9 }).length, model_bytes: modelBytes, model_gzip_bytes: modelGzip };
}

// quick: fewer sentences, rounds, passes and page loads (a smoke run, not figures to quote).
export async function benchReport({ quick = false } = {}) {
  const started = Date.now();
  const texts = testBooks(quick ? 24 : FULL_SENTENCES);
  const options = { texts, targetLanguage: 'en', rounds: quick ? 1 : 3, passes: quick ? 1 : 3 };
  const config = JSON.parse(readFileSync(`${root}${SHIPPED_MODEL}config.json`, 'utf8'));
  const node = await inNode(options);
  let chromium = null, demo = null;
  if (existsSync(CHROMIUM)) {
    chromium = await inChromium(options);
    log('chromium: the demo page\'s load');
    demo = await demoLoadBench({ runs: quick ? 1 : 3 });
  } else {
    log(`${CHROMIUM} not found: the Chromium figures are left out`);
  }
  const f32 = node.f32;
  return {
    date: new Date().toISOString(),
    quick,
    machine: machine(),
    model: {
      dir: SHIPPED_MODEL,
      shape: Object.fromEntries(['style', 'd_model', 'ffn_dim', 'n_heads', 'encoder_layers', 'decoder_layers', 'vocab_size'].map((k) => [k, config[k]])),
    },
    workload: {
      texts: `the first ${texts.length} lines of ${TEST_BOOKS}test.es (Joel, Jonah, Titus, Philemon; Reina-Valera 1909), es -> en`,
      sentences: texts.length,
      batched: BATCH,
      tokens: 'target tokens including </s>, per second of translateTexts (tokenizing included)',
      first_translation: `${SENTENCE_20_WORDS} (20 words, the engine's default search: beam 5), right after the load`,
      load: 'compiling the engine and loading the model from bytes already in memory (no download)',
      peak: 'a loop of 8 independent f32x4 multiply-adds in registers (relaxed: relaxed_madd), best of rounds',
      gemm: 'rmt_kernel_gemm_f32 on the model\'s shapes (gemm_shapes), total flops over total time',
      int8_peak: 'int8 variants: the same loop of i32x4.dot_i16x8_s + i32x4.add (GOP/s, a multiply-add counting 2); relaxed_dot_peak: of i32x4.relaxed_dot_i8x16_i7x16_add_s',
      int8_gemm: 'int8 variants: rmt_kernel_gemm_i8 on the same shapes (int8_gemm_shapes; activations quantized inside; the ReLU-fed ones as fc2 runs), GOP/s; int8_gemm_efficiency: of the peak of int8_kernel, the instruction the 8-bit layers run here',
      peak_memory: 'the engine\'s linear memory at the end (it only grows)',
      passes: `${options.passes} passes over all the variants in turn; each figure the best of its passes (load and first translation: the lowest)`,
    },
    peak_gflops: f32.peak_gflops,
    gemm_gflops: f32.gemm_gflops,
    gemm_efficiency: f32.gemm_efficiency,
    sizes: Object.fromEntries(VARIANTS.map((v) => [v.name, sizes(v)])),
    node,
    chromium,
    demo_cold_ready_ms: demo?.demo_cold_ready_ms ?? null,
    demo_warm_ready_ms: demo?.demo_warm_ready_ms ?? null,
    first_translation_ms: demo?.first_translation_ms ?? null,
    demo,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}
