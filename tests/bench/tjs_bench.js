// Our engine against transformers.js (@huggingface/transformers, the library
// most web pages run OPUS-MT models with: ONNX Runtime Web's WebAssembly) in
// one Chromium page, on the same weights: a random-weight Marian transformer
// of OPUS-MT's base shape (models/tjs_export.py writes it for both runtimes).
// Greedy, each sentence's output forced to its source's length + 1 in both
// runtimes (the model never emits </s>); one sentence a call and batched
// (BATCH a call, sorted by length, the same chunks for both); ours int8
// against transformers.js q8 (onnxruntime's dynamic int8), ours float32
// against its fp32; one and two threads.
//
// Before any timing: the float32 ids of both runtimes must equal the PyTorch
// reference's (models/residual_mt/marian_torch.py) id for id, and after it
// every float32 output of one runtime the other's; else the run fails.
// Then the load (library, engine and model files over localhost until the
// model is ready, in a fresh page, best of --rounds) and the page's memory
// after it; then --rounds rounds of every variant in turn, the pair's order
// alternating, each figure the best of the rounds and each ratio also per round.
// Before each round the page times the peaks of the products' instructions
// (tests/bench/kernels.js); each runtime's products a second (products()) are
// given against them, and the most ours could be, run at those peaks.
//
//   node tests/bench/tjs_bench.js [--n 24] [--rounds 2] [--threads 1,2] [--profile] [--json FILE]
//   (--profile: also ours int8 on one thread in the profiling build, bash build.sh profile, operation by operation)
//   npm run bench -- --tjs      (the same, after the build; options follow)
//
// Needs Debian's /usr/bin/chromium and, for the model, python3-torch,
// python3-onnx and python3-sentencepiece (models/tjs_export.py). transformers.js
// is installed from npm into the cache folder on the first run, not into the
// project: TJS_CACHE (default: the system's temporary folder) holds it and the
// model files.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { withServer } from '../lib/server.js';
import { chromiumVersion, launchChromium } from './load_bench.js';
import { ATTENTION, GEMM } from './kernels.js';
import { median } from './speed_runs.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const TRANSFORMERS_JS = '@huggingface/transformers@4.3.2';
const BATCH = 16;
const VARIANTS = [
  { name: 'ours int8', runtime: 'rmt', dir: 'rmt-int8' },
  { name: 'transformers.js q8', runtime: 'tjs', dtype: 'q8' },
  { name: 'ours float32', runtime: 'rmt', dir: 'rmt-f32' },
  { name: 'transformers.js fp32', runtime: 'tjs', dtype: 'fp32' },
];
const PAIRS = [['ours int8', 'transformers.js q8'], ['ours float32', 'transformers.js fp32']];

const cache = process.env.TJS_CACHE ?? join(tmpdir(), 'residual-mt-tjs-bench');
const modelDir = join(cache, 'model');

function prepare() {
  if (!existsSync(join(cache, 'node_modules/@huggingface/transformers/package.json'))) {
    console.error(`installing ${TRANSFORMERS_JS} into ${cache} (npm)`);
    execFileSync('npm', ['install', '--prefix', cache, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', TRANSFORMERS_JS],
      { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!existsSync(join(modelDir, 'sources.json'))) {
    console.error(`writing the model into ${modelDir} (models/tjs_export.py)`);
    execFileSync('/usr/bin/python3', [join(root, 'models/tjs_export.py'), '--out', modelDir], { stdio: 'inherit' });
  }
  return JSON.parse(readFileSync(join(modelDir, 'sources.json'), 'utf8'));
}

// A page of the benchmark's server with tjs_page.js imported, as window.bench.
async function openPage(context, base) {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('[page]', e.message));
  await page.goto(`${base}bench/page.html`);
  await page.evaluate(async () => { window.bench = await import('/bench/tjs_page.js'); });
  return page;
}

const loadIn = (page, v, threads, m) => page.evaluate(([v, t, eos, pad]) => window.bench.load(v, t, eos, pad), [v, threads, m.eos, m.pad]);
const runIn = (page, name, chunks) => page.evaluate(([n, c]) => window.bench.run(n, c), [name, chunks]);
const sum = (a) => a.reduce((x, y) => x + y, 0);

// The first difference of two id lists, or null.
function firstDifference(a, b) {
  for (let s = 0; s < Math.max(a.length, b.length); s++) {
    const x = a[s] ?? [], y = b[s] ?? [];
    const t = x.findIndex((id, i) => id !== y[i]);
    if (t >= 0 || x.length !== y.length) return { sentence: s, token: t >= 0 ? t : Math.min(x.length, y.length), ours: x, theirs: y };
  }
  return null;
}

function mustEqual(what, a, b) {
  const d = firstDifference(a, b);
  if (d) throw new Error(`${what} differ at sentence ${d.sentence}, token ${d.token}:\n  ${JSON.stringify(d.ours)}\n  ${JSON.stringify(d.theirs)}`);
}

// Float32 ids of both runtimes against the PyTorch reference, one sentence a call.
async function checkReference(context, base, m) {
  const page = await openPage(context, base);
  const chunks = m.sources.slice(0, m.torch.length).map((s) => [s]);
  for (const v of VARIANTS.filter((x) => x.dtype === 'fp32' || x.dir === 'rmt-f32')) {
    await loadIn(page, v, 1, m);
    const { ids } = await runIn(page, v.name, chunks);
    mustEqual(`${v.name} and PyTorch`, ids, m.torch);
    console.log(`${v.name}: ${ids.length} sentences = PyTorch, id for id (${sum(ids.map((r) => r.length))} tokens)`);
  }
  await page.close();
}

// The private memory (smaps_rollup) of the renderer processes of the Chromium
// whose profile folder is `profile`, in bytes (Linux); null elsewhere. The
// page's own measureUserAgentSpecificMemory() leaves WebAssembly memories out.
function rendererBytes(profile) {
  if (!existsSync('/proc/self/smaps_rollup')) return null;
  const procs = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      procs.set(pid, { ppid: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1], cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8') });
    } catch { /* ended meanwhile */ }
  }
  const ours = new Set([...procs].filter(([, p]) => p.cmd.includes(`--user-data-dir=${profile}`) && !p.cmd.includes('--type=')).map(([pid]) => pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of procs) if (!ours.has(pid) && ours.has(p.ppid)) { ours.add(pid); grew = true; }
  }
  let bytes = 0;
  for (const pid of ours) {
    if (!procs.get(pid).cmd.includes('--type=renderer')) continue;
    try {
      for (const m of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) bytes += Number(m[1]) * 1024;
    } catch { /* ended meanwhile */ }
  }
  return bytes;
}

// Each variant loaded in a fresh page (best of rounds): ms, and the renderers'
// memory after it and a garbage collection, less before it.
async function measureLoads(browser, base, m, rounds) {
  const out = {};
  for (let r = 0; r < rounds; r++) {
    for (const v of VARIANTS) {
      const page = await openPage(browser.context, base);
      const before = rendererBytes(browser.profile);
      const { ms } = await loadIn(page, v, 1, m);
      await page.evaluate(() => { globalThis.gc(); globalThis.gc(); });  // the fetched files' bytes, once copied
      const after = rendererBytes(browser.profile);
      await page.close();
      const best = out[v.name];
      out[v.name] = { ms: Math.min(ms, best?.ms ?? Infinity), memoryMB: after == null ? null : Math.min((after - before) / 2 ** 20, best?.memoryMB ?? Infinity) };
    }
  }
  return out;
}

// Timing rounds on one page with every variant loaded on `threads` threads.
async function measureSpeed(context, base, m, sentences, threads, rounds, profile) {
  const page = await openPage(context, base);
  const info = {};
  for (const v of VARIANTS) info[v.name] = await loadIn(page, v, threads, m);
  const sorted = sentences.map((s, i) => [s, i]).sort((a, b) => a[0].length - b[0].length);
  const modes = {
    'one a call': sentences.map((s) => [s]),
    batched: Array.from({ length: Math.ceil(sorted.length / BATCH) }, (_, i) => sorted.slice(i * BATCH, (i + 1) * BATCH).map(([s]) => s)),
  };
  const order = sorted.map(([, i]) => i);
  for (const v of VARIANTS) await runIn(page, v.name, [sentences.slice(0, 2), [sentences[0]]]);  // warm-up
  const result = {};
  for (const [mode, chunks] of Object.entries(modes)) {
    const best = {}, ids = {}, ratios = PAIRS.map(() => []), peaks = [];
    for (let r = 0; r < rounds; r++) {
      peaks.push(await page.evaluate(() => window.bench.peaks()));
      for (const [p, pair] of PAIRS.entries()) {
        const ms = {};
        for (const name of r % 2 ? [...pair].reverse() : pair) {
          const res = await runIn(page, name, chunks);
          ms[name] = sum(res.times);
          best[name] = Math.min(ms[name], best[name] ?? Infinity);
          ids[name] = mode === 'batched' ? unsort(res.ids, order) : res.ids;
        }
        ratios[p].push(ms[pair[1]] / ms[pair[0]]);
      }
    }
    mustEqual(`ours float32 and transformers.js fp32 (${mode}, ${threads} thread${threads > 1 ? 's' : ''})`, ids['ours float32'], ids['transformers.js fp32']);
    const profiled = profile ? await page.evaluate(([d, c]) => window.bench.profile(d, c), ['rmt-int8', chunks]) : null;
    result[mode] = { best, ratios, peaks, profile: profiled, int8: agreement(ids['ours int8'], ids['ours float32']), q8: agreement(ids['transformers.js q8'], ids['transformers.js fp32']) };
  }
  await page.close();
  return { info, modes: result };
}

function unsort(ids, order) {
  const out = [];
  order.forEach((i, k) => { out[i] = ids[k]; });
  return out;
}

// How far int8 outputs a follow float32's b: whole sentences alike, and the
// share of tokens before each sentence's first difference.
function agreement(a, b) {
  const prefix = a.map((row, i) => { const t = row.findIndex((id, k) => id !== b[i][k]); return t < 0 ? row.length : t; });
  return { whole: prefix.filter((p, i) => p === a[i].length).length, prefixShare: sum(prefix) / sum(a.map((r) => r.length)) };
}

// The multiply-adds one greedy pass over `sentences` needs, each source with
// its </s> and each output its source's length + 1 tokens (as both runtimes
// are made to decode): the weights' (int8 in ours and in q8) and attention's
// (q.k and p.v: float32 in all four).
export function products({ d_model: d, ffn_dim: f, encoder_layers: E, decoder_layers: D, vocab_size: V }, sentences) {
  let weights = 0, attention = 0;
  for (const s of sentences) {
    const S = s.length + 1, T = s.length + 1;
    weights += S * E * (4 * d * d + 2 * d * f) + S * D * 2 * d * d  // encoder; each decoder layer's keys and values of it
      + T * (D * (6 * d * d + 2 * d * f) + d * V);  // decoder steps: self-attention 4, cross 2, FFN; the output layer
    attention += 2 * d * (E * S * S + D * (T * (T + 1) / 2 + T * S));
  }
  return { weights, attention };
}

// The page's peaks over a mode's rounds, each kind's median.
function pagePeaks(r) {
  return { dot_i16: median(r.peaks.map((p) => p.dot_i16)), f32: median(r.peaks.map((p) => p.f32)) };
}

// A pair's rates against the page's peaks: each runtime's products per
// second, and `bound`, the most the pair's ratio could be were ours to run
// every product at its instruction's peak and nothing else.
function rates(pair, r, work) {
  const peak = pagePeaks(r);
  const int8 = pair[0] === 'ours int8', weightPeak = int8 ? peak.dot_i16 : peak.f32;
  const gops = (name) => (2 * (work.weights + work.attention)) / (r.best[name] * 1e6);
  const fastestMs = (2 * work.weights / weightPeak + 2 * work.attention / peak.f32) / 1e6;
  return { peak: weightPeak, peakName: int8 ? 'dot_i16x8' : 'f32x4', ours: gops(pair[0]), theirs: gops(pair[1]),
    bound: r.best[pair[1]] / fastestMs };
}

// --profile: ours int8 in the profiling build, operation by operation: its
// share of the pass, and a product's rate against its instruction's peak.
function profileLines(mode, prof, r) {
  const peak = pagePeaks(r), pct = (x) => `${(100 * x).toFixed(1).padStart(5)}%`;
  const lines = [`  ${mode.padEnd(10)} ours int8, profiling build: ${prof.ms.toFixed(0)} ms a pass`];
  let inside = 0;
  for (const op of prof.ops) {
    inside += op.ms;
    if (op.ms < 0.002 * prof.ms) continue;
    const gops = (2 * op.work) / (op.ms * 1e6), against = op.name === ATTENTION ? peak.f32 : peak.dot_i16;
    const rate = GEMM.has(op.name) || op.name === ATTENTION ? `  ${gops.toFixed(1)} G/s, ${(100 * gops / against).toFixed(0)}% of its peak` : '';
    lines.push(`    ${op.name.padEnd(45)} ${pct(op.ms / prof.ms)}${rate}`);
  }
  lines.push(`    ${'JS, calls into WASM and back'.padEnd(45)} ${pct((prof.ms - inside) / prof.ms)}`);
  return lines;
}

function report(res, sentences) {
  const tokens = sum(sentences.map((s) => s.length + 1));
  console.log(`${res.date}, ${res.cpu}, ${res.chromium}, ${res.transformersJs}; load average ${res.loadavg.map((x) => x.toFixed(1)).join(' ')} before, ${res.loadavgAfter.map((x) => x.toFixed(1)).join(' ')} after`);
  for (const [threads, speed] of Object.entries(res.speed)) {
    console.log(`\n${threads} thread(s); ${sentences.length} sentences, ${tokens} output tokens each pass`);
    for (const [mode, r] of Object.entries(speed.modes)) {
      for (const [p, [ours, theirs]] of PAIRS.entries()) {
        const tps = (name) => (tokens / (r.best[name] / 1000)).toFixed(0);
        console.log(`  ${mode.padEnd(10)} ${ours} ${tps(ours)} tokens/s, ${theirs} ${tps(theirs)} tokens/s: ` +
          `${(r.best[theirs] / r.best[ours]).toFixed(2)}x (rounds: ${r.ratios[p].map((x) => x.toFixed(2)).join(', ')})`);
      }
      for (const pair of threads === '1' ? PAIRS : []) {  // the peaks are one thread's
        const x = rates(pair, r, res.products), pct = (g) => `${(100 * g / x.peak).toFixed(0)}%`;
        console.log(`  ${mode.padEnd(10)} products a second: ${pair[0]} ${x.ours.toFixed(1)} G (${pct(x.ours)} of the ${x.peakName} peak, ` +
          `${x.peak.toFixed(1)}), ${pair[1]} ${x.theirs.toFixed(1)} G (${pct(x.theirs)}); at the peak, ours could be ${x.bound.toFixed(2)}x`);
      }
      if (r.profile) console.log(profileLines(mode, r.profile, r).join('\n'));
      const agree = (x) => `${x.whole}/${sentences.length} whole, ${(100 * x.prefixShare).toFixed(0)}% of tokens before the first difference`;
      console.log(`  ${mode.padEnd(10)} int8 = float32: ours ${agree(r.int8)}; transformers.js ${agree(r.q8)}`);
    }
  }
  console.log('\nload (fresh page, files over localhost) and memory after it:');
  for (const [name, l] of Object.entries(res.load)) console.log(`  ${name.padEnd(22)} ${l.ms.toFixed(0).padStart(6)} ms  ${l.memoryMB?.toFixed(0) ?? '?'} MB`);
}

export async function tjsBench({ n = 24, rounds = 2, threads = [1, 2], profile = false } = {}) {
  const m = prepare();
  const sentences = m.sources.slice(0, n);
  const mounts = [{ prefix: '/project/', dir: root }, { prefix: '/bench/', dir: join(root, 'tests/bench') },
    { prefix: '/deps/', dir: cache }, { prefix: '/model/', dir: modelDir }];
  return withServer({ mounts, csp: null }, async (base) => {
    const browser = await launchChromium(['--js-flags=--expose-gc']);
    const { context, close } = browser;
    try {
      await checkReference(context, base, m);
      const config = JSON.parse(readFileSync(join(modelDir, 'rmt-f32/config.json'), 'utf8'));
      const res = { date: new Date().toISOString(), cpu: `${cpus()[0]?.model} (${cpus().length})`, loadavg: loadavg(),
        chromium: chromiumVersion(), transformersJs: TRANSFORMERS_JS, sentences: n, rounds,
        products: products(config, m.sources.slice(0, n)), speed: {} };
      for (const t of threads) res.speed[t] = await measureSpeed(context, base, m, sentences, t, rounds, profile && t === 1);
      res.load = await measureLoads(browser, base, m, rounds);
      res.loadavgAfter = loadavg();
      return res;
    } finally {
      await close();
    }
  });
}

// The command line (this file's, or npm run bench -- --tjs ...).
export async function main(args) {
  const { values: opt } = parseArgs({ args, options: {
    n: { type: 'string', default: '24' }, rounds: { type: 'string', default: '2' },
    threads: { type: 'string', default: '1,2' }, json: { type: 'string' }, tjs: { type: 'boolean' }, profile: { type: 'boolean' },
  } });
  const n = Number(opt.n), rounds = Number(opt.rounds), threads = opt.threads.split(',').map(Number);
  if (!(n >= 1 && rounds >= 1 && threads.every((t) => t >= 1 && t <= 16))) throw new Error('tjs_bench: --n and --rounds from 1, --threads from 1 to 16');
  if (opt.profile && spawnSync('bash', [join(root, 'build.sh'), 'profile'], { stdio: 'inherit' }).status !== 0) process.exit(1);
  const res = await tjsBench({ n, rounds, threads, profile: opt.profile });
  report(res, prepare().sources.slice(0, n));
  if (opt.json) writeFileSync(opt.json, JSON.stringify(res, null, 1) + '\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
