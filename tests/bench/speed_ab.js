// Two checkouts' engine builds side by side in one Chromium page: batched
// greedy translation of the first 64 test-book verses (es -> en, 32 a call)
// with the shipped int8 model (models/es-en/) on the plain and relaxed
// builds, and the float16 one (models/es-en-f16/) on the plain build, for
// each checkout; rounds alternate in order (A B ..., then reversed) and each
// figure is its best round, so ratios come from the same minutes of a shared
// machine. Prints target tokens/s, each against this checkout's f32, and B's
// against A's.
//
//   node tests/bench/speed_ab.js DIR_A [DIR_B] [--rounds N]   (DIR_B: this checkout; rounds: 4)
//
// Each directory needs its engine built (bash build.sh wasm).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoMounts } from '../../scripts/serve.js';
import { withServer } from '../lib/server.js';
import { launchChromium } from './load_bench.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2), dirs = [];
let ROUNDS = 4;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') ROUNDS = Number(args[++i]);
  else dirs.push(args[i]);
}
if (!dirs.length || dirs.length > 2 || !(ROUNDS >= 1)) {
  console.error('usage: node tests/bench/speed_ab.js DIR_A [DIR_B] [--rounds N]');
  process.exit(2);
}
const [dirA, dirB = root] = dirs.map((d) => resolve(d));
const texts = readFileSync(`${root}tests/fixtures/test-books/test.es`, 'utf8').split('\n').filter(Boolean).slice(0, 64);
const RUNS = [['f32', 'residual-mt.wasm', 'es-en-f16'], ['int8', 'residual-mt.wasm', 'es-en'], ['int8 relaxed', 'residual-mt-relaxed.wasm', 'es-en']];

const { context, close } = await launchChromium();
try {
  const mounts = [{ prefix: '/a/', dir: `${dirA}/dist` }, { prefix: '/b/', dir: `${dirB}/dist` }, { prefix: '/models/', dir: `${root}models` },
    { prefix: '/tests/bench/', dir: `${root}tests/bench` }, ...demoMounts()];
  await withServer({ mounts }, async (base) => {
    const page = context.pages()[0] ?? await context.newPage();
    await page.goto(`${base}tests/bench/page.html`);
    const results = await page.evaluate(async ([texts, runs, rounds]) => {
      const { Engine } = await import('/js/engine/binding.js');
      const { BATCH, throughput } = await import('/tests/bench/measure.js');
      const bytes = async (path) => new Uint8Array(await (await fetch(path)).arrayBuffer());
      const all = [];
      for (const side of ['a', 'b']) {
        for (const [label, wasm, dir] of runs) {
          const engine = await Engine.load(await bytes(`/${side}/${wasm}`));
          const m = `/models/${dir}/`;
          const model = engine.loadModel({ config: await bytes(`${m}config.json`), weights: await bytes(`${m}model.safetensors`), spm: await bytes(`${m}spm.model`) });
          all.push({ side, label, model, best: 0 });
        }
      }
      const tokensPerSecond = (model) => throughput(model, texts, BATCH, { beam: 1, targetLanguage: 'en' }).tokensPerSecond;
      for (const r of all) tokensPerSecond(r.model); // warm up
      for (let round = 0; round < rounds; round++) {
        for (const r of round % 2 ? [...all].reverse() : all) r.best = Math.max(r.best, tokensPerSecond(r.model));
      }
      return all.map(({ side, label, best }) => ({ side, label, best }));
    }, [texts, RUNS, ROUNDS]);
    const get = (side, label) => results.find((r) => r.side === side && r.label === label).best;
    console.log(`batched greedy, 64 verses, target tokens/s, best of ${ROUNDS} alternating rounds in one Chromium page`);
    console.log(`A = ${dirA}\nB = ${dirB}`);
    console.log('                     A (vs A f32)        B (vs B f32)       B / A');
    for (const [label] of RUNS) {
      const a = get('a', label), b = get('b', label);
      console.log(`${label.padEnd(14)} ${a.toFixed(0).padStart(8)} (${(a / get('a', 'f32')).toFixed(2)}x)   ${b.toFixed(0).padStart(8)} (${(b / get('b', 'f32')).toFixed(2)}x)   ${(b / a).toFixed(3)}`);
    }
  });
} finally {
  await close();
}
