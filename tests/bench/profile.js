// Where a translation's time goes, by operation (issue 41): the profiling
// build (bash build.sh profile: src/profile.h's timers, one thread) times each
// operation of the engine, and the plain SIMD build the same translations
// whole, alternately, on random-weight models of two shapes: OPUS-MT's base
// (6 + 6 layers, d 512, FFN 2048, 8 heads, swish, tied embeddings, 8,000
// words; our own format, float32 and int8 as models/quantize.py writes it)
// and Firefox's base-memory student (d 384, FFN 1536, 6 encoder and 4 SSRU
// decoder layers, ReLU; Marian's intgemm8 weights and a 50/50 lexical
// shortlist, converted as tests/bench/marian_bench.js does). Greedy (or --beam), every
// output forced to OUT_LEN tokens where the search allows it (fairseq's
// min/max length), one sentence a call and batched (16 a call, sorted by
// length). Each operation: its share of the time, ms per output token, and
// its rate against its own peak (products and attention: 2 operations a
// multiply-add, against the dot_i16x8 peak for int8 and the f32x4 one for
// float32, both measured here as `npm run bench` measures them).
//
//   node tests/bench/profile.js [--rounds N] [--write]   (--write: docs/speed.md)
//   node tests/bench/profile.js [--rounds N] --beam N [--only TEXT]   (a beam's profile, printed; TEXT: in the models' labels)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../../js/engine/binding.js';
import { ATTENTION, GEMM, peakRunner, profileOps } from './kernels.js';
import { OUT_LEN, SENTENCES, calls, median, run, sentencesOf, speedVariants } from './speed_shapes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const ROUNDS = Number(option('--rounds', 3)), BEAM = Number(option('--beam', 1)), ONLY = option('--only', '');
if (args.includes('--write') && (BEAM !== 1 || ONLY)) {
  console.error('profile.js: --write makes docs/speed.md, greedy on every model (no --beam, no --only)');
  process.exit(2);
}
const PROFILE_WASM = join(root, 'build/wasm-profile/residual-mt.wasm');

// One profiled run: each operation's { ms, work }, and the time outside them.
function profiled(engine, model, groups) {
  const w = engine.wasm.exports;
  w.rmt_profile_reset();
  const { ms, tokens } = run(model, groups, BEAM);
  const ops = profileOps(engine.wasm), inside = ops.reduce((sum, op) => sum + op.ms, 0);
  ops.push({ name: 'JS, calls into WASM and back, results read', ms: ms - inside, work: 0 });
  return { ms, tokens, ops };
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');

// Plain and profiled runs alternate, each round followed by a run of the
// peaks (measurePeaks() -> { f32, dot_i16 }): the machine is shared, so a
// rate is taken against the peak of its own round, and each figure is the
// median of ROUNDS. int8: whether products run the int8 kernel.
function measure(plain, prof, profEngine, groups, measurePeaks, int8) {
  run(plain, groups.slice(0, 2), BEAM), run(prof, groups.slice(0, 2), BEAM);  // warm-up: V8 tiers the code up
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const plainMs = run(plain, groups, BEAM).ms;
    rounds.push({ plainMs, profile: profiled(profEngine, prof, groups), peaks: measurePeaks() });
  }
  const ofPeak = (op, r) => {
    if (!op.work || !(GEMM.has(op.name) || op.name === ATTENTION)) return NaN;
    return (2 * op.work) / (op.ms * 1e6) / (op.name === ATTENTION || !int8 ? r.peaks.f32 : r.peaks.dot_i16);
  };
  const first = rounds[0].profile;
  const ops = first.ops.map((op, i) => ({
    ...op, ms: median(rounds.map((r) => r.profile.ops[i].ms)), ofPeak: median(rounds.map((r) => ofPeak(r.profile.ops[i], r))),
  }));
  // End to end: every product's operations over the plain build's time.
  const macs = first.ops.filter((o) => GEMM.has(o.name)).reduce((s, o) => s + o.work, 0);
  const gops = rounds.map((r) => (2 * macs) / (r.plainMs * 1e6));
  return {
    plainMs: median(rounds.map((r) => r.plainMs)), profiledMs: median(rounds.map((r) => r.profile.ms)), tokens: first.tokens,
    ops, gops: median(gops), ofPeak: median(gops.map((g, i) => g / (int8 ? rounds[i].peaks.dot_i16 : rounds[i].peaks.f32))),
  };
}

// One table: each operation, one a call and batched.
function table(v, results) {
  const lines = [`### ${v.label}${BEAM === 1 ? '' : `, beam ${BEAM}`}`, '',
    `${SENTENCES} random sentences of 8–32 tokens, ${OUT_LEN} output tokens each where the search forces it.`, '',
    '| operation | one a call: share | ms/token | of peak | batched: share | ms/token | of peak |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
  const [one, batched] = results;
  const rate = (op) => (Number.isFinite(op.ofPeak) ? `${fmt(100 * op.ofPeak, 0)} %` : '');
  one.ops.forEach((op, i) => {
    const b = batched.ops[i];
    if (op.ms < 1e-3 && b.ms < 1e-3 && !op.work) return;
    const cells = [one, batched].map((r) => {
      const o = r.ops[i];
      return `${fmt((100 * o.ms) / r.profiledMs)} % | ${fmt(o.ms / r.tokens, 3)} | ${rate(o)}`;
    });
    lines.push(`| ${op.name} | ${cells.join(' | ')} |`);
  });
  const whole = (r) => `${fmt(r.plainMs / r.tokens, 3)} ms/token | ${fmt(r.gops, 1)} GOP/s | ${fmt(100 * r.ofPeak, 0)} %`;
  lines.push(`| **end to end** (plain build; products' operations / time) | ${whole(one)} | ${whole(batched)} |`);
  lines.push('', `Profiling overhead (profiled time / plain time): one a call ${fmt(one.profiledMs / one.plainMs, 2)}, ` +
    `batched ${fmt(batched.profiledMs / batched.plainMs, 2)}.`, '');
  return lines.join('\n');
}

const build = spawnSync('bash', [join(root, 'build.sh'), 'profile'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// The profiling build links with undefined symbols allowed (build.sh): it may import only the plain build's and its clock.
const importsOf = (path) => WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(path))).map((i) => `${i.module}.${i.name}`);
const allowed = new Set([...importsOf(join(root, 'dist/residual-mt.wasm')), 'env.rmt_now_ms']);
const extra = importsOf(PROFILE_WASM).filter((name) => !allowed.has(name));
if (extra.length) throw new Error(`the profiling build imports ${extra.join(', ')}: undefined in the C code`);
const plainEngine = await Engine.load(join(root, 'dist/residual-mt.wasm'), { threads: 1 });
const profEngine = await Engine.load(PROFILE_WASM, { threads: 1 });
// The peaks: runs after each round of measurements, so that a rate is taken
// against a peak that saw the machine as it did (on a shared machine with
// SMT, a peak run alone on its core is twice one beside a busy sibling).
const peakRuns = { f32: [], dot_i16: [] };
const peakRunners = Object.keys(peakRuns).map((kind) => [kind, peakRunner(kind)]);
const measurePeaks = () => Object.fromEntries(peakRunners.map(([kind, run]) => {
  const gops = Math.max(run(), run(), run());  // the best of three: a conservative peak
  peakRuns[kind].push(gops);
  return [kind, gops];
}));
const work = mkdtempSync(join(tmpdir(), 'rmt-profile-'));
const measured = [];
try {
  measurePeaks();
  for (const v of speedVariants(work).filter((v) => v.label.includes(ONLY))) {
    const plain = v.load(plainEngine), prof = v.load(profEngine);
    const sentences = sentencesOf(v);
    measured.push([v, [false, true].map((batched) => measure(plain, prof, profEngine, calls(sentences, batched), measurePeaks, v.int8))]);
    plain.dispose(), prof.dispose();
  }
  measurePeaks();
} finally {
  rmSync(work, { recursive: true, force: true });
}
const peaks = Object.fromEntries(Object.entries(peakRuns).map(([kind, runs]) => [kind, median(runs)]));
const sections = measured.map(([v, results]) => table(v, results));
console.log(sections.join('\n'));

const doc = `# Where a translation's time goes

Made by \`node tests/bench/profile.js --write\` (${ROUNDS} rounds; each figure the median): the
profiling build (\`bash build.sh profile\`: the plain SIMD128 build with src/profile.h's timers,
one thread) times each operation of the engine; the plain build times the same translations
whole, the two alternating. Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, a machine
shared with other jobs: shares hold better than absolute times.

Each operation's time is its own (a product's activation quantization is its own row, not
the product's). **share**: of the profiled time; **ms/token**: per output token (</s>
counted); **of peak**: products (multiply-adds × 2 / time) against the peak of their kernel —
int8: \`i32x4.dot_i16x8_s\`, float32: f32x4 multiply and add (tests/bench/kernels.js's loops, as
\`npm run bench\` measures them) — and attention (q·k and p·v) against the float32 one, each
against the best of three peak runs right after its round (here ${fmt(Math.min(...peakRuns.dot_i16), 0)}–${fmt(Math.max(...peakRuns.dot_i16), 0)} GOP/s for int8, median
${fmt(peaks.dot_i16, 0)}; ${fmt(Math.min(...peakRuns.f32), 0)}–${fmt(Math.max(...peakRuns.f32), 0)} GFLOP/s for float32, median ${fmt(peaks.f32, 0)}: a shared machine with two
threads a core moves it that much). The last line: every product's operations over the plain
build's time, end to end, against the same peaks. "JS, calls into WASM and back" is the time
of the calls less the time inside the engine's operations.

${sections.join('\n')}`;
if (args.includes('--write')) writeFileSync(join(root, 'docs/speed.md'), doc);
