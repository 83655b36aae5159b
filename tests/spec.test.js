// The Translator API's behaviour (webmachinelearning/translation-api and the
// Writing Assistance APIs' shared parts), in Node: language tags, same-language
// pairs, streaming, download progress, availability, input quota, error names,
// text with nothing to translate, the polyfill, and the model cache. The same
// behaviours are checked in Chromium by tests/browser.test.js. Uses the fixture
// model residual-text (tiny random weights) and the shipped model.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Translator, availability, createTranslator } from '../js/index.js';
import { Engine } from '../js/engine/binding.js';
import { INPUT_QUOTA, MODEL_FILES, defaultWasmUrl, threadCount } from '../js/defaults.js';
import { createStaticServer } from '../scripts/serve.js';
import { withServer } from './lib/server.js';
import { rewriteWeights } from './lib/weights.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}tests/fixtures/models/residual-text/`;
const SHIPPED = `${root}models/es-en/`;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-spec-'));
process.env.XDG_CACHE_HOME = join(tmp, 'cache');
after(() => rmSync(tmp, { recursive: true, force: true }));
const GREEDY = { beam: 1 };
const ref = JSON.parse(readFileSync(`${FIXTURE}reference.json`, 'utf8'));
const pair = (sourceLanguage, targetLanguage, more = {}) => ({ model: FIXTURE, sourceLanguage, targetLanguage, ...more });

test('language tags: canonicalized and matched by language; RangeError for invalid tags, TypeError for missing ones', async () => {
  const plain = await createTranslator(pair('es', 'en'));
  const want = await plain.translate('Hola, mundo.', GREEDY);
  for (const [source, target] of [['es-ES', 'en-US'], ['ES', 'EN'], ['es-419', 'en-GB'], ['es-Latn-ES', 'en-Latn-x-private']]) {
    const t = await createTranslator(pair(source, target));
    assert.equal(t.sourceLanguage, 'es', `${source} uses the es model`);
    assert.equal(t.targetLanguage, 'en');
    assert.equal(await t.translate('Hola, mundo.', GREEDY), want, `${source} → ${target}`);
    assert.equal(await availability(pair(source, target)), 'available');
    t.destroy();
  }
  plain.destroy();
  for (const bad of ['xx!!', 'en_US', 'e', 'Latn', '11', 'en-Lat', 'en-A999', '']) {
    await assert.rejects(createTranslator(pair(bad, 'en')), RangeError, bad);
    await assert.rejects(createTranslator(pair('es', bad)), RangeError, bad);
    await assert.rejects(availability(pair(bad, 'en')), RangeError, bad);
  }
  await assert.rejects(createTranslator({ model: FIXTURE, targetLanguage: 'en' }), TypeError);
  await assert.rejects(availability({ model: FIXTURE }), TypeError);
  await assert.rejects(Translator.availability(), TypeError);
  // A language the model does not have: NotSupportedError, 'unavailable'.
  await assert.rejects(createTranslator(pair('es', 'fr')), { name: 'NotSupportedError' });
  assert.equal(await availability(pair('fr-CA', 'en')), 'unavailable');
  // Passed around unbound, as code written for the built-in API does.
  const { create } = Translator;
  assert.equal((await create(pair('es', 'en'))).sourceLanguage, 'es');
});

test('same-language pairs pass the text through, with no model and no quota', async () => {
  for (const [source, target] of [['en', 'en'], ['en-US', 'en-GB'], ['es-ES', 'es']]) {
    assert.equal(await availability({ model: `${tmp}/no-model-here`, sourceLanguage: source, targetLanguage: target }), 'available');
    const t = await createTranslator({ model: `${tmp}/no-model-here`, sourceLanguage: source, targetLanguage: target });
    assert.equal(t.sourceLanguage, Intl.getCanonicalLocales(source)[0]);
    const text = 'Hello, world.\n\nSecond paragraph. 42';
    assert.equal(await t.translate(text), text);
    const chunks = [];
    for await (const chunk of t.translateStreaming(text)) chunks.push(chunk);
    assert.deepEqual(chunks, [text]);
    assert.equal(t.inputQuota, Infinity);
    assert.equal(await t.measureInputUsage(text), 0);
    t.destroy();
  }
});

test('text without letters (numbers, emoji, punctuation, whitespace, control characters) comes back as it came', async () => {
  const t = await createTranslator(pair('en', 'es'));
  const kept = ['', ' ', ' \r\n\t\f', '42', '😀', '3.14 + 2 = 5.14?!', '¡¿…?!', '\u0001', '\u200b', '(1) [2] {3}'];
  assert.deepEqual(await t.translate(kept), kept);
  for (const text of kept) assert.equal(await t.translate(text), text, JSON.stringify(text));
  for (const text of kept) assert.equal(await t.measureInputUsage(text), 0, JSON.stringify(text));
  // Spans between sentences, kept as they were around translated ones.
  const [a, b] = await t.translate(['Hello world.', 'Good morning.'], GREEDY);
  assert.equal(await t.translate('  Hello world.  42\n\n😀\n Good morning. ', GREEDY), `  ${a}  42\n\n😀\n ${b} `);
  // With a letter it is translated.
  assert.notEqual(await t.translate('Hello \u0001 world', GREEDY), 'Hello \u0001 world');
  t.destroy();
});

test('translateStreaming(): chunks to append, none taken back, adding up to translate() (shipped model, greedy and beam)', async () => {
  const t = await createTranslator({ model: SHIPPED, sourceLanguage: 'es', targetLanguage: 'en' });
  // A short sentence, then a long one: the first is done within max_len_a * 3 + max_len_b = 13 steps,
  // long before the second, so even a beam's output comes in more than one piece.
  const text = 'Hola. Y la tierra estaba desordenada y vacía, y las tinieblas estaban sobre la haz del abismo, ' +
    'y el espíritu de Dios se movía sobre la haz de las aguas.';
  for (const options of [GREEDY, { beam: 5 }]) {
    const chunks = [];
    for await (const chunk of t.translateStreaming(text, options)) chunks.push(chunk);
    assert.equal(chunks.join(''), await t.translate(text, options));
    // Greedy output is final token by token; a beam's only once its hypotheses
    // agree on a prefix, which depends on the model, or its sentence is done.
    const least = options.beam === 1 ? 3 : 2;
    assert.ok(chunks.length >= least, `${chunks.length} chunks at beam ${options.beam}`);
    assert.ok(chunks.every((chunk) => chunk.length > 0));
  }
  // Each chunk is new text, no chunk repeats what came before it, and none
  // is held back: for one sentence, the chunks are exactly what the engine
  // (its own Translation, stepped here) says became stable at each step (its
  // stable text less a trailing space or an incomplete character, which the
  // next token may still change), then the rest of its result.
  const engine = await Engine.load();
  const read = (file) => readFileSync(`${SHIPPED}${file}`);
  const model = engine.loadModel({ config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') });
  const sentence = text.slice('Hola. '.length);
  for (const options of [GREEDY, { beam: 5 }]) {
    const expected = [];
    let shown = '';
    const show = (now) => {
      if (now.length > shown.length && now.startsWith(shown)) expected.push(now.slice(shown.length));
      if (now.startsWith(shown)) shown = now;
    };
    const tr = model.beginText([sentence], { ...options, targetLanguage: 'en' });
    try {
      while (tr.step() > 0) show(tr.stableText(0).trimStart().replace(/[\s\uFFFD]+$/u, ''));
      show(tr.results(true)[0][0].text.trim());
    } finally {
      tr.free();
    }
    const chunks = [];
    for await (const chunk of t.translateStreaming(sentence, options)) chunks.push(chunk);
    assert.ok(expected.length >= (options.beam === 1 ? 10 : 2), `${expected.length} steps gave text at beam ${options.beam}`);
    assert.deepEqual(chunks, expected, `beam ${options.beam}`);
  }
  model.dispose();
  t.destroy();
});

test('downloadprogress: loaded from 0 to 1 in 1/65536 steps, total 1, bytes in extra fields; nothing after create() settles', async () => {
  const events = [];
  let created = false;
  const t = await createTranslator(pair('en', 'es', {
    monitor(m) {
      m.addEventListener('downloadprogress', (e) => {
        assert.equal(created, false, 'no event after create() resolved');
        events.push(e);
      });
    },
  }));
  created = true;
  assert.ok(events.length >= 2);
  assert.equal(events[0].loaded, 0);
  assert.equal(events.at(-1).loaded, 1);
  for (const [i, e] of events.entries()) {
    assert.equal(e.type, 'downloadprogress');
    assert.equal(e.total, 1);
    assert.equal(e.lengthComputable, true);
    assert.equal(e.loaded % (1 / 0x10000), 0);
    if (i) assert.ok(e.loaded > events[i - 1].loaded, 'strictly rising');
  }
  assert.ok(events.at(-1).bytesTotal > 0 && events.at(-1).bytesLoaded === events.at(-1).bytesTotal);
  // A model already loaded: 0 and 1 still.
  const again = [];
  const u = await createTranslator(pair('es', 'en', { monitor(m) { m.ondownloadprogress = (e) => again.push(e.loaded); } }));
  assert.deepEqual(again, [0, 1]);
  // Aborted at the last event: create() rejects with the reason, and no event follows.
  for (const at of [0, 1]) {
    const controller = new AbortController();
    const reason = new Error(`stop at ${at}`);
    const seen = [];
    const creating = createTranslator(pair('en', 'es', {
      signal: controller.signal,
      monitor(m) { m.addEventListener('downloadprogress', (e) => { seen.push(e.loaded); if (e.loaded === at) queueMicrotask(() => controller.abort(reason)); }); },
    }));
    await assert.rejects(creating, (err) => err === reason);
    assert.equal(seen.at(-1), at);
  }
  // A monitor that throws: create() rejects with its error.
  const thrown = new Error('monitor failed');
  await assert.rejects(createTranslator(pair('en', 'es', { monitor() { throw thrown; } })), (err) => err === thrown);
  t.destroy();
  u.destroy();
});

test('measureInputUsage() and inputQuota agree; past the quota a QuotaExceededError with requested and quota', async () => {
  const t = await createTranslator(pair('en', 'es'));
  assert.equal(t.inputQuota, INPUT_QUOTA);
  const text = 'Hello, world! How are you? Fine.';
  const usage = await t.measureInputUsage(text);
  assert.ok(usage > 0 && usage < t.inputQuota);
  t.destroy();
  for (const worker of [false, true]) {
    const small = await createTranslator(pair('en', 'es', { inputQuota: usage - 1, worker }));
    assert.equal(await small.measureInputUsage(text), usage);
    const check = (err) => err.name === 'QuotaExceededError' && err.requested === usage && err.quota === usage - 1;
    await assert.rejects(small.translate(text, GREEDY), check);
    await assert.rejects(async () => { for await (const _ of small.translateStreaming(text, GREEDY)); }, check); // eslint-disable-line no-unused-vars
    // At the quota it translates.
    const exact = await createTranslator(pair('en', 'es', { inputQuota: usage, worker }));
    assert.equal(typeof await exact.translate(text, GREEDY), 'string');
    small.destroy();
    exact.destroy();
  }
  await assert.rejects(createTranslator(pair('en', 'es', { inputQuota: 0 })), RangeError);
});

test('error names: AbortError after destroy (or the create signal\'s reason), NetworkError and OperationError for loads, nbest refused', async () => {
  const t = await createTranslator(pair('en', 'es'));
  const running = t.translate('Hello, world. '.repeat(20));
  const measuring = t.measureInputUsage('Hello');
  t.destroy();
  for (const p of [running, measuring, t.translate('x'), t.measureInputUsage('x')]) await assert.rejects(p, { name: 'AbortError' });
  const stream = t.translateStreaming('Hello');
  await assert.rejects(stream.pipeTo(new WritableStream()), { name: 'AbortError' });
  const controller = new AbortController();
  const u = await createTranslator(pair('en', 'es', { signal: controller.signal }));
  const reason = new Error('create aborted');
  const pending = u.translate('Hello, world.');
  controller.abort(reason);
  for (const p of [pending, u.translate('x'), u.measureInputUsage('x')]) await assert.rejects(p, (err) => err === reason);
  // A call's own signal: its reason, or an AbortError.
  const v = await createTranslator(pair('en', 'es'));
  await assert.rejects(v.translate('x', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  await assert.rejects(v.translate('x', { nbest: 2 }), TypeError);
  v.destroy();
  await assert.rejects(createTranslator(pair('en', 'es', { model: join(tmp, 'missing') })), { name: 'NetworkError' });
  const server = createStaticServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    await assert.rejects(createTranslator(pair('en', 'es', { model: `${base}/models/nope/` })), { name: 'NetworkError' });
    // The files come but are not an engine: OperationError.
    await assert.rejects(createTranslator(pair('en', 'es', { model: FIXTURE, wasm: `${base}/index.html` })), { name: 'OperationError' });
  } finally {
    server.close();
  }
});

// Runs a script in a new Node process (nothing loaded in memory) with this
// test's cache directory; resolves with { status, stdout, stderr } (not
// blocking: this process may be serving its requests).
function inFreshProcess(source) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source],
      { cwd: root, env: { ...process.env, XDG_CACHE_HOME: join(tmp, 'cache') } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function jsonFrom(source) {
  const run = await inFreshProcess(source);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

test('the model cache: a model fetched over HTTP is kept by its manifest\'s SHA-256; the next create reads no network', async () => {
  const server = createStaticServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const model = `http://127.0.0.1:${server.address().port}/tests/fixtures/models/residual-text/`;
  const script = (options) => `
    import { availability, createTranslator } from './js/index.js';
    const events = [];
    const options = { model: ${JSON.stringify(model)}, sourceLanguage: 'en', targetLanguage: 'es', ...${JSON.stringify(options)} };
    const before = await availability(options);
    const t = await createTranslator({ ...options, monitor(m) { m.ondownloadprogress = (e) => events.push([e.loaded, e.bytesTotal]); } });
    console.log(JSON.stringify({ before, after: await availability(options), text: await t.translate('Hello, world!', { beam: 1 }), events }));
    t.destroy();`;
  let first;
  try {
    first = await jsonFrom(script({}));
    assert.equal(first.before, 'downloadable');
    assert.ok(first.events.at(-1)[1] > 0, 'bytes were downloaded');
    // Each large file once (config.json is also read by availability() and create()'s language check).
    for (const name of ['model.safetensors', 'spm.model']) assert.equal(server.stats.full[`/tests/fixtures/models/residual-text/${name}`], 1, name);
  } finally {
    server.close();
  }
  // Stored under ~/.cache/residual-mt (here $XDG_CACHE_HOME): a directory per manifest.
  const dirs = readdirSync(join(tmp, 'cache/residual-mt')).filter((d) => /^[0-9a-f]{64}$/.test(d));
  assert.equal(dirs.length, 1);
  for (const name of MODEL_FILES) assert.ok(existsSync(join(tmp, 'cache/residual-mt', dirs[0], name)), name);
  // The server is gone: a new process finds the model in the cache, downloads nothing, translates the same.
  const second = await jsonFrom(script({}));
  assert.equal(second.before, 'available');
  assert.equal(second.text, first.text);
  // Only the engine (the default build for the default thread count), a local file, was read: no byte of the model.
  assert.equal(second.events.at(-1)[1], statSync(defaultWasmUrl(await threadCount())).size);
  // cache: false neither reads nor writes it.
  const off = await inFreshProcess(script({ cache: false }));
  assert.notEqual(off.status, 0);
  assert.match(off.stderr, /NetworkError|cannot download/);
});

// A new version of a model at the same URL: new weights (config.json and
// spm.model as they were) and a manifest naming them. The cached copy of the
// old version must not be used for it: the new weights are downloaded, kept
// apart (a directory per manifest), and translate as those weights do (the
// engine on the new files, loaded here); offline, the URL's last manifest
// finds the new version.
test('the model cache: new weights under a new version at the same URL are downloaded and used, never the cached old ones', async () => {
  const dir = join(tmp, 'versions/m/');
  cpSync(FIXTURE, dir, { recursive: true });
  const script = (model) => `
    import { createTranslator } from './js/index.js';
    const t = await createTranslator({ model: ${JSON.stringify(model)}, sourceLanguage: 'en', targetLanguage: 'es' });
    console.log(JSON.stringify(await t.translate(${JSON.stringify(ref.texts)}, { beam: 1 })));
    t.destroy();`;
  const local = async (files) => {
    const engine = await Engine.load();
    const model = engine.loadModel(files);
    const out = model.translateTexts(ref.texts, { beam: 1, targetLanguage: 'es' }).map(([best]) => best.text.trim());
    model.dispose();
    return out;
  };
  const read = (name) => readFileSync(join(dir, name));
  const files = () => ({ config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') });
  const oldTexts = await local(files());
  const cacheDirs = () => readdirSync(join(tmp, 'cache/residual-mt')).filter((d) => /^[0-9a-f]{64}$/.test(d));
  let newWeights, url;
  await withServer({ mounts: [{ prefix: '/versions/', dir: join(tmp, 'versions') }] }, async (base, server) => {
    url = `${base}versions/m/`;
    // (Version 1's manifest is the fixture's: an earlier test may have cached it from another URL.)
    assert.deepEqual(await jsonFrom(script(url)), oldTexts, 'version 1');
    const before = { dirs: cacheDirs(), downloads: server.stats.full['/versions/m/model.safetensors'] ?? 0 };
    // Version 2: the decoder's first feed-forward output negated.
    newWeights = rewriteWeights(read('model.safetensors'), 'F32', (name, values) => {
      if (name === 'decoder.layers.0.fc2.weight') values.forEach((v, i) => { values[i] = -v; });
    });
    writeFileSync(join(dir, 'model.safetensors'), newWeights);
    const manifest = JSON.parse(read('manifest.json'));
    manifest.files['model.safetensors'] = { sha256: createHash('sha256').update(newWeights).digest('hex'), size: newWeights.length };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
    const newTexts = await local(files());
    assert.notDeepEqual(newTexts, oldTexts, 'the new weights translate otherwise');
    assert.deepEqual(await jsonFrom(script(url)), newTexts, 'version 2: its own weights, not the cached ones');
    assert.equal(server.stats.full['/versions/m/model.safetensors'], before.downloads + 1, 'version 2\'s weights downloaded');
    // Kept apart: one directory more (its manifest's), holding the new bytes.
    const added = cacheDirs().filter((d) => !before.dirs.includes(d));
    assert.equal(added.length, 1, `new cache directories: ${added}`);
    assert.ok(readFileSync(join(tmp, 'cache/residual-mt', added[0], 'model.safetensors')).equals(newWeights));
    const kept = cacheDirs().map((d) => join(tmp, 'cache/residual-mt', d, 'model.safetensors')).filter((f) => existsSync(f) && readFileSync(f).equals(newWeights));
    assert.equal(kept.length, 1, 'the new weights are kept once');
  });
  // Offline: the URL's last manifest is the new version's.
  assert.deepEqual(await jsonFrom(script(url)), await local(files()), 'offline: version 2 from the cache');
});

test('the polyfill installs globalThis.Translator where there is none, and leaves one that exists', async () => {
  const run = (prelude) => jsonFrom(`${prelude}
    await import('./js/polyfill.js');
    const { Translator } = await import('./js/index.js');
    console.log(JSON.stringify({ ours: globalThis.Translator === Translator, type: typeof globalThis.Translator,
      available: typeof globalThis.Translator.availability === 'function' ? await globalThis.Translator.availability({ sourceLanguage: 'en', targetLanguage: 'en' }) : null }));`);
  assert.deepEqual(await run(''), { ours: true, type: 'function', available: 'available' });
  assert.deepEqual(await run('globalThis.Translator = class Native {};'), { ours: false, type: 'function', available: null });
  // Translators made through the global work as createTranslator's.
  const t = await Translator.create(pair('en', 'es'));
  assert.ok(t instanceof Translator);
  t.destroy();
});
