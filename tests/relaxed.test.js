// The relaxed-SIMD engine (dist/residual-mt-relaxed.wasm: f32x4.relaxed_madd in
// the GEMM and attention kernels) and the choice between it and the plain
// SIMD128 build (js/util/env.js's probe, js/defaults.js's defaultWasmUrl). Node 20
// runs relaxed SIMD only with --experimental-wasm-relaxed-simd, so the engine
// tests run again in a child process with that flag, where the default engine
// is the relaxed one; tests/browser.test.js checks that Chromium loads it.
//
// Without clang-16, build.sh makes the relaxed file a copy of the plain build
// (and says so); these tests then skip, except in CI (.ci/run installs clang-16).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WASM, RELAXED_THREADS_WASM, RELAXED_WASM, defaultWasmUrl, packageUrl } from '../js/defaults.js';
import { hasRelaxedSimd } from '../js/util/env.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FLAG = '--experimental-wasm-relaxed-simd';
const plain = readFileSync(packageUrl(DEFAULT_WASM));
const relaxed = readFileSync(packageUrl(RELAXED_WASM));
const isCopy = plain.equals(relaxed);
const skip = isCopy && !process.env.CI ? `${RELAXED_WASM} is a copy of the plain build (clang-16 missing: apt-get install clang-16 lld-16)` : false;

// Runs `code` (an ES module) in a child Node with relaxed SIMD on; returns its JSON output.
function withRelaxed(code) {
  return JSON.parse(execFileSync(process.execPath, [FLAG, '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' }));
}

test('the relaxed build is a real one (CI installs clang-16)', () => {
  assert.ok(!isCopy || !process.env.CI, `${RELAXED_WASM} is a copy of ${DEFAULT_WASM}: build.sh found no clang-16`);
});

test('the default engine follows the relaxed-SIMD probe: plain SIMD128 without it, relaxed with it', { skip }, () => {
  // Here (Node 20 without the flag, unless a later Node ships relaxed SIMD).
  assert.equal(hasRelaxedSimd(), WebAssembly.validate(relaxed), 'the probe agrees with the relaxed build itself');
  assert.equal(WebAssembly.validate(plain), true);
  assert.equal(defaultWasmUrl().href, packageUrl(hasRelaxedSimd() ? RELAXED_WASM : DEFAULT_WASM).href);
  if (process.versions.node.startsWith('20.')) assert.equal(hasRelaxedSimd(), false, 'Node 20 has no relaxed SIMD without its flag');
  // With the flag: the probe, the relaxed module, and the default it picks.
  const got = withRelaxed(`
    import { readFileSync } from 'node:fs';
    import { hasRelaxedSimd } from './js/util/env.js';
    import { defaultWasmUrl } from './js/defaults.js';
    const bytes = readFileSync('${RELAXED_WASM}');
    console.log(JSON.stringify({ probe: hasRelaxedSimd(), valid: WebAssembly.validate(bytes), url: defaultWasmUrl().pathname }));`);
  assert.deepEqual(got, { probe: true, valid: true, url: packageUrl(RELAXED_WASM).pathname });
});

test('both builds export the same C API', { skip }, () => {
  const names = (bytes) => WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name).filter((n) => n.startsWith('rmt_')).sort();
  const want = names(plain);
  assert.ok(want.length > 20);
  const got = withRelaxed(`
    import { readFileSync } from 'node:fs';
    const m = new WebAssembly.Module(readFileSync('${RELAXED_WASM}'));
    console.log(JSON.stringify(WebAssembly.Module.exports(m).map((e) => e.name).filter((n) => n.startsWith('rmt_')).sort()));`);
  assert.deepEqual(got, want);
});

test('the relaxed build passes the engine tests against the PyTorch reference (same tolerances, identical tokens)', { skip, timeout: 300_000 }, () => {
  // A test runner of its own (without the parent's NODE_TEST_CONTEXT), reporting as text.
  // One thread: more would run the threads build, which is plain SIMD128 (tests/threads.test.js).
  const env = { ...process.env, RMT_TEST_THREADS: '1' };
  delete env.NODE_TEST_CONTEXT;
  const run = spawnSync(process.execPath, [FLAG, '--test', '--test-reporter=tap', 'tests/engine.test.js'], { cwd: root, env, encoding: 'utf8' });
  const diffs = run.stdout.split('\n').filter((line) => /max\|encoder diff\|/.test(line));
  for (const line of diffs) console.log(line.replace(/^#\s*/, ''));
  assert.equal(run.status, 0, `tests/engine.test.js with ${FLAG} failed:\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);
  // Every fixture ran on the relaxed build (the default there), none on the plain one.
  assert.equal(diffs.length, 10, run.stdout.slice(-2000));  // 6 float fixtures, 2 int8 ones, 2 with a 16-bit output layer
  for (const line of diffs) assert.match(line, /residual-mt-relaxed\.wasm /);
});

test('the relaxed threads build (the default for more than one thread with relaxed SIMD) translates as the relaxed build on one thread', { skip, timeout: 120_000 }, () => {
  const got = withRelaxed(`
    import { readFileSync } from 'node:fs';
    import { Engine } from './js/engine/binding.js';
    import { RELAXED_WASM, RELAXED_THREADS_WASM, defaultWasmUrl, packageUrl } from './js/defaults.js';
    const one = await Engine.load(packageUrl(RELAXED_WASM), { threads: 1 });
    const two = await Engine.load(packageUrl(RELAXED_THREADS_WASM), { threads: 2 });
    two.wasm.exports.rmt_threads_set_min_macs(0); // split every product, however small
    const out = { url: defaultWasmUrl(2).pathname, threads: [one.threads, two.threads], compared: 0, differ: [] };
    for (const name of ['residual-2x2', 'pre-3x1', 'residual-2x2-int8', 'residual-3x1-int16']) {
      const read = (f) => readFileSync('tests/fixtures/models/' + name + '/' + f);
      const ref = JSON.parse(read('reference.json'));
      const [a, b] = [one, two].map((e) => e.loadModel({ config: read('config.json').toString(), weights: read('model.safetensors') }));
      for (const options of [{ beam: 1 }, { beam: 4, nbest: 4 }]) {
        out.compared += ref.sentences.length;
        if (JSON.stringify(a.translateIds(ref.sentences, options)) !== JSON.stringify(b.translateIds(ref.sentences, options))) out.differ.push(name + ' ' + JSON.stringify(options));
      }
      a.dispose(), b.dispose();
    }
    two.dispose();
    console.log(JSON.stringify(out));`);
  assert.equal(got.url, packageUrl(RELAXED_THREADS_WASM).pathname);
  assert.deepEqual(got.threads, [1, 2]);
  assert.deepEqual(got.differ, []);
  assert.ok(got.compared > 0);
});
