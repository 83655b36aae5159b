// Translation throughput of the WASM engine: sentences/s and target tokens/s
// for batch sizes 1, 8 and 32 at beam 1 and 5, batched vs one sentence at a
// time, on a fixture-sized model, a default-sized model (random weights, the
// shipped model's shape) and, when present, the shipped model on real text.
// The engine is the runtime's default (on this machine's processors, up to
// DEFAULT_THREADS_CAP threads: the threads build in Node). Then the
// relaxed-SIMD build against the plain one (tests/bench/relaxed_bench.js: peak
// and GEMM GFLOP/s, batched greedy tokens/s), 2 threads against 1
// (tests/bench/threads_bench.js) and the tokenizer benchmark (tests/bench/spm_bench.js).
// With --tjs: our engine against transformers.js instead (tests/bench/tjs_bench.js).
//
//   npm run bench                      (or: node tests/bench/bench.js [--quick])
//   npm run -s bench -- --json [--quick]  one JSON object on stdout (tests/bench/report.js; the
//                                      build's output goes to stderr; -s: no npm banner);
//                                      scripts/bench-table.js makes the README's table of it
//   npm run bench -- --tjs [--n 24 --rounds 2 --threads 1,2 --json FILE]

import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Engine } from '../../js/engine/binding.js';
import { hasRelaxedSimd } from '../../js/util/env.js';
import { DEFAULT_SHAPE, randomModel, randomSentences } from './random.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const quick = process.argv.includes('--quick');
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

if (process.argv.includes('--tjs')) {
  const { main } = await import('./tjs_bench.js');
  await main(process.argv.slice(2));
  process.exit(0);
}

if (process.argv.includes('--json')) {
  // One process measures every variant: in Node 20 it needs relaxed SIMD switched on.
  if (!hasRelaxedSimd() && !process.execArgv.includes(RELAXED_FLAG)) {
    const run = spawnSync(process.execPath, [RELAXED_FLAG, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
  const { benchReport } = await import('./report.js');
  console.log(JSON.stringify(await benchReport({ quick }), null, 1));
  process.exit(0);
}

// ---- measurement

function measure(translate, sentences, batch) {
  let tokens = 0;
  const start = performance.now();
  for (let i = 0; i < sentences.length; i += batch) {
    for (const hyps of translate(sentences.slice(i, i + batch))) tokens += hyps[0].ids.length + 1; // + </s>
  }
  const seconds = (performance.now() - start) / 1000;
  return { sentencesPerSecond: sentences.length / seconds, tokensPerSecond: tokens / seconds };
}

function benchModel(label, model, sentences, translate) {
  // Warm up first: V8 compiles wasm with a baseline tier, then optimises hot functions.
  for (const beam of [1, 5]) translate(sentences.slice(0, 8), { beam });
  console.log(`\n${label}`);
  console.log('beam  batch  sentences/s  tokens/s  batched/one-by-one');
  for (const beam of [1, 5]) {
    const run = (batch) => measure((chunk) => translate(chunk, { beam }), sentences, batch);
    const single = run(1);
    console.log(`${String(beam).padStart(4)}  ${'1'.padStart(5)}  ${single.sentencesPerSecond.toFixed(1).padStart(11)}  ${single.tokensPerSecond.toFixed(0).padStart(8)}  1.00`);
    for (const batch of [8, 32]) {
      const r = run(batch);
      console.log(`${String(beam).padStart(4)}  ${String(batch).padStart(5)}  ${r.sentencesPerSecond.toFixed(1).padStart(11)}  ${r.tokensPerSecond.toFixed(0).padStart(8)}  ${(r.sentencesPerSecond / single.sentencesPerSecond).toFixed(2)}`);
    }
  }
}

const engine = await Engine.load();
const count = quick ? 32 : 64;
console.log(`engine: the default build on ${engine.threads} thread${engine.threads === 1 ? '' : 's'}`);

{
  const dir = `${root}tests/fixtures/models/residual-2x2/`;
  const model = engine.loadModel({ config: readFileSync(`${dir}config.json`), weights: readFileSync(`${dir}model.safetensors`) });
  const sentences = randomSentences(count, model.config.vocab_size, 7);
  benchModel(`fixture model residual-2x2 (d=64, 2+2 layers, vocab 101), ${count} random sentences`, model, sentences,
    (chunk, opts) => model.translateIds(chunk, opts));
  model.dispose();
}

{
  const config = DEFAULT_SHAPE;
  const model = engine.loadModel(randomModel(config));
  // Random weights never choose </s>: fix the output length (20 tokens) so runs compare.
  const sentences = randomSentences(count, config.vocab_size, 11);
  benchModel(`default-sized model (random weights: d=256, ffn 1024, 6+2 layers, vocab 8000), ${count} sentences, 20 target tokens each`,
    model, sentences, (chunk, opts) => model.translateIds(chunk, { ...opts, maxLenA: 0, maxLenB: 20, minLen: 20 }));
  model.dispose();
}

const shipped = `${root}models/es-en/`;
if (existsSync(`${shipped}model.safetensors`)) {
  const read = (f) => readFileSync(`${shipped}${f}`);
  const model = engine.loadModel({ config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') });
  // Spanish verses of the test books (tests/fixtures/shipped-sample.json).
  const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
  let texts = sample.cases.filter((c) => c.source_language === 'es').map((c) => c.text);
  while (texts.length < count) texts = texts.concat(texts);
  texts = texts.slice(0, count);
  const langs = model.config.languages?.target_lang_tokens;
  const targetLanguage = langs ? 'en' : undefined;
  benchModel(`shipped model models/es-en, es->en, ${count} Spanish test-book verses (12 distinct, repeated)`, model, texts,
    (chunk, opts) => model.translateTexts(chunk, { ...opts, targetLanguage }));
  model.dispose();
} else {
  console.log('\n(models/es-en not present: shipped-model benchmark skipped)');
}

// The relaxed-SIMD build against the plain one, side by side in a Node with relaxed SIMD on.
console.log('');
spawnSync(process.execPath, [RELAXED_FLAG, `${root}tests/bench/relaxed_bench.js`, ...(quick ? ['--quick'] : [])],
  { stdio: 'inherit' });

// 2 threads against 1, side by side.
console.log('');
spawnSync(process.execPath, [`${root}tests/bench/threads_bench.js`, ...(quick ? ['--quick'] : [])], { stdio: 'inherit' });

const spmBench = `${root}tests/bench/spm_bench.js`;
if (existsSync(spmBench) && !quick) {
  console.log('');
  spawnSync(process.execPath, [spmBench], { stdio: 'inherit' });
}
