// The threads build (dist/residual-mt-threads.wasm: shared memory, a pool of
// worker threads that split a batch's decoding steps by rows and each large
// matrix product by weight panels; src/threads.c, src/transformer.c,
// js/engine/threads.js) against the single-thread plain build it is
// compiled from: the same token ids and the same scores, bit for bit, on
// every fixture model, greedy and beam, batched and one sentence at a time.
// The fixture models are tiny, so every product is split here
// (rmt_threads_set_min_macs(0)); by default small ones stay on one thread.
// Then the thread-count policy and option, and that the threads end with
// their engine (tests/browser.test.js has Chromium: isolated or not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../js/engine/binding.js';
import { DEFAULT_THREADS_CAP, DEFAULT_WASM, MAX_THREADS, THREADS_WASM, defaultWasmUrl, packageUrl, threadCount } from '../js/defaults.js';
import { createTranslator } from '../js/index.js';
import { THREADS_BUILD_MEMORY, importedMemory } from '../js/engine/wasm-binary.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = `${root}tests/fixtures/models/`;
const MODELS = ['post-2x2', 'post-3x1', 'pre-2x2', 'pre-3x1', 'residual-2x2', 'residual-3x1', 'residual-2x2-int8', 'residual-3x1-int8', 'residual-2x2-int16', 'residual-3x1-int16'];
const plain = readFileSync(packageUrl(DEFAULT_WASM));
const threaded = readFileSync(packageUrl(THREADS_WASM));
const isCopy = plain.equals(threaded);
const skip = isCopy && !process.env.CI ? `${THREADS_WASM} is a copy of the plain build (clang-16 missing: apt-get install clang-16 lld-16)` : false;

const read = (name, file) => readFileSync(`${FIXTURES}${name}/${file}`);
const files = (name) => ({ config: read(name, 'config.json').toString(), weights: read(name, 'model.safetensors') });

test('the threads build is a real one (CI installs clang-16): shared memory, imported', () => {
  assert.ok(!isCopy || !process.env.CI, `${THREADS_WASM} is a copy of ${DEFAULT_WASM}: build.sh found no clang-16`);
  if (!isCopy) {
    // A module compiled while it downloads is instantiated with these limits (wasm.js): build.sh's.
    assert.deepEqual(importedMemory(threaded), THREADS_BUILD_MEMORY);
  }
  assert.equal(importedMemory(plain), null);
});

test('threads build vs one thread: identical ids and scores on every fixture, greedy and beam, batched and one by one', { skip, timeout: 120_000 }, async () => {
  const one = await Engine.load(packageUrl(DEFAULT_WASM), { threads: 1 });
  const engines = [await Engine.load(packageUrl(THREADS_WASM), { threads: 2 }), await Engine.load(packageUrl(THREADS_WASM), { threads: 3 })];
  try {
    assert.equal(one.threads, 1);
    assert.deepEqual(engines.map((e) => e.threads), [2, 3]);
    for (const e of engines) {
      assert.equal(e.wasm.exports.rmt_threads_running(), e.threads - 1, 'every worker is in its loop');
      e.wasm.exports.rmt_threads_set_min_macs(0); // split every product, however small
    }
    let compared = 0;
    for (const name of [...MODELS, 'residual-text']) {
      const ref = JSON.parse(read(name, 'reference.json'));
      const sentences = ref.sentences ?? ref.ids;
      const models = [one, ...engines].map((e) => e.loadModel(files(name)));
      for (const options of [{ beam: 1 }, { beam: 4, nbest: 4 }]) {
        for (const batch of [undefined, 1]) {
          // Batched: the sentences twice, enough for a block of sentences a thread in the encoder (src/transformer.c).
          const inputs = batch === 1 ? sentences : [...sentences, ...sentences];
          const [want, ...got] = models.map((m) => m.translateIds(inputs, { ...options, batch }));
          for (const g of got) assert.deepEqual(g, want, `${name} ${JSON.stringify(options)} batch ${batch ?? 'all'}`);
          compared += inputs.length;
        }
      }
      // Teacher-forced logits too: every float of the output layer.
      const trs = models.map((m) => m.begin(sentences.slice(0, 3), { beam: 1 }));
      const logits = trs.map((tr) => tr.forceStep([5, 6, 7].slice(0, Math.min(3, sentences.length))));
      for (const l of logits.slice(1)) assert.deepEqual(l, logits[0], `${name} forced logits`);
      trs.forEach((tr) => tr.free());
      models.forEach((m) => m.dispose());
    }
    // The shipped model: int8, a float16 output layer and a lexical shortlist
    // (batched: a block of rows a thread runs its gathered output layer and log-softmax).
    const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
    const texts = sample.cases.filter((c) => c.target_language === 'en').map((c) => c.text);
    const shipped = (f) => readFileSync(`${root}models/es-en/${f}`);
    const models = [one, ...engines].map((e) => e.loadModel({ config: shipped('config.json'), weights: shipped('model.safetensors'), spm: shipped('spm.model') }));
    for (const beam of [1, 4]) {
      const [want, ...got] = models.map((m) => m.translateTexts(texts, { beam, targetLanguage: 'en' }));
      for (const g of got) assert.deepEqual(g, want, `shipped model, beam ${beam}`);
      compared += texts.length;
    }
    models.forEach((m) => m.dispose());
    // A Marian SSRU decoder (its cell in place of self-attention), its texts twice: blocks of rows a thread too.
    const ssru = (f) => readFileSync(`${FIXTURES}marian-ssru/${f}`);
    const ssruTexts = ssru('texts.txt').toString().split('\n').filter(Boolean);
    const ssruModels = [one, ...engines].map((e) => e.loadModel({ config: ssru('config.json'), weights: ssru('model.safetensors'), spm: ssru('spm.model') }));
    for (const beam of [1, 4]) {
      const [want, ...got] = ssruModels.map((m) => m.translateTexts([...ssruTexts, ...ssruTexts], { beam }));
      for (const g of got) assert.deepEqual(g, want, `Marian SSRU model, beam ${beam}`);
      compared += 2 * ssruTexts.length;
    }
    ssruModels.forEach((m) => m.dispose());
    console.log(`threads 2 and 3 vs 1: ${compared} sentence translations compared, all identical`);
  } finally {
    engines.forEach((e) => e.dispose());
  }
});

test('the weights\' SHA-256 in the engine (src/sha256.c) equals node:crypto\'s: on one thread, and on a worker of the pool while thread 0 goes on', { skip, timeout: 60_000 }, async () => {
  const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
  const random = (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
    return out;
  };
  // Every padding case (0..200 bytes: one or two final blocks), and sizes around a block.
  const sizes = [...Array.from({ length: 201 }, (_, n) => n), 1023, 1024, 1025, 65536 + 55, 65536 + 56, 3_000_001];
  const engines = [await Engine.load(packageUrl(DEFAULT_WASM), { threads: 1 }), await Engine.load(packageUrl(THREADS_WASM), { threads: 2 })];
  try {
    for (const engine of engines) {
      const w = engine.wasm, x = w.exports;
      for (const n of sizes) {
        const bytes = random(n);
        const ptr = w.malloc(Math.max(n, 1)), digest = w.malloc(32);
        w.u8.set(bytes, ptr);
        x.rmt_sha256(ptr, n, digest);
        const hex = (at) => Buffer.from(w.u8.slice(at, at + 32)).toString('hex');
        assert.equal(hex(digest), sha(bytes), `${n} bytes, threads ${engine.threads}`);
        w.u8.fill(0, digest, digest + 32);
        x.rmt_sha256_start(ptr, n, digest);
        if (engine.threads > 1 && n === sizes.at(-1)) {
          // The worker writes the digest while this thread waits outside the engine (a
          // posted loop runs on thread 0 only in rmt_sha256_wait, if no worker took it).
          const words = new Int32Array(w.memory.buffer, digest, 8);
          for (const until = Date.now() + 10_000; words.every((v, i) => Atomics.load(words, i) === 0) && Date.now() < until;);
          assert.ok(words.some((v) => v !== 0), 'the digest was written by a worker before rmt_sha256_wait');
        }
        x.rmt_sha256_wait();
        assert.equal(hex(digest), sha(bytes), `${n} bytes posted, threads ${engine.threads}`);
        w.free(ptr);
        w.free(digest);
      }
    }
    // The model's load: weights read from a file are handed back as their
    // digest on threads (no copy), as a copy of the bytes on one thread.
    const name = 'residual-2x2';
    for (const engine of engines) {
      const { config, weights } = files(name);
      const file = { size: weights.length, readInto: (view) => view.set(weights) };
      const steps = [];
      let handed;
      const model = engine.loadModel({ config, weights: file }, steps, (got) => { handed = got; });
      const names = steps.map((s) => s.name);
      if (engine.threads > 1) {
        assert.deepEqual(handed, { sha256: sha(weights), size: weights.length });
        assert.ok(names.includes('sha256 weights') && !names.includes('copy weights'), names.join(', '));
      } else {
        assert.ok(handed instanceof Uint8Array && Buffer.from(handed).equals(weights));
        assert.ok(names.includes('copy weights') && !names.includes('sha256 weights'), names.join(', '));
      }
      model.dispose();
    }
  } finally {
    engines.forEach((e) => e.dispose());
  }
});

test('a translator on threads (in-process and in a worker) translates text as one thread does; destroy() ends its threads', { skip, timeout: 120_000 }, async () => {
  const model = `${FIXTURES}residual-text/`;
  const texts = ['Hello, world.', 'The cat is on the table. Where is the dog?'];
  const single = await createTranslator({ model, sourceLanguage: 'en', targetLanguage: 'es', threads: 1 });
  const want = await single.translate(texts, { beam: 3 });
  assert.equal(single.threads, 1);
  for (const worker of [false, true]) {
    const translator = await createTranslator({ model, sourceLanguage: 'en', targetLanguage: 'es', threads: 2, worker });
    assert.equal(translator.threads, 2, `worker ${worker}`);
    assert.deepEqual(await translator.translate(texts, { beam: 3 }), want, `worker ${worker}`);
    translator.destroy();
  }
  single.destroy();
});

test('an engine on threads lets Node exit: with dispose(), and without it', { skip, timeout: 60_000 }, () => {
  for (const end of ['engine.dispose();', '']) {
    const code = `
      import { Engine } from './js/engine/binding.js';
      import { readFileSync } from 'node:fs';
      const engine = await Engine.load(undefined, { threads: 2 });
      const dir = 'tests/fixtures/models/residual-2x2/';
      const model = engine.loadModel({ config: readFileSync(dir + 'config.json', 'utf8'), weights: readFileSync(dir + 'model.safetensors') });
      engine.wasm.exports.rmt_threads_set_min_macs(0);
      model.translateIds([[5, 6, 7]], { beam: 2 });
      ${end}
      console.log(engine.threads, engine.wasm.exports.rmt_threads_running());`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, `${end || 'no dispose'}: ${run.stderr} ${run.error ?? ''}`);
    assert.equal(run.stdout.trim(), end ? '1 0' : '2 1', end || 'no dispose');
  }
});

test('the threads option: default, checks, and the builds it picks', async () => {
  // Node always shares memory: the processors, up to the cap.
  const { availableParallelism } = await import('node:os');
  assert.equal(await threadCount(), Math.min(availableParallelism(), DEFAULT_THREADS_CAP));
  assert.equal(await threadCount(3), 3);
  for (const bad of ['2', 1.5, NaN, null, true]) {
    await assert.rejects(threadCount(bad), (err) => err instanceof TypeError && /threads must be an integer/.test(err.message), String(bad));
  }
  for (const bad of [0, -1, MAX_THREADS + 1]) {
    await assert.rejects(threadCount(bad), (err) => err instanceof RangeError && new RegExp(`threads must be from 1 to ${MAX_THREADS}, got ${bad}`).test(err.message));
  }
  // Checked before anything loads.
  await assert.rejects(createTranslator({ model: `${FIXTURES}residual-text/`, sourceLanguage: 'en', targetLanguage: 'es', threads: 0 }), RangeError);
  await assert.rejects(createTranslator({ model: `${FIXTURES}residual-text/`, sourceLanguage: 'en', targetLanguage: 'es', threads: 'all' }), TypeError);
  await assert.rejects(Engine.load(undefined, { threads: 2.5 }), TypeError);
  assert.equal(defaultWasmUrl(2).href, packageUrl(THREADS_WASM).href);
  assert.notEqual(defaultWasmUrl(1).href, packageUrl(THREADS_WASM).href);
  // A build without threads runs on one, whatever was asked.
  const engine = await Engine.load(packageUrl(DEFAULT_WASM), { threads: 4 });
  assert.equal(engine.threads, 1);
  assert.equal(engine.wasm.exports.rmt_threads_prepare(2, 1), -4);
  assert.match(engine.wasm.lastError(), /this build of the engine has no threads/);
});

test('not cross-origin isolated means one thread: the policy in a browser-like global without crossOriginIsolated', { timeout: 30_000 }, () => {
  // env.js decides by crossOriginIsolated where there is no Node: run its policy
  // in a child where `window` exists (so isNode() is false), isolated or not.
  const code = (isolated) => `
    globalThis.window = globalThis;
    globalThis.crossOriginIsolated = ${isolated};
    globalThis.Worker = class {};
    Object.defineProperty(globalThis, 'navigator', { value: { hardwareConcurrency: 8 }, configurable: true });
    const { hasThreads } = await import('./js/util/env.js');
    const { threadCount } = await import('./js/defaults.js');
    console.log(JSON.stringify([hasThreads(), await threadCount(), await threadCount(6)]));`;
  for (const [isolated, want] of [[false, [false, 1, 1]], [true, [true, DEFAULT_THREADS_CAP, 6]]]) {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code(isolated)], { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), want, `crossOriginIsolated ${isolated}`);
  }
});

// Node refuses per-process flags in a worker (ERR_WORKER_INVALID_EXEC_ARGV), and
// workers inherit process.execArgv: each flag below, alone and together, must
// leave a user's app with the threads and the worker it gets without flags.
const NODE_FLAGS = [[], ['--expose-gc'], ['--max-old-space-size=4096'], ['--inspect=127.0.0.1:0'], ['--enable-source-maps'],
  ['--experimental-wasm-relaxed-simd'], ['--stack-size=900', '--title=rmt-app', '--v8-pool-size=2'],
  ['--expose-gc', '--max-old-space-size=4096', '--enable-source-maps', '--experimental-wasm-relaxed-simd']];

test('threads and worker: true under Node\'s own flags: the same threads as without flags', { skip, timeout: 240_000 }, () => {
  const script = `import { Engine } from ${JSON.stringify(`${root}js/engine/binding.js`)};
    import { createTranslator } from ${JSON.stringify(`${root}js/index.js`)};
    const engine = await Engine.load(undefined, { threads: 2 });
    const threads = engine.threads; engine.dispose();
    const t = await createTranslator({ model: ${JSON.stringify(`${FIXTURES}residual-text/`)}, sourceLanguage: 'en', targetLanguage: 'es', worker: true, threads: 2 });
    const text = await t.translate('hello world', { beam: 2 });
    console.log(JSON.stringify({ threads, translatorThreads: t.threads, text })); t.destroy();`;
  const results = NODE_FLAGS.map((flags) => {
    const run = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, `${flags.join(' ')}: ${run.stderr}`);
    assert.doesNotMatch(run.stderr, /running on one thread|invalid execArgv/, flags.join(' '));
    return [flags.join(' ') || '(none)', JSON.parse(run.stdout)];
  });
  console.log(results.map(([flags, r]) => `${flags}: engine ${r.threads} threads, translator ${r.translatorThreads}`).join('\n'));
  for (const [flags, result] of results) assert.deepEqual(result, { ...results[0][1] }, flags);
  assert.equal(results[0][1].threads, 2);
  assert.equal(results[0][1].translatorThreads, 2);
});

// ---------------------------------------------------------------- a lost thread
// A worker of the pool that fails while it holds a part of a job (its instance
// traps; or it never finishes, as one terminated from outside, which reports
// nothing), or that ends while the pool is idle: the call that needed it
// rejects with an UnknownError that says which thread and why (never hangs),
// and the engine goes on on one thread, translating as before.
const TRAP = 1, HANG = 2;
const LOST_MODEL = 'residual-2x2';

async function threadedEngine() {
  const engine = await Engine.load(packageUrl(THREADS_WASM), { threads: 2 });
  engine.wasm.exports.rmt_threads_set_min_macs(0);
  return engine;
}

function fixtureSentences(name) {
  const ref = JSON.parse(read(name, 'reference.json'));
  return ref.sentences ?? ref.ids;
}

for (const [how, why] of [[TRAP, /engine thread 1 failed/], [HANG, /engine thread 1 stopped responding in the middle of a job/]]) {
  test(`a pool worker that ${how === TRAP ? 'traps' : 'never finishes'} mid-job: the call rejects, the engine goes on on one thread`, { skip, timeout: 60_000 }, async () => {
    const one = await Engine.load(packageUrl(DEFAULT_WASM), { threads: 1 });
    const engine = await threadedEngine();
    const sentences = fixtureSentences(LOST_MODEL);
    const want = one.loadModel(files(LOST_MODEL)).translateIds(sentences, { beam: 2 });
    const model = engine.loadModel(files(LOST_MODEL));
    engine.wasm.exports.rmt_threads_set_stall_ms(300);
    engine.wasm.exports.rmt_threads_fail_after(1, 1, how);
    // The worker fails in its first chunk: calls until it has taken one (thread 0 may take every chunk of a call).
    let failure = null;
    for (let i = 0; i < 50 && !failure; i++) {
      try {
        assert.deepEqual(model.translateIds(sentences, { beam: 2 }), want, 'calls before the failure are right');
      } catch (err) {
        failure = err;
      }
    }
    assert.ok(failure?.name === 'UnknownError' && why.test(failure.message), `${failure}`);
    assert.equal(engine.threads, 1, 'the pool is stopped');
    assert.deepEqual(model.translateIds(sentences, { beam: 2 }), want, 'one thread translates as before');
    engine.dispose();
  });
}

test('a pool worker terminated while idle: the next call runs on one thread; destroy() after such a kill returns', { skip, timeout: 60_000 }, async () => {
  const engine = await threadedEngine();
  const sentences = fixtureSentences(LOST_MODEL);
  const model = engine.loadModel(files(LOST_MODEL));
  const want = model.translateIds(sentences, { beam: 2 });
  await engine.wasm.pool.workers[0].terminate();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(engine.threads, 1, 'its exit was noticed');
  assert.deepEqual(model.translateIds(sentences, { beam: 2 }), want);
  engine.dispose();
  // Terminated, and the engine disposed before the exit is seen.
  const other = await threadedEngine();
  other.wasm.exports.rmt_threads_set_stall_ms(300);
  other.wasm.pool.workers[0].terminate();
  other.dispose();
  assert.equal(other.threads, 1);
});

for (const worker of [false, true]) {
  test(`createTranslator({ threads: 2${worker ? ', worker: true' : ''} }) with a pool worker lost mid-translation: rejects, then translates on one thread`, { skip, timeout: 120_000 }, async () => {
    // Far past what the load's warm-up (one short sentence) can give a worker: some calls later (7-8 here).
    process.env.RMT_TEST_THREAD_FAULT = '1:2000:hang:300';
    let translator;
    try {
      translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', threads: 2, worker });
    } finally {
      delete process.env.RMT_TEST_THREAD_FAULT;
    }
    const text = 'El archivo no existe. No se puede abrir la carpeta. La contraseña es incorrecta.';
    const one = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', threads: 1 });
    const want = await one.translate(text);
    one.destroy();
    try {
      let failed = null, calls = 0;
      while (calls < 200 && !failed) {
        calls++;
        const got = await translator.translate(text).catch((err) => { failed = err; });
        if (!failed) assert.equal(got, want);
      }
      console.log(`# the lost thread's call: the ${calls}th`);
      assert.ok(failed?.name === 'UnknownError' && /engine thread 1 stopped responding/.test(failed.message), `${failed}`);
      assert.equal(await translator.translate(text), want, 'on one thread, as before');
    } finally {
      translator.destroy();
    }
  });
}
