// The threads build on 2 threads (dist/residual-mt-threads.wasm) against one
// thread (dist/residual-mt.wasm, the plain SIMD128 build it is compiled from),
// both loaded in this one process, in rounds that alternate between them;
// each figure is the best of its rounds (the machine is shared):
//   - greedy, batched (32 sentences a call): target tokens/s on a
//     default-sized random model (20 target tokens each), and on the shipped model;
//   - greedy, one sentence a call (batch-1 latency): ms per sentence, same inputs.
// Outputs are compared too (they must be identical).
//
//   node tests/bench/threads_bench.js [--quick] [--threads N] [--min-macs N]

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../js/engine.js';
import { DEFAULT_WASM, THREADS_WASM, packageUrl } from '../../js/defaults.js';
import { DEFAULT_SHAPE, randomModel, randomSentences } from './random.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const quick = argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;
const THREADS = option('--threads', 2);

if (readFileSync(packageUrl(THREADS_WASM)).equals(readFileSync(packageUrl(DEFAULT_WASM)))) {
  console.log(`${THREADS_WASM} is a copy of the plain build (built without clang-16): threads benchmark skipped`);
  process.exit(0);
}

// How to make each engine (the way an application would: Engine.load's threads option).
const one = await Engine.load(packageUrl(DEFAULT_WASM), { threads: 1 });
const many = await Engine.load(packageUrl(THREADS_WASM), { threads: THREADS });
if (argv.includes('--min-macs')) many.wasm.exports.rmt_threads_set_min_macs(option('--min-macs'));
console.log(`threads build on ${many.threads} threads vs the plain build on 1, one process, best of ${ROUNDS} alternating rounds`);

// Target tokens/s and ms per call of translating `inputs` `per` at a time; also the outputs.
function translateAll(translate, inputs, per) {
  let tokens = 0;
  const outputs = [];
  const start = performance.now();
  for (let i = 0; i < inputs.length; i += per) {
    for (const hyps of translate(inputs.slice(i, i + per))) {
      tokens += hyps[0].ids.length + 1; // + </s>
      outputs.push(hyps[0].ids.join(' '));
    }
  }
  const ms = performance.now() - start;
  return { tokensPerSecond: tokens / (ms / 1000), msPerCall: ms / Math.ceil(inputs.length / per), outputs };
}

function sideBySide(label, translators, inputs, per) {
  translators.forEach((t) => t(inputs.slice(0, 8))); // warm up: V8 tiers up hot wasm functions
  const best = translators.map(() => ({ tokensPerSecond: 0, msPerCall: Infinity }));
  let outputs;
  for (let r = 0; r < ROUNDS; r++) {
    outputs = translators.map((t, i) => {
      const got = translateAll(t, inputs, per);
      best[i].tokensPerSecond = Math.max(best[i].tokensPerSecond, got.tokensPerSecond);
      best[i].msPerCall = Math.min(best[i].msPerCall, got.msPerCall);
      return got.outputs;
    });
  }
  const same = outputs[0].filter((o, i) => o === outputs[1][i]).length;
  const [a, b] = best;
  console.log(`${label.padEnd(50)} ${a.tokensPerSecond.toFixed(0).padStart(7)} ${b.tokensPerSecond.toFixed(0).padStart(7)}  ` +
    `${(b.tokensPerSecond / a.tokensPerSecond).toFixed(2).padStart(5)}x   ms/call ${a.msPerCall.toFixed(2).padStart(7)} ` +
    `${b.msPerCall.toFixed(2).padStart(7)}  ${(a.msPerCall / b.msPerCall).toFixed(2)}x   ${same}/${inputs.length} equal`);
}

console.log(`\ngreedy, target tokens/s                              1 thread ${String(THREADS).padStart(2)} threads  speed-up   ` +
  `(ms per call: 1, ${THREADS}, speed-up)`);
const count = quick ? 64 : 128;
{
  const files = randomModel(DEFAULT_SHAPE);
  const models = [one, many].map((e) => e.loadModel(files));
  const sentences = randomSentences(count, DEFAULT_SHAPE.vocab_size, 11);
  const search = { beam: 1, maxLenA: 0, maxLenB: 20, minLen: 20 };
  const translators = models.map((m) => (chunk) => m.translateIds(chunk, search));
  sideBySide(`random default-shape model, 32 a call`, translators, sentences, 32);
  sideBySide(`random default-shape model, 1 a call`, translators, sentences.slice(0, quick ? 16 : 32), 1);
  models.forEach((m) => m.dispose());
}
const shipped = `${root}models/es-en/`;
if (existsSync(`${shipped}model.safetensors`)) {
  const read = (f) => readFileSync(`${shipped}${f}`);
  const files = { config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') };
  const models = [one, many].map((e) => e.loadModel(files));
  const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
  let texts = sample.cases.filter((c) => c.source_language === 'es').map((c) => c.text);
  while (texts.length < count) texts = texts.concat(texts);
  texts = texts.slice(0, count);
  const targetLanguage = models[0].config.languages?.target_lang_tokens ? 'en' : undefined;
  const translators = models.map((m) => (chunk) => m.translateTexts(chunk, { beam: 1, targetLanguage }));
  sideBySide(`shipped model es->en, 32 a call`, translators, texts, 32);
  sideBySide(`shipped model es->en, 1 a call`, translators, texts.slice(0, quick ? 16 : 32), 1);
  models.forEach((m) => m.dispose());
}
many.dispose();
