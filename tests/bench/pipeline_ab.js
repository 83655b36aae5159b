// Two checkouts' whole text pipelines side by side in one Node process: each
// checkout's js/engine/runner.js and js/engine/binding.js over its own plain engine build
// (dist/residual-mt.wasm, one thread) with the shipped int8 model, greedy,
// on the first 64 test-book verses (es -> en). Per checkout: translate()
// one sentence a call and all 64 in one call (the runner batches them), the
// same through Model.translateTexts (what bench.js times), each the best of
// its rounds (in CPU time: one thread, and a shared machine's wall time is
// mostly waiting), rounds alternating A B, then B A; the calls into the engine's
// exports per translate() of one sentence (and per sentence of the batched
// call); and whether the two checkouts' outputs are identical.
//
//   node tests/bench/pipeline_ab.js DIR_A [DIR_B] [--rounds N]   (DIR_B: this checkout; rounds: 4)
//
// Each directory needs its engine built (bash build.sh wasm).

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2), dirs = [];
let rounds = 4;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else dirs.push(args[i]);
}
if (!dirs.length || dirs.length > 2 || !(rounds >= 1)) {
  console.error('usage: node tests/bench/pipeline_ab.js DIR_A [DIR_B] [--rounds N]');
  process.exit(2);
}
const texts = readFileSync(`${root}tests/fixtures/test-books/test.es`, 'utf8').split('\n').filter(Boolean).slice(0, 64);
const modelDir = `${root}models/es-en/`;
const files = { config: readFileSync(`${modelDir}config.json`), weights: readFileSync(`${modelDir}model.safetensors`), spm: readFileSync(`${modelDir}spm.model`) };
const OPTIONS = { sourceLanguage: 'es', targetLanguage: 'en', beam: 1 };

// Counts the calls into the engine's exports while count() runs (every call
// of the binding goes through wasm.exports; outside count() they are the
// engine's own, so the timings pay nothing for the counting).
// Returns { calls, steps }: all of them, and those that decode one token
// (rmt_translation_step, one a token of the longest sentence of a batch).
async function countCalls(wasm, count) {
  const exports = wasm.exports;
  const counts = { calls: 0, steps: 0 };
  wasm.exports = Object.fromEntries(Object.entries(exports).map(([name, value]) => [name, typeof value !== 'function' ? value
    : (...a) => { counts.calls++; if (name === 'rmt_translation_step') counts.steps++; return value(...a); }]));
  try {
    await count();
  } finally {
    wasm.exports = exports;
  }
  return counts;
}

async function side(dir) {
  // js/engine/runner.js, or js/runner.js in a checkout from before js/ had folders.
  const runnerPath = ['js/engine/runner.js', 'js/runner.js'].map((p) => `${resolve(dir)}/${p}`).find((p) => existsSync(p));
  const { Runner } = await import(pathToFileURL(runnerPath).href);
  const runner = new Runner();
  await runner.load({ ...files, wasm: readFileSync(`${resolve(dir)}/dist/residual-mt.wasm`), threads: 1, warmup: false });
  return { dir, runner, best: {} };
}

const sides = await Promise.all((dirs.length === 1 ? [dirs[0], root] : dirs).map(side));

// Each pass: [label, run() -> outputs]; its time is the best of the rounds.
const passes = (s) => [
  ['translate(), 1 a call', async () => { const out = []; for (const t of texts) out.push(...await s.runner.translate([t], OPTIONS)); return out; }],
  ['translate(), batched', () => s.runner.translate(texts, OPTIONS)],
  ['translateTexts, 1 a call', () => texts.map((t) => s.runner.model.translateTexts([t], OPTIONS)[0][0].text.trim())],
  ['translateTexts, batched', () => s.runner.model.translateTexts(texts, { ...OPTIONS, batch: 32 }).map((h) => h[0].text.trim())],
];
const tokens = sides[0].runner.model.translateTexts(texts, { ...OPTIONS, batch: 32 }).reduce((n, h) => n + h[0].ids.length + 1, 0);

const outputs = sides.map(() => ({}));
for (const [i, s] of sides.entries()) for (const [label, run] of passes(s)) outputs[i][label] = await run(); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const s of round % 2 ? [...sides].reverse() : sides) {
    for (const [label, run] of passes(s)) {
      // CPU time, not wall time: on a shared machine a pass's wall time is mostly its wait for a core.
      const start = process.cpuUsage();
      await run();
      const used = process.cpuUsage(start);
      const ms = (used.user + used.system) / 1000;
      s.best[label] = Math.min(s.best[label] ?? Infinity, ms);
    }
  }
}

// Calls into the exports: one sentence's translate(), and the batched call's per sentence.
for (const s of sides) {
  const wasm = s.runner.engine.wasm;
  s.oneCalls = await countCalls(wasm, () => s.runner.translate([texts[0]], OPTIONS));
  s.batchedCalls = await countCalls(wasm, () => s.runner.translate(texts, OPTIONS));
  s.engineCalls = await countCalls(wasm, () => s.runner.model.translateTexts([texts[0]], OPTIONS));
}

console.log(`${texts.length} sentences, ${tokens} target tokens (with </s>), int8, greedy, one thread, best of ${rounds} rounds`);
for (const [label] of passes(sides[0])) {
  const row = sides.map((s) => `${(tokens / (s.best[label] / 1000)).toFixed(0).padStart(6)} tok/s (${s.best[label].toFixed(0)} ms CPU)`);
  const ratio = sides.length === 2 ? `  B/A ${(sides[0].best[label] / sides[1].best[label]).toFixed(3)}x` : '';
  console.log(`${label.padEnd(26)} ${row.join('   ')}${ratio}`);
}
for (const s of sides) {
  const per = (c, n = 1) => `${(c.calls / n).toFixed(n > 1 ? 1 : 0)} (${((c.calls - c.steps) / n).toFixed(n > 1 ? 1 : 0)} besides the steps)`;
  console.log(`${s.dir}: calls into the exports: ${per(s.oneCalls)} per translate() of one sentence, ` +
    `${per(s.batchedCalls, texts.length)} per sentence of the batched call, ${per(s.engineCalls)} per translateTexts of one sentence`);
}
if (sides.length === 2) {
  const same = Object.keys(outputs[0]).every((label) => JSON.stringify(outputs[0][label]) === JSON.stringify(outputs[1][label]));
  console.log(`outputs identical: ${same}`);
}
for (const s of sides) s.runner.dispose();
