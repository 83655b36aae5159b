// Two builds of the engine side by side, one thread each, on
// tests/bench/speed_shapes.js's models and translations (OPUS-MT's base
// shape in float32 and int8, Firefox's base-memory student), in one Node
// process, or with --chromium in one page of Debian's Chromium (the browser's
// V8 compiles WebAssembly SIMD differently from Node's): the rounds alternate
// (A B, then B A, ...) so that both see the same minutes of a shared machine,
// and each figure is the median of its rounds. Prints ms per output token of
// each, A's time / B's (above 1: B is faster), and whether the two gave the
// same output ids.
//
//   node tests/bench/engine_ab.js A.wasm B.wasm [--rounds N] [--only TEXT] [--beam N] [--chromium]
//        (rounds: 5; TEXT: in the models' labels; beam: 1, greedy)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../../js/engine/binding.js';
import { alternate, calls, sentencesOf } from './speed_runs.js';
import { speedVariants } from './speed_shapes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2);
const VALUED = ['--rounds', '--only', '--beam'];
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const rounds = Number(option('--rounds', 5)), only = option('--only', ''), beam = Number(option('--beam', 1));
const wasms = args.filter((a, i) => !a.startsWith('--') && !VALUED.includes(args[i - 1])).map((w) => resolve(w));
if (wasms.length !== 2 || !(rounds >= 1)) {
  console.error('usage: node tests/bench/engine_ab.js A.wasm B.wasm [--rounds N] [--only TEXT] [--beam N] [--chromium]');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'rmt-engine-ab-'));
try {
  const variants = speedVariants(work).filter((v) => v.label.includes(only));
  console.log(`A: ${wasms[0]}\nB: ${wasms[1]}\n${args.includes('--chromium') ? 'Chromium' : `Node ${process.version}`}, ` +
    `${rounds} rounds, medians; ratio = A's time / B's`);
  const lines = args.includes('--chromium') ? await inChromium(variants) : await inNode(variants);
  for (const line of lines) console.log(line);
} finally {
  rmSync(work, { recursive: true, force: true });
}

async function inNode(variants) {
  const engines = await Promise.all(wasms.map((w) => Engine.load(w, { threads: 1 })));
  const lines = [];
  try {
    for (const v of variants) {
      const models = engines.map((e) => v.load(e));
      for (const batched of [false, true]) {
        const label = `${v.label}, beam ${beam}, ${batched ? 'batched' : 'one a call'}`;
        lines.push(alternate(label, models, calls(sentencesOf(v), batched), rounds, beam));
      }
      models.forEach((m) => m.dispose());
    }
  } finally {
    engines.forEach((e) => e.dispose());
  }
  return lines;
}

// The same in one page: each variant's files written into the work folder
// and served beside the two builds, the engine binding and speed_runs.js.
async function inChromium(variants) {
  const { launchChromium } = await import('./load_bench.js');
  const { withServer } = await import('../lib/server.js');
  const listed = variants.map((v, i) => {
    const { config, weights, spm } = v.files();
    mkdirSync(join(work, `m${i}`));
    writeFileSync(join(work, `m${i}`, 'config.json'), config);
    writeFileSync(join(work, `m${i}`, 'model.safetensors'), weights);
    if (spm) writeFileSync(join(work, `m${i}`, 'spm.model'), spm);
    return { label: v.label, vocab: v.vocab, dir: `/work/m${i}/`, spm: Boolean(spm) };
  });
  const mounts = [{ prefix: '/a/', dir: dirname(wasms[0]) }, { prefix: '/b/', dir: dirname(wasms[1]) },
    { prefix: '/work/', dir: work }, { prefix: '/js/', dir: join(root, 'js') },
    { prefix: '/tests/bench/', dir: join(root, 'tests/bench') }];
  const { context, close } = await launchChromium();
  try {
    return await withServer({ mounts }, async (base) => {
      const page = context.pages()[0] ?? await context.newPage();
      await page.goto(`${base}tests/bench/page.html`);
      return page.evaluate(async ([builds, listed, rounds, beam]) => {
        const { Engine } = await import('/js/engine/binding.js');
        const { alternate, calls, sentencesOf } = await import('/tests/bench/speed_runs.js');
        const bytes = async (path) => new Uint8Array(await (await fetch(path)).arrayBuffer());
        const engines = await Promise.all(builds.map(async (path) => Engine.load(await bytes(path), { threads: 1 })));
        const lines = [];
        for (const v of listed) {
          const files = { config: await (await fetch(`${v.dir}config.json`)).text(), weights: await bytes(`${v.dir}model.safetensors`) };
          if (v.spm) files.spm = await bytes(`${v.dir}spm.model`);
          const models = engines.map((e) => e.loadModel(files));
          for (const batched of [false, true]) {
            const label = `${v.label}, beam ${beam}, ${batched ? 'batched' : 'one a call'}`;
            lines.push(alternate(label, models, calls(sentencesOf(v), batched), rounds, beam));
          }
          models.forEach((m) => m.dispose());
        }
        return lines;
      }, [[`/a/${basename(wasms[0])}`, `/b/${basename(wasms[1])}`], listed, rounds, beam]);
    });
  } finally {
    await close();
  }
}
