// One worker for a page's engines (js/host/backends.js): a LanguageDetector and a
// translator, created in either order, run in one worker_thread (counted at
// node:worker_threads' Worker constructor, not taken from a flag), answer
// there as each does alone, outlive each other's destroy(), end the worker
// once both are destroyed, and both fail (never hang) when it dies.
// tests/detector-browser.test.js checks the same with Web Workers in Chromium.
import { test, afterEach, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import workerThreads from 'node:worker_threads';
import { createLanguageDetector, createTranslator } from '../js/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const TEXT = `${root}tests/fixtures/models/residual-text/`;
const ref = JSON.parse(readFileSync(`${TEXT}reference.json`, 'utf8'));
const SENTENCES = ['The file could not be opened because it is in use by another program.',
  'No se pudo abrir el archivo porque otro programa lo está usando.', 'Die Datei konnte nicht geöffnet werden.',
  'Не удалось открыть файл.', 'ファイルを開けませんでした。', ''];

// Every engine worker this process starts (port.js imports Worker when it
// starts one, so the counting class is the one it gets), each with `exited`:
// a promise of its exit.
const { Worker } = workerThreads;
let started = [];
beforeEach(() => {
  started = [];
  workerThreads.Worker = class CountingWorker extends Worker {
    constructor(url, ...rest) {
      super(url, ...rest);
      if (String(url).endsWith('/js/worker.js')) {
        this.exited = new Promise((resolve) => this.once('exit', resolve));
        started.push(this);
      }
    }
  };
  syncBuiltinESMExports();
});
afterEach(() => {
  workerThreads.Worker = Worker;
  syncBuiltinESMExports();
});

const translatorOptions = (more) => ({ model: TEXT, sourceLanguage: 'en', targetLanguage: 'es', worker: true, ...more });
const withTimeout = (promise, ms, what) => Promise.race([promise,
  new Promise((_, reject) => { setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref(); })]);
const ended = (worker) => withTimeout(worker.exited, 10_000, 'the worker ended');
// Destroys them all: every worker started then ends.
async function destroyAll(...users) {
  for (const user of users) user.destroy();
  await Promise.all(started.map(ended));
}
// A detector, then a translator, both in a worker.
const both = async () => ({ detector: await createLanguageDetector({ worker: true }), translator: await createTranslator(translatorOptions()) });

// What each answers alone, each in a worker of its own.
async function alone() {
  const detector = await createLanguageDetector({ worker: true });
  const detected = [];
  for (const text of SENTENCES) detected.push(await detector.detect(text));
  detector.destroy();
  const translator = await createTranslator(translatorOptions());
  const translated = [];
  for (const text of ref.texts) translated.push(await translator.translate(text, { beam: 1 }));
  translator.destroy();
  await Promise.all(started.map(ended));
  assert.equal(started.length, 2, 'one worker each, started one after the other');
  started = [];
  return { detected, translated };
}

for (const order of ['detector first', 'translator first']) {
  test(`a detector and a translator (${order}) share one worker, which ends once both are destroyed`, async () => {
    const makeDetector = () => createLanguageDetector({ worker: true });
    const makeTranslator = () => createTranslator(translatorOptions());
    const [first, second] = order === 'detector first' ? [makeDetector, makeTranslator] : [makeTranslator, makeDetector];
    const a = await first();
    const b = await second();
    const [detector, translator] = order === 'detector first' ? [a, b] : [b, a];
    assert.equal(started.length, 1, 'one worker');
    assert.equal(translator.inWorker, true);
    assert.equal((await detector.detect(SENTENCES[1]))[0].detectedLanguage, 'es');
    assert.equal(typeof await translator.translate(ref.texts[2], { beam: 1 }), 'string');
    let exited = false;
    started[0].exited.then(() => { exited = true; });
    detector.destroy();
    await translator.translate(ref.texts[0], { beam: 1 }); // the worker still serves it
    assert.equal(exited, false, 'one destroyed: the worker stays');
    translator.destroy();
    await ended(started[0]);
  });
}

test('created at once, a detector and a translator still start one worker', async () => {
  const [detector, translator] = await Promise.all([createLanguageDetector({ worker: true }), createTranslator(translatorOptions())]);
  assert.equal(started.length, 1);
  await destroyAll(detector, translator);
});

test('in the shared worker, interleaved detect() and translate() answer as each does alone', async () => {
  const want = await alone();
  const { detector, translator } = await both();
  assert.equal(started.length, 1);
  const calls = [];
  for (let i = 0; i < Math.max(SENTENCES.length, ref.texts.length); i++) {
    if (i < ref.texts.length) calls.push(translator.translate(ref.texts[i], { beam: 1 }));
    if (i < SENTENCES.length) calls.push(detector.detect(SENTENCES[i]));
  }
  // A stream too, while detections run between its steps.
  const streamed = (async () => {
    let text = '';
    for await (const chunk of translator.translateStreaming(ref.texts[0], { beam: 1 })) text += chunk;
    return text;
  })();
  const detectedMeanwhile = Promise.all(SENTENCES.map((s) => detector.detect(s)));
  const results = await Promise.all(calls);
  const translated = results.filter((r) => typeof r === 'string');
  const detected = results.filter((r) => Array.isArray(r));
  assert.deepEqual(translated, want.translated);
  assert.deepEqual(detected, want.detected);
  assert.equal(await streamed, want.translated[0]);
  assert.deepEqual(await detectedMeanwhile, want.detected);
  await destroyAll(detector, translator);
});

test('destroy() of one, with the other\'s calls running, leaves the other working', async () => {
  const want = await alone();
  // The detector destroyed mid-translation: the translation ends as alone.
  const pair = await both();
  const { translator } = pair;
  let { detector } = pair;
  const running = translator.translate(ref.texts[0], { beam: 1 });
  const doomed = detector.detect(SENTENCES[0]);
  detector.destroy();
  await assert.rejects(doomed, { name: 'AbortError' });
  assert.equal(await running, want.translated[0]);
  // A new detector joins the same worker (its engine was freed, the worker kept).
  detector = await createLanguageDetector({ worker: true });
  assert.equal(started.length, 1);
  // The translator destroyed mid-detection, with a long translation still
  // in the worker: the detector answers as alone.
  const detecting = SENTENCES.map((s) => detector.detect(s));
  const translating = translator.translate(`${ref.texts[1]} `.repeat(40), { beam: 1 });
  const measuring = translator.measureInputUsage(`${ref.texts[1]} `.repeat(5000)); // runs to its end, destroyed or not
  translator.destroy();
  measuring.catch(() => {});
  // A new translator at once joins that worker, while the old one's engine still finishes.
  const creating = createTranslator(translatorOptions());
  await assert.rejects(translating, { name: 'AbortError' });
  assert.deepEqual(await Promise.all(detecting), want.detected);
  assert.deepEqual(await detector.detect(SENTENCES[2]), want.detected[2]);
  const again = await creating;
  assert.equal(await again.translate(ref.texts[2], { beam: 1 }), want.translated[2]);
  assert.equal(started.length, 1);
  await destroyAll(detector, again);
});

test('a second translation engine gets a worker of its own; the detector joins one of them', async () => {
  const one = await createTranslator(translatorOptions({ threads: 1 }));
  const two = await createTranslator(translatorOptions({ threads: 2 })); // another engine: another Host
  const detector = await createLanguageDetector({ worker: true });
  assert.equal(started.length, 2, 'two models translate in parallel, each in its worker');
  const [a, b, d] = await Promise.all([one.translate(ref.texts[0], { beam: 1 }), two.translate(ref.texts[0], { beam: 1 }),
    detector.detect(SENTENCES[3])]);
  assert.equal(a, b);
  assert.equal(d[0].detectedLanguage, 'ru');
  await destroyAll(one, two, detector);
});

test('a worker that dies rejects the pending calls of both, and later ones; new ones get a new worker', async () => {
  const { detector, translator } = await both();
  const [worker] = started;
  const long = `${ref.texts[0]} `.repeat(30);
  let detecting = null;
  const running = (async () => {
    for await (const chunk of translator.translateStreaming(long, { beam: 1 })) {
      if (chunk && !detecting) {
        // Dies with a translation in hand, and a detection sent to it.
        const dying = worker.terminate();
        detecting = detector.detect(SENTENCES[1]);
        await dying;
      }
    }
  })();
  const failed = { name: 'UnknownError', message: /the translation worker failed: exited with code 1/ };
  await withTimeout(assert.rejects(running, failed), 20_000, 'the translation rejected');
  await withTimeout(assert.rejects(detecting, failed), 20_000, 'the detection rejected');
  await assert.rejects(detector.detect(SENTENCES[0]), { name: 'UnknownError', message: /the translation worker failed/ });
  await assert.rejects(translator.translate('Hello.'), { name: 'UnknownError', message: /the translation worker failed/ });
  detector.destroy();
  translator.destroy();
  const { detector: freshDetector, translator: freshTranslator } = await both();
  assert.equal(started.length, 2, 'one new worker for both');
  assert.equal((await freshDetector.detect(SENTENCES[1]))[0].detectedLanguage, 'es');
  assert.equal(typeof await freshTranslator.translate(ref.texts[2], { beam: 1 }), 'string');
  await destroyAll(freshDetector, freshTranslator);
});

test('in-process (worker: false), a detector and a translator start no worker and work side by side', async () => {
  const detector = await createLanguageDetector({ worker: false });
  const translator = await createTranslator(translatorOptions({ worker: false }));
  assert.equal(translator.inWorker, false);
  const [d, t] = await Promise.all([detector.detect(SENTENCES[0]), translator.translate(ref.texts[2], { beam: 1 })]);
  assert.equal(d[0].detectedLanguage, 'en');
  assert.equal(typeof t, 'string');
  detector.destroy();
  assert.equal(await translator.translate(ref.texts[2], { beam: 1 }), t);
  translator.destroy();
  assert.equal(started.length, 0);
});
