// The ES module API (js/index.js) in Node: translate, batch, streaming,
// abort, destroy, queueing, sentence splitting, loading errors, progress, the
// worker_threads path, package exports, and the demo's static server. Uses the
// fixture model residual-text (tiny random weights: nonsense but
// deterministic output; reference.json has its greedy translations).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTranslator, availability, modelInfo, languagePairs, segmentText } from '../js/index.js';
import { ruleSentences, splitLong } from '../js/text/segment.js';
import { loadFiles, toLocation } from '../js/load/loader.js';
import { loadWasm } from '../js/engine/wasm.js';
import { createStaticServer } from '../scripts/serve.js';
import { DEFAULT_MODEL, INPUT_QUOTA, MANIFEST, MODEL_FILES } from '../js/defaults.js';
import { demoBundles } from '../scripts/bundle.js';
import { SHELL, SHELL_FORMAT, SHELL_MANIFEST, shellManifest } from '../scripts/shell.js';
import { stepCounter } from './lib/steps.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}tests/fixtures/models/residual-text/`;
const ref = JSON.parse(readFileSync(`${FIXTURE}reference.json`, 'utf8'));
const GREEDY = { beam: 1 };
const tmp = mkdtempSync(join(tmpdir(), 'rmt-api-'));
// Models downloaded over HTTP are cached (js/load/cache.js): here, not in ~/.cache.
process.env.XDG_CACHE_HOME = join(tmp, 'cache');

let t; // en -> es, in-process
before(async () => {
  t = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es' });
});
after(() => {
  t?.destroy();
  rmSync(tmp, { recursive: true, force: true });
});

const isAbort = (err) => err?.name === 'AbortError';

test('translate() matches the reference greedy translations, both directions', async () => {
  for (const [i, text] of ref.texts.entries()) {
    assert.equal(await t.translate(text, GREEDY), ref.translations.es.text[i], text);
  }
  const toEn = await createTranslator({ model: FIXTURE, sourceLanguage: 'es', targetLanguage: 'en' });
  assert.equal(await toEn.translate(ref.texts[1], GREEDY), ref.translations.en.text[1]);
  toEn.destroy();
  // Default search (beam 5) works too and returns a string.
  assert.equal(typeof await t.translate('Hello, world!'), 'string');
});

test('translate([texts]) is one batch, in order; text with nothing to translate comes back as it was', async () => {
  const texts = [...ref.texts, '', '   ', '42', '😀 !'];
  assert.deepEqual(await t.translate(texts, GREEDY), [...ref.translations.es.text, '', '   ', '42', '😀 !']);
  assert.equal(await t.translate(''), '');
  assert.deepEqual(await t.translate([]), []);
  const details = await t.translate(['Hello, world!'], { ...GREEDY, details: true });
  assert.equal(details[0].text, ref.translations.es.text[2]);
  assert.equal(details[0].sentences, 1);
  assert.ok(details[0].outputTokens > 0 && details[0].ms >= 0);
});

test('long input is split into sentences and joined, keeping paragraph and line breaks', async () => {
  const [a, b, c] = [ref.texts[0], ref.texts[2], ref.texts[3]];
  const text = `${a} ${b}\n\n${c}\n${a}`;
  const parts = await t.translate([a, b, c], GREEDY);
  assert.equal(await t.translate(text, GREEDY), `${parts[0]} ${parts[1]}\n\n${parts[2]}\n${parts[0]}`);
  // Longer than the model's max_positions (128) after tokenization: split by words, not an error.
  const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  const out = await t.translate(long, { ...GREEDY, maxLength: 8 });
  assert.ok(out.length > 0);
});

test('sentence splitting: Intl.Segmenter and the rule-based fallback agree on plain text', () => {
  const text = 'Hello, Dr. Smith. How are you?  Fine!\nNew line.\n\n\nSecond paragraph. ¿Qué tal? Bien.';
  const want = ['Hello, Dr. Smith.', 'How are you?', 'Fine!', 'New line.', 'Second paragraph.', '¿Qué tal?', 'Bien.'];
  for (const rules of [false, true]) {
    const pieces = segmentText(text, { rules });
    assert.equal(pieces.map((p) => p.text).join(''), text, 'pieces concatenate back to the input');
    assert.deepEqual(pieces.filter((p) => p.translate).map((p) => p.text), want, rules ? 'rules' : 'Intl.Segmenter');
  }
  assert.deepEqual(ruleSentences('It costs 3.5 euros. Then e.g. this. End'), ['It costs 3.5 euros. ', 'Then e.g. this. ', 'End']);
  assert.deepEqual(segmentText(''), []);
  const parts = splitLong('a b c d e f g', 3, (s) => s.split(' ').length);
  assert.deepEqual(parts, ['a b c', 'd e f', 'g']);
});

test('translateStreaming() yields pieces to append; together they are what translate() returns', async () => {
  const text = `${ref.texts[0]} ${ref.texts[3]}`;
  const chunks = [];
  for await (const chunk of t.translateStreaming(text, GREEDY)) chunks.push(chunk);
  assert.ok(chunks.length > 5, `${chunks.length} chunks`);
  assert.equal(chunks.join(''), await t.translate(text, GREEDY));
  assert.ok(chunks.every((chunk) => chunk.length > 0));
  // Beam search too: nothing shown is taken back.
  const beamed = [];
  for await (const chunk of t.translateStreaming(text, { beam: 4 })) beamed.push(chunk);
  assert.equal(beamed.join(''), await t.translate(text, { beam: 4 }));
  assert.ok(t.translateStreaming('Hi') instanceof ReadableStream);
  const empty = [];
  for await (const chunk of t.translateStreaming('')) empty.push(chunk);
  assert.deepEqual(empty, []);
  const kept = [];
  for await (const chunk of t.translateStreaming(' 42 ')) kept.push(chunk);
  assert.deepEqual(kept, [' 42 ']);
  // Where ReadableStream is not async-iterable (Safari), the stream is made so.
  const native = Object.getOwnPropertyDescriptor(ReadableStream.prototype, Symbol.asyncIterator);
  delete ReadableStream.prototype[Symbol.asyncIterator];
  try {
    const again = [];
    for await (const chunk of t.translateStreaming(text, GREEDY)) again.push(chunk);
    assert.deepEqual(again, chunks);
    for await (const _ of t.translateStreaming(`${text} `.repeat(20), GREEDY)) break; // eslint-disable-line no-unused-vars
    assert.equal(await t.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
  } finally {
    Object.defineProperty(ReadableStream.prototype, Symbol.asyncIterator, native);
  }
});

test('concurrent calls are queued and give the same answers as one at a time', async () => {
  const texts = ref.texts;
  const alone = [];
  for (const text of texts) alone.push(await t.translate(text, GREEDY));
  const streamed = (async () => {
    let all = '';
    for await (const chunk of t.translateStreaming(texts[0], GREEDY)) all += chunk;
    return all;
  })();
  const together = await Promise.all([...texts.map((text) => t.translate(text, GREEDY)), streamed, t.translate(texts, GREEDY)]);
  assert.deepEqual(together, [...alone, alone[0], alone]);
  // First in, first out: a call never starts before the one ahead of it has finished.
  const order = [];
  const long = `${texts[0]} `.repeat(8);
  await Promise.all([
    (async () => { for await (const _ of t.translateStreaming(long, GREEDY)) order.push('stream'); order.push('stream done'); })(), // eslint-disable-line no-unused-vars
    t.translate(texts[3], GREEDY).then(() => order.push('translate')),
  ]);
  assert.equal(order.at(-1), 'translate');
  assert.ok(order.indexOf('stream done') === order.length - 2);
});

// Streams `text` and aborts once `after` chunks have come; returns the chunks
// seen (a translation that stops early has fewer than a full run's).
async function abortAfterChunks(translator, text, after, options = {}) {
  const controller = new AbortController();
  const chunks = [];
  await assert.rejects(async () => {
    for await (const chunk of translator.translateStreaming(text, { ...options, signal: controller.signal })) {
      chunks.push(chunk);
      if (chunks.length === after) controller.abort();
    }
  }, isAbort);
  return chunks;
}

test('an aborted signal cancels queued and running work; the queue goes on', async () => {
  const long = `${ref.texts[0]} `.repeat(30);
  // Already aborted.
  await assert.rejects(t.translate('x', { signal: AbortSignal.abort() }), isAbort);
  // Running: aborted once the engine has started (the first turn of the event
  // loop after the call), and queued behind it.
  const running = new AbortController();
  const p1 = t.translate(long, { signal: running.signal });
  const queued = new AbortController();
  const p2 = t.translate('x', { signal: queued.signal });
  const p3 = t.translate(ref.texts[3], GREEDY);
  const checks = [assert.rejects(p1, isAbort), assert.rejects(p2, isAbort)];
  queued.abort();
  setImmediate(() => running.abort());
  await Promise.all(checks);
  assert.equal(await p3, ref.translations.es.text[3]);
  // The running translation stops early: a full run streams many chunks, an
  // aborted one stops after the chunk that aborted it.
  const full = [];
  for await (const chunk of t.translateStreaming(long, GREEDY)) full.push(chunk);
  const stopped = await abortAfterChunks(t, long, 2, GREEDY);
  assert.ok(full.length > 10, `${full.length} chunks in a full run`);
  assert.deepEqual(stopped, full.slice(0, 2));
  // A custom reason is passed through; a stream errors with it.
  const reason = new Error('stop');
  await assert.rejects(t.translate('x', { signal: AbortSignal.abort(reason) }), (err) => err === reason);
  const controller = new AbortController();
  const reader = t.translateStreaming(long, { signal: controller.signal }).getReader();
  await reader.read();
  controller.abort();
  await assert.rejects(async () => { for (;;) { const { done } = await reader.read(); if (done) break; } }, isAbort);
  // Cancelling the stream stops its work, counted in decoding steps: a full
  // run takes many; one cancelled at its first chunk takes at most one step
  // more (the step that gave the chunk yields, and the cancellation is seen
  // before the next), and its batch is left unfinished. The job queued behind
  // it runs once it has left the engine: its own steps (`probe`) are counted
  // alone first.
  const counter = stepCounter();
  try {
    counter.on();
    assert.equal(await t.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
    const probe = counter.steps;
    counter.on();
    for await (const _ of t.translateStreaming(long, GREEDY)); // eslint-disable-line no-unused-vars
    const fullRun = { ...counter };
    counter.on();
    let atChunk = -1;
    for await (const _ of t.translateStreaming(long, GREEDY)) { atChunk = counter.steps; break; } // eslint-disable-line no-unused-vars
    assert.equal(await t.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
    const cancelled = counter.steps - probe;
    console.log(`cancelled stream: ${cancelled} steps (its first chunk at step ${atChunk}), a full run ${fullRun.steps}`);
    assert.ok(fullRun.steps > 40 && fullRun.finished >= 1, `a full run: ${fullRun.steps} steps, ${fullRun.finished} batches`);
    assert.ok(atChunk > 0 && cancelled <= atChunk + 1, `cancelled at its first chunk (step ${atChunk}), it ran ${cancelled} steps (a full run: ${fullRun.steps})`);
    assert.equal(counter.finished, 1, 'only the probe\'s batch ran to its end');
  } finally {
    counter.off();
  }
});

test('destroy() rejects queued and later calls with an AbortError; other translators keep working', async () => {
  const a = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es' });
  const b = await createTranslator({ model: FIXTURE, sourceLanguage: 'es', targetLanguage: 'en' });
  const pending = [a.translate(`${ref.texts[0]} `.repeat(10)), a.translate('x')];
  a.destroy();
  for (const p of pending) await assert.rejects(p, isAbort);
  await assert.rejects(a.translate('x'), isAbort);
  await assert.rejects(a.measureInputUsage('x'), isAbort);
  await assert.rejects(async () => { for await (const _ of a.translateStreaming('x')); }, isAbort); // eslint-disable-line no-unused-vars
  a.destroy(); // idempotent
  assert.equal(await b.translate(ref.texts[1], GREEDY), ref.translations.en.text[1]);
  b.destroy();
  // create()'s signal aborted later destroys the translator, as in the Translator API.
  const controller = new AbortController();
  const c = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', signal: controller.signal });
  controller.abort();
  await assert.rejects(c.translate('x'), isAbort);
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', signal: AbortSignal.abort() }), isAbort);
  // Translators share the loaded model: destroying one while another is being created.
  const d = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', worker: true });
  const e = createTranslator({ model: FIXTURE, sourceLanguage: 'es', targetLanguage: 'en', worker: true });
  d.destroy();
  assert.equal(await (await e).translate(ref.texts[1], GREEDY), ref.translations.en.text[1]);
  (await e).destroy();
  // Two loads of one model; one gives up, the other still gets it.
  const giveUp = new AbortController();
  const f1 = createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', worker: true, signal: giveUp.signal });
  const f2 = createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', worker: true });
  giveUp.abort();
  await assert.rejects(f1, isAbort);
  const f = await f2;
  assert.equal(await f.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
  f.destroy();
});

test('worker mode (worker_threads) gives the same answers, streams, aborts and destroys', async () => {
  const w = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', worker: true });
  assert.equal(w.inWorker, true);
  assert.deepEqual(await w.translate(ref.texts, GREEDY), ref.translations.es.text);
  const chunks = [];
  for await (const chunk of w.translateStreaming(ref.texts[2], GREEDY)) chunks.push(chunk);
  assert.equal(chunks.join(''), ref.translations.es.text[2]);
  // Cancelled in the worker: it stops after the chunk that aborted it.
  const long = `${ref.texts[0]} `.repeat(30);
  const full = [];
  for await (const chunk of w.translateStreaming(long, GREEDY)) full.push(chunk);
  const stopped = await abortAfterChunks(w, long, 2, GREEDY);
  assert.ok(full.length > 10 && stopped.length === 2, `${stopped.length} of ${full.length} chunks`);
  assert.equal(await w.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
  await assert.rejects(w.translate('x', { beam: 0 }), RangeError);
  // shortlist reaches the engine: false on a model without a shortlist changes nothing; not a boolean is refused.
  assert.deepEqual(await w.translate(ref.texts, { ...GREEDY, shortlist: false }), ref.translations.es.text);
  await assert.rejects(w.translate('x', { shortlist: 'no' }), /shortlist must be an integer in \[0, 1\]/);
  const q = w.translate('x');
  w.destroy();
  await assert.rejects(q, isAbort);
});

test('languages: pairs from the config, both languages required, tags matched by language, clear errors', async () => {
  assert.deepEqual(t.languagePairs, [['en', 'es'], ['es', 'en']]);
  assert.equal(t.sourceLanguage, 'en');
  assert.equal(t.targetLanguage, 'es');
  assert.equal(t.inputQuota, INPUT_QUOTA);
  assert.equal(await t.measureInputUsage('Hello, world!'), ref.ids[2].length + 1);
  await assert.rejects(createTranslator({ model: FIXTURE }), (err) => err instanceof TypeError && /sourceLanguage is required/.test(err.message));
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'en' }), (err) => err instanceof TypeError && /targetLanguage is required/.test(err.message));
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'fr' }),
    (err) => err.name === 'NotSupportedError' && /does not translate en → fr \(it translates en → es, es → en\)/.test(err.message));
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'de', targetLanguage: 'es' }), { name: 'NotSupportedError' });
  assert.equal(await availability({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es' }), 'available');
  assert.equal(await availability({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'fr' }), 'unavailable');
  assert.equal(await availability({ model: `${tmp}/nothing-here`, sourceLanguage: 'en', targetLanguage: 'es' }), 'unavailable');
  assert.deepEqual(languagePairs({}, 'https://x/models/es-en/'), [['es', 'en']]);
  const info = await modelInfo({ model: FIXTURE });
  assert.equal(info.config.d_model, 32);
  // Only one target: it is implied.
  assert.deepEqual(languagePairs({ languages: { source: ['es'], target: ['en'] } }), [['es', 'en']]);
});

test('a runtime without WebAssembly SIMD is told so before anything downloads', async () => {
  const validate = WebAssembly.validate;
  WebAssembly.validate = () => false;
  try {
    await assert.rejects(createTranslator({ model: `${tmp}/not-there`, sourceLanguage: 'en', targetLanguage: 'es' }),
      (err) => err.name === 'NotSupportedError' && /WebAssembly SIMD/.test(err.message));
    assert.equal(await availability({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es' }), 'unavailable');
  } finally {
    WebAssembly.validate = validate;
  }
});

test('the default model: the repository\'s models/es-en in a checkout, which is the model package', async () => {
  const info = await modelInfo();
  assert.equal(info.url, new URL('models/es-en/', `file://${root}`).href);
  const pkg = JSON.parse(readFileSync(`${root}models/es-en/package.json`, 'utf8'));
  assert.equal(pkg.name, DEFAULT_MODEL.package);
  assert.equal(pkg.version, DEFAULT_MODEL.version, 'js/defaults.js pins the model package\'s version');
  assert.equal(DEFAULT_MODEL.url, `https://cdn.jsdelivr.net/npm/${pkg.name}@${pkg.version}/`);
});

test('loading: progress from 0 to 1 with bytes alongside; SHA-256 manifest check; clear errors', async () => {
  const events = [];
  const fresh = await createTranslator({
    model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', verify: 'require', wasm: `${root}dist/residual-mt.wasm`,
    monitor(m) { m.addEventListener('downloadprogress', (e) => events.push(e)); },
  });
  fresh.destroy();
  assert.ok(events.length >= 2);
  assert.equal(events[0].loaded, 0);
  assert.equal(events.at(-1).loaded, 1);
  assert.ok(events.every((e, i) => e.total === 1 && e.lengthComputable && (i === 0 || e.loaded > events[i - 1].loaded) &&
    e.loaded * 0x10000 === Math.floor(e.loaded * 0x10000)), 'fractions of 1/65536, rising');
  assert.equal(events.at(-1).bytesLoaded, events.at(-1).bytesTotal);
  assert.ok(events.at(-1).bytesTotal > 200_000, `bytes ${events.at(-1).bytesTotal}`);

  // A corrupt copy (one byte changed) fails verification, naming the file.
  const bad = join(tmp, 'corrupt/');
  cpSync(FIXTURE, bad, { recursive: true });
  const weights = readFileSync(join(bad, 'model.safetensors'));
  weights[weights.length - 1] ^= 1;
  writeFileSync(join(bad, 'model.safetensors'), weights);
  await assert.rejects(createTranslator({ model: bad, sourceLanguage: 'en', targetLanguage: 'es' }), /model\.safetensors .*SHA-256/);
  // Without a manifest it loads unverified, unless verify: 'require'.
  rmSync(join(bad, 'manifest.json'));
  await assert.rejects(createTranslator({ model: bad, sourceLanguage: 'en', targetLanguage: 'es', verify: 'require' }), /manifest\.json not found/);
  // Missing directory and wrong content.
  await assert.rejects(createTranslator({ model: join(tmp, 'missing'), sourceLanguage: 'en', targetLanguage: 'es' }), /not found/);
  const html = join(tmp, 'html/');
  cpSync(FIXTURE, html, { recursive: true });
  rmSync(join(html, 'manifest.json'));
  writeFileSync(join(html, 'model.safetensors'), '<!doctype html><title>index</title>');
  await assert.rejects(createTranslator({ model: html, sourceLanguage: 'en', targetLanguage: 'es' }), /HTML page/);
  // An engine that is not WebAssembly: the loader's check (a file), wasm.js's (bytes).
  await assert.rejects(loadFiles(await toLocation(FIXTURE), { wasm: `${FIXTURE}config.json` }),
    /residual-mt\.wasm \(.*config\.json\) is not a WebAssembly module/);
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', wasm: `${FIXTURE}spm.model` }),
    /is not a WebAssembly module/);
  await assert.rejects(createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', wasm: Buffer.from('\0asm not wasm') }),
    /the engine file is not valid WebAssembly/);
  await assert.rejects(loadWasm(new Uint8Array([0, 0x61, 0x73, 0x6d, 2, 0, 0, 0])), /the engine file is not valid WebAssembly/);
  // verify: 'require' checks every model file, spm.model too.
  const unlisted = join(tmp, 'unlisted/');
  cpSync(FIXTURE, unlisted, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(unlisted, 'manifest.json'), 'utf8'));
  delete manifest.files['spm.model'];
  writeFileSync(join(unlisted, 'manifest.json'), JSON.stringify(manifest));
  await assert.rejects(createTranslator({ model: unlisted, sourceLanguage: 'en', targetLanguage: 'es', verify: 'require' }),
    /does not list spm\.model \(verify: 'require'/);
  const loose = await createTranslator({ model: unlisted, sourceLanguage: 'en', targetLanguage: 'es' });
  assert.equal(await loose.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
  loose.destroy();
});

test('loading over HTTP: fetch with progress, HTTP errors named, wrong MIME/content detected', async () => {
  const server = createStaticServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    const events = [];
    const remote = await createTranslator({
      model: `${base}/tests/fixtures/models/residual-text/`, wasm: `${base}/dist/residual-mt.wasm`, sourceLanguage: 'en', targetLanguage: 'es',
      monitor(m) { m.ondownloadprogress = (e) => events.push(e.loaded / e.total); },
    });
    assert.equal(await remote.translate(ref.texts[3], GREEDY), ref.translations.es.text[3]);
    assert.equal(events.at(-1), 1);
    remote.destroy();
    await assert.rejects(createTranslator({ model: `${base}/models/nope/`, sourceLanguage: 'en', targetLanguage: 'es' }), /HTTP 404/);
    await assert.rejects(createTranslator({ model: `${base}/tests/fixtures/models/residual-text/`, wasm: `${base}/dist/missing.wasm`, sourceLanguage: 'en', targetLanguage: 'es' }),
      /residual-mt\.wasm.*HTTP 404/);
    await assert.rejects(createTranslator({ model: 'http://127.0.0.1:1/m/', sourceLanguage: 'en', targetLanguage: 'es' }), /cannot download|network error/);
    // Headers the demo needs.
    const wasm = await fetch(`${base}/dist/residual-mt.wasm`);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    assert.equal(wasm.headers.get('cross-origin-opener-policy'), 'same-origin');
    assert.equal(wasm.headers.get('cross-origin-embedder-policy'), 'require-corp');
    const page = await fetch(`${base}/`);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    assert.match(await page.text(), /data-testid="status"/);
    assert.equal((await fetch(`${base}/manifest.webmanifest`)).headers.get('content-type'), 'application/manifest+json; charset=utf-8');
    assert.equal((await fetch(`${base}/js/index.js`)).headers.get('content-type'), 'text/javascript; charset=utf-8');
    const etag = wasm.headers.get('etag');
    assert.equal((await fetch(`${base}/dist/residual-mt.wasm`, { headers: { 'If-None-Match': etag } })).status, 304);
    for (const path of ['/../package.json', '/js/%2e%2e/package.json', '/models/data/x.txt', '/models/train.py', '/nope.html']) {
      assert.equal((await fetch(`${base}${path}`)).status, 404, path);
    }
  } finally {
    server.close();
  }
});

// (The package installed from its tarball: tests/package.test.js.)
test('an idle worker_thread does not keep the process alive (no destroy() needed)', async () => {
  const app = join(tmp, 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(root, join(app, 'node_modules', 'residual-mt'), 'dir');
  const here = await createTranslator({ sourceLanguage: 'en', targetLanguage: 'es' });
  const out = await here.translate('Hello, world!', { beam: 1 });
  here.destroy();
  writeFileSync(join(app, 'worker.mjs'), [
    "import { createTranslator } from 'residual-mt';",
    "const translator = await createTranslator({ sourceLanguage: 'en', targetLanguage: 'es', worker: true });",
    "setTimeout(async () => console.log(JSON.stringify(await translator.translate('Hello, world!', { beam: 1 }))), 200);",
  ].join('\n'));
  const run2 = spawnSync(process.execPath, ['worker.mjs'], { cwd: app, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run2.status, 0, run2.stderr);
  assert.equal(JSON.parse(run2.stdout), out);
});

// The modules `entry` (a path from the repository root) imports, itself
// included, as paths; also those it imports later (import()) and starts as workers.
function moduleGraph(entry, seen = new Set()) {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const source = readFileSync(`${root}${entry.slice(1)}`, 'utf8');
  const imports = /(?:from\s+|import\s*\(?\s*)'(\.{1,2}\/[^']+\.js)'|new URL\('(\.{1,2}\/[^']+\.js)', import\.meta\.url\)/g;
  for (const m of source.matchAll(imports)) moduleGraph(new URL(m[1] ?? m[2], `http://x${entry}`).pathname, seen);
  return seen;
}

test('the service worker precaches every module the demo and its worker import, as dist/shell.json lists them', () => {
  const sw = readFileSync(`${root}web/sw.js`, 'utf8');
  const shell = new Set(SHELL.map((path) => new URL(path, 'http://x/web/sw.js').pathname));
  // dist/shell.json is the files as they are (build.sh writes it), and sw.js reads it from there.
  assert.deepEqual(JSON.parse(readFileSync(`${root}dist/shell.json`, 'utf8')), shellManifest(), 'dist/shell.json is stale: bash build.sh wasm');
  assert.ok(sw.includes(`const SHELL_MANIFEST = new URL('${SHELL_MANIFEST}', self.location).href;`));
  assert.ok(sw.includes(`const SHELL_FORMAT = '${SHELL_FORMAT}';`));
  const seen = new Set([...moduleGraph('/web/app.js'), ...moduleGraph('/js/worker.js')]);
  for (const path of seen) {
    const served = path.startsWith('/web/') ? path.slice(4) : path;
    assert.ok(shell.has(served) || shell.has(path), `${path} is not in scripts/shell.js's SHELL`);
  }
  assert.ok(seen.has('/js/engine/runner.js') && seen.has('/js/engine/wasm.js'));
  // It has no copy of the model-directory names: the manifest's comes in shell.json, from js/defaults.js.
  assert.equal(shellManifest().modelManifest, MANIFEST);
  for (const name of [MANIFEST, ...MODEL_FILES]) assert.ok(!sw.includes(`'${name}'`), `sw.js names ${name} itself`);
  assert.ok(!/^\s*(import|export)\s/m.test(sw), 'a classic script');
  assert.ok(shell.has('/dist/residual-mt.wasm'));
});

test('the demo page loads one bundled module (dist/demo.js, scripts/bundle.js), as built from web/ and js/ now, and its worker one', async () => {
  const html = readFileSync(`${root}web/index.html`, 'utf8');
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.deepEqual(scripts, ['<script type="importmap">', '<script type="module" src="../dist/demo.js">']);
  assert.ok(!html.includes('modulepreload'), 'nothing else to preload');
  const { files, bundled } = await demoBundles();
  assert.ok(bundled, 'esbuild (a devDependency) is installed');
  for (const [name, text] of Object.entries(files)) {
    assert.equal(readFileSync(`${root}dist/${name}`, 'utf8'), text, `dist/${name} is stale: bash build.sh wasm`);
    assert.doesNotMatch(text, /\bimport\s*[^;()]*?from\s*["']\.{1,2}\//, `dist/${name} imports no module of its own`);
    assert.ok(SHELL.includes(`../dist/${name}`), `the service worker keeps dist/${name}`);
  }
  // The URLs the library computes from import.meta.url resolve from dist/ as from js/.
  assert.match(files['demo.js'], /new URL\("\.\/worker\.js",\s*import\.meta\.url\)/);
  assert.match(files['worker.js'], /new URL\("\.\/pool-worker\.js",\s*import\.meta\.url\)/);
  assert.match(files['demo.js'], /new URL\("\.\.\/",\s*import\.meta\.url\)/);
});

test('npm start\'s server (scripts/serve.js) prints its URL and honours PORT', async () => {
  const child = spawn(process.execPath, [`${root}scripts/serve.js`], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        // The address it listens on, not "localhost" (which may resolve to ::1 first).
        const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
        if (m) resolve(m[0]);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cross-origin-embedder-policy'), 'require-corp');
    assert.ok(JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts.start.includes('scripts/serve.js'));
  } finally {
    child.kill();
  }
});
