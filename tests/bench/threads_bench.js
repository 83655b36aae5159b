// The threads build on 2 threads (dist/residual-mt-threads.wasm) against one
// thread (dist/residual-mt.wasm, the plain SIMD128 build it is compiled from),
// both loaded in this one process, on the workload of `npm run bench -- --json`
// (the first 64 lines of the test books, es -> en) with the shipped int8 model
// and its float16 twin: target tokens/s of greedy and beam 5, batched (32
// sentences a call) and greedy one sentence a call (batch-1 latency). Each
// figure is the median of rounds that alternate between the engines, and the
// ratios of the best rounds follow (the machine is shared: a run is only as
// good as its quietest moments). Outputs are compared too (they must be identical).
//
//   node tests/bench/threads_bench.js [--quick] [--threads N] [--min-macs N] [--against OLD.wasm] [--rounds] [--chromium]
//
// --against: an older threads build, run side by side on as many threads (a
// change to the pool measured against the build before it, in the same run);
// --rounds: every round's figure, not only the medians; --chromium: the same
// in Chromium (playwright-core, a cross-origin isolated page of the demo's server).
//
// On Linux, a pass during which other processes used more than a tenth of a
// core (from /proc: the machine's busy time less this process's and its
// children's, Chromium's included) is run again, up to RETRIES times: two
// threads on a shared two-core machine measure the other processes as much
// as the engine.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WASM, THREADS_WASM } from '../../js/defaults.js';
import { demoMounts } from '../../scripts/serve.js';
import { withServer } from '../lib/server.js';
import { launchChromium } from './load_bench.js';
import { BATCH } from './measure.js';
import { TEST_BOOKS } from './report.js';
import { SideBySide } from './side_by_side.js';
import { FLOAT_MODEL, SHIPPED_MODEL } from './variants.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const quick = argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;
const THREADS = Number(option('--threads', 2));
const against = option('--against');
const minMacs = option('--min-macs');

if (readFileSync(`${root}${THREADS_WASM}`).equals(readFileSync(`${root}${DEFAULT_WASM}`))) {
  console.log(`${THREADS_WASM} is a copy of the plain build (built without clang-16): threads benchmark skipped`);
  process.exit(0);
}

// The engines: [label, build (a path: from the repository root, or --against's), threads].
const BUILDS = [
  ['1 thread', DEFAULT_WASM, 1],
  ...(against ? [[`${THREADS} old`, against, THREADS]] : []),
  [`${THREADS} threads`, THREADS_WASM, THREADS],
];
const lines = readFileSync(`${root}${TEST_BOOKS}test.es`, 'utf8').split('\n').filter(Boolean);
const texts = lines.slice(0, quick ? 32 : 64);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const modelFiles = (dir) => Object.fromEntries(['config.json', 'model.safetensors', 'spm.model']
  .map((f, i) => [['config', 'weights', 'spm'][i], readFileSync(`${root}${dir}${f}`)]));

// Busy CPU seconds so far of the machine and of this process with its
// descendants, or null where /proc is missing.
function cpuSeconds() {
  if (!existsSync('/proc/stat')) return null;
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const procs = new Map(); // pid -> { ppid, ticks }
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let stat;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; } // it has ended
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state, ppid, ... utime (12th), stime
    procs.set(Number(name), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
  }
  let ours = 0;
  for (const [pid, p] of procs) {
    for (let q = pid; q > 1; q = procs.get(q)?.ppid ?? 0) if (q === process.pid) { ours += p.ticks; break; }
  }
  return { machine: (user + nice + system + irq + softirq + steal) / 100, ours: ours / 100 }; // USER_HZ
}

// Runs pass() and returns its result with `others`: the cores other processes used meanwhile (0 if unknown).
async function watched(pass) {
  const before = cpuSeconds(), start = performance.now();
  const result = await pass();
  const seconds = (performance.now() - start) / 1000, after = cpuSeconds();
  const others = before ? Math.max(0, after.machine - before.machine - (after.ours - before.ours)) / seconds : 0;
  return { ...result, others };
}
const QUIET = 0.1; // cores other processes may use during a pass
const RETRIES = 3;
let retries = 0, disturbed = 0;

async function sideBySide(runner, label, inputs, per, options) {
  for (let i = 0; i < BUILDS.length; i++) await runner.pass(i, inputs.slice(0, 8), Math.min(per, 8), options); // warm up: V8 tiers up hot functions
  const rates = BUILDS.map(() => []);
  let outputs;
  for (let r = 0; r < ROUNDS; r++) {
    outputs = [];
    for (let i = 0; i < BUILDS.length; i++) {
      let got = await watched(() => runner.pass(i, inputs, per, options));
      for (let k = 0; k < RETRIES && got.others > QUIET; k++, retries++) got = await watched(() => runner.pass(i, inputs, per, options));
      if (got.others > QUIET) disturbed++;
      rates[i].push(got.tokensPerSecond);
      outputs.push(got.outputs);
    }
  }
  const medians = rates.map(median), best = rates.map((r) => Math.max(...r));
  const ratios = (xs) => xs.slice(1).map((x) => `${(x / xs[0]).toFixed(2)}x`.padStart(6)).join(' ');
  const equal = outputs.slice(1).every((o) => o.every((x, i) => x === outputs[0][i]));
  console.log(`${label.padEnd(36)} ${medians.map((m) => m.toFixed(0).padStart(10)).join('')}  ` +
    `${ratios(medians)}   (best: ${ratios(best)})   ${equal ? 'outputs equal' : 'OUTPUTS DIFFER'}`);
  if (argv.includes('--rounds')) for (const [i, r] of rates.entries()) console.log(`  ${BUILDS[i][0].padEnd(10)} ${r.map((x) => x.toFixed(0)).join(' ')}`);
}

async function measureAll(runner, runtime) {
  console.log(`${runtime}: threads build on ${THREADS} threads vs the plain build on 1${against ? ` and ${against} on ${THREADS}` : ''}, ` +
    `one ${runtime === 'Node' ? 'process' : 'page'}, median of ${ROUNDS} alternating rounds; load average ${loadavg()[0].toFixed(2)} at the start`);
  console.log(`\ntarget tokens/s, ${texts.length} lines of ${TEST_BOOKS}test.es${' '.repeat(6)}` +
    `${BUILDS.map(([label]) => label.padStart(10)).join('')}  vs 1 thread (medians)`);
  for (const dir of [SHIPPED_MODEL, FLOAT_MODEL]) {
    if (!existsSync(`${root}${dir}model.safetensors`)) {
      console.log(`(${dir} not present: skipped)`);
      continue;
    }
    await runner.loadModel(dir);
    await sideBySide(runner, `${dir} greedy, ${BATCH} a call`, texts, BATCH, { beam: 1 });
    await sideBySide(runner, `${dir} beam 5, ${BATCH} a call`, texts, BATCH, { beam: 5 });
    await sideBySide(runner, `${dir} greedy, 1 a call`, texts.slice(0, quick ? 16 : 32), 1, { beam: 1 });
  }
  console.log(`\n${retries} passes run again (other processes busy), ${disturbed} figures kept from a busy machine`);
}

if (!argv.includes('--chromium')) {
  const bench = await SideBySide.create(BUILDS.map(([, path, threads]) => ({ wasm: readFileSync(against && path === against ? path : `${root}${path}`), threads })));
  if (minMacs !== undefined) for (const e of bench.engines.slice(1)) e.wasm.exports.rmt_threads_set_min_macs(Number(minMacs));
  await measureAll({ loadModel: async (dir) => bench.loadModel(modelFiles(dir)), pass: async (...args) => bench.pass(...args) }, 'Node');
  bench.dispose();
} else {
  const { context, close } = await launchChromium();
  const mounts = [{ prefix: '/tests/bench/', dir: `${root}tests/bench` }, ...(against ? [{ prefix: '/against/', dir: dirname(against) }] : []), ...demoMounts()];
  const url = (path) => (against && path === against ? `/against/${basename(path)}` : `/${path}`);
  try {
    await withServer({ mounts }, async (base) => {
      const page = context.pages()[0] ?? await context.newPage();
      await page.goto(`${base}tests/bench/page.html`);
      await page.evaluate(async ([builds, minMacs]) => {
        const { SideBySide } = await import('/tests/bench/side_by_side.js');
        const bytes = async (path) => new Uint8Array(await (await fetch(path)).arrayBuffer());
        window.bench = await SideBySide.create(await Promise.all(builds.map(async ([path, threads]) => ({ wasm: await bytes(path), threads }))));
        if (window.bench.engines.slice(1).some((e) => e.threads === 1)) throw new Error('no threads in this page (not cross-origin isolated?)');
        if (minMacs !== undefined) for (const e of window.bench.engines.slice(1)) e.wasm.exports.rmt_threads_set_min_macs(Number(minMacs));
      }, [BUILDS.map(([, path, threads]) => [url(path), threads]), minMacs]);
      await measureAll({
        loadModel: (dir) => page.evaluate(async (dir) => {
          const read = async (f) => new Uint8Array(await (await fetch(`/${dir}${f}`)).arrayBuffer());
          window.bench.loadModel({ config: await read('config.json'), weights: await read('model.safetensors'), spm: await read('spm.model') });
        }, dir),
        pass: (...args) => page.evaluate((args) => window.bench.pass(...args), args),
      }, 'Chromium');
    });
  } finally {
    await close();
  }
}
