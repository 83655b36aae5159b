// The LanguageDetector API (webmachinelearning/translation-api) in Node, on
// the shipped model models/langid/: results as the spec shapes them, tags,
// expectedInputLanguages, availability, input quota, abort and destroy, the
// worker and in-process engines, and the polyfills. tests/browser.test.js
// checks the same in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LanguageDetector, createLanguageDetector, detectorAvailability, DETECTOR_INPUT_QUOTA } from '../js/index.js';
import { rankLanguages } from '../js/detector.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const SENTENCES = {
  en: 'The file could not be opened because it is in use by another program.',
  es: 'No se pudo abrir el archivo porque otro programa lo está usando.',
  fr: 'Impossible d\'ouvrir le fichier car il est utilisé par un autre programme.',
  de: 'Die Datei konnte nicht geöffnet werden, da sie von einem anderen Programm verwendet wird.',
  ru: 'Не удалось открыть файл, так как он используется другой программой.',
  ja: 'ファイルは別のプログラムで使用されているため、開けませんでした。',
};

function checkShape(results) {
  assert.ok(results.length >= 1);
  assert.equal(results.at(-1).detectedLanguage, 'und', 'und last');
  let sum = 0;
  for (let i = 0; i < results.length; i++) {
    const { detectedLanguage, confidence } = results[i];
    assert.equal(typeof detectedLanguage, 'string');
    assert.ok(confidence >= 0 && confidence <= 1, `${detectedLanguage} ${confidence}`);
    if (i > 0 && i < results.length - 1) assert.ok(confidence <= results[i - 1].confidence, 'sorted');
    if (detectedLanguage !== 'und') assert.equal(Intl.getCanonicalLocales(detectedLanguage)[0], detectedLanguage, 'canonical');
    sum += confidence;
  }
  assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum}: und holds what the list leaves`);
  assert.ok(results.at(-1).confidence > 0 || results.length > 1, 'a text with no letters is und with 1');
}

test('detect(): the language of whole sentences, spec-shaped results', async () => {
  const detector = await LanguageDetector.create();
  for (const [lang, text] of Object.entries(SENTENCES)) {
    const results = await detector.detect(text);
    checkShape(results);
    assert.equal(results[0].detectedLanguage, lang, `${text}: ${JSON.stringify(results.slice(0, 3))}`);
  }
  assert.deepEqual(await detector.detect(''), [{ detectedLanguage: 'und', confidence: 1 }]);
  assert.deepEqual(await detector.detect('1234 !!! ...'), [{ detectedLanguage: 'und', confidence: 1 }]);
  assert.ok(detector.languages.includes('es') && detector.languages.length >= 45, detector.languages.join(' '));
  detector.destroy();
});

test('rankLanguages: stops at 0.99, drops what is below unknown, und last with the rest', () => {
  const close = (results, want) => {
    assert.deepEqual(results.map((r) => r.detectedLanguage), want.map(([tag]) => tag));
    results.forEach((r, i) => assert.ok(Math.abs(r.confidence - want[i][1]) < 1e-12, `${r.detectedLanguage} ${r.confidence}`));
    assert.equal(results.reduce((sum, r) => sum + r.confidence, 0), 1, 'the list and und add up to 1');
  };
  close(rankLanguages(['a', 'b', 'c'], [0.2, 0.795, 0.005]), [['b', 0.795], ['a', 0.2], ['und', 0.005]]);
  close(rankLanguages(['a', 'b'], [0.995, 0.005]), [['a', 0.995], ['und', 0.005]]);
  // A language less likely than "none of these" is left to und.
  close(rankLanguages(['a', 'b'], [0.5, 0.1], 0.4), [['a', 0.5], ['und', 0.5]]);
  close(rankLanguages(['a', 'b'], [0, 0], 1), [['und', 1]]);
  close(rankLanguages(['a', 'b', 'c'], [0.6, 0.4, 0]), [['a', 0.6], ['b', 0.4], ['und', 0]]);
});

test('expectedInputLanguages: canonical, frozen, or null; availability by the model\'s languages', async () => {
  const plain = await createLanguageDetector();
  assert.equal(plain.expectedInputLanguages, null);
  assert.equal(plain.inputQuota, DETECTOR_INPUT_QUOTA);
  const given = await createLanguageDetector({ expectedInputLanguages: ['EN-us', 'es', 'es'] });
  assert.deepEqual(given.expectedInputLanguages, ['en-US', 'es']);
  assert.ok(Object.isFrozen(given.expectedInputLanguages));
  assert.equal((await createLanguageDetector({ expectedInputLanguages: [] })).expectedInputLanguages, null);
  assert.equal(await detectorAvailability(), 'available');
  assert.equal(await LanguageDetector.availability({ expectedInputLanguages: ['pt-BR', 'zh-TW', 'sr-Latn'] }), 'available');
  assert.equal(await LanguageDetector.availability({ expectedInputLanguages: ['tlh'] }), 'unavailable');
  await assert.rejects(LanguageDetector.availability({ expectedInputLanguages: ['en_US'] }), RangeError);
  await assert.rejects(LanguageDetector.availability({ expectedInputLanguages: 'en' }), TypeError);
  await assert.rejects(LanguageDetector.create({ expectedInputLanguages: ['tlh'] }), { name: 'NotSupportedError' });
  for (const d of [plain, given]) d.destroy();
});

test('abort and destroy: AbortError or the reason, before and during; later calls too', async () => {
  const before = new AbortController();
  before.abort(new Error('no thanks'));
  await assert.rejects(LanguageDetector.create({ signal: before.signal }), /no thanks/);
  const during = new AbortController();
  const creating = LanguageDetector.create({ signal: during.signal });
  during.abort();
  await assert.rejects(creating, { name: 'AbortError' });
  const detector = await LanguageDetector.create();
  const call = new AbortController();
  call.abort();
  await assert.rejects(detector.detect('hola', { signal: call.signal }), { name: 'AbortError' });
  await assert.rejects(detector.measureInputUsage('hola', { signal: call.signal }), { name: 'AbortError' });
  const running = detector.detect(SENTENCES.es.repeat(50));
  detector.destroy();
  await assert.rejects(running, { name: 'AbortError' });
  await assert.rejects(detector.detect('hola'), { name: 'AbortError' });
  assert.ok(detector.destroyed);
  // create()'s signal aborted later destroys the detector.
  const later = new AbortController();
  const d2 = await LanguageDetector.create({ signal: later.signal });
  later.abort();
  await assert.rejects(d2.detect('hola'), { name: 'AbortError' });
});

test('calls answer in a later task: a signal aborted (or destroy()) right after the call still rejects it', async () => {
  const detector = await LanguageDetector.create();
  for (const call of [(signal) => detector.measureInputUsage('hola', { signal }), (signal) => detector.detect('', { signal }),
    (signal) => detector.detect('Buenos días a todos', { signal })]) {
    const plain = new AbortController();
    const pending = call(plain.signal);
    plain.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    const reason = new Error('changed my mind');
    const custom = new AbortController();
    const pending2 = call(custom.signal);
    custom.abort(reason);
    await assert.rejects(pending2, (err) => err === reason);
  }
  // The text is required: none is a TypeError, not the word "undefined" (given, it is that word).
  await assert.rejects(detector.detect(), TypeError);
  await assert.rejects(detector.measureInputUsage(), TypeError);
  assert.equal(await detector.measureInputUsage(undefined), 'undefined'.length);
  const measuring = detector.measureInputUsage('hola');
  const detecting = detector.detect('');
  detector.destroy();
  await assert.rejects(measuring, { name: 'AbortError' });
  await assert.rejects(detecting, { name: 'AbortError' });
  await assert.rejects(detector.measureInputUsage('hola'), { name: 'AbortError' });
  // create()'s signal aborted later, right after calls: they reject with its reason.
  const owner = new AbortController();
  const d2 = await LanguageDetector.create({ signal: owner.signal });
  const calls = [d2.measureInputUsage('x'), d2.detect('Bonjour à tous')];
  const reason = new Error('page closed');
  owner.abort(reason);
  for (const p of [...calls, d2.measureInputUsage('x')]) await assert.rejects(p, (err) => err === reason);
});

test('create(): aborted from its monitor\'s progress handler (at 0 or at 1), it rejects with the reason', async () => {
  for (const at of [0, 1]) {
    const controller = new AbortController();
    const reason = new Error(`stop at ${at}`);
    const seen = [];
    const creating = LanguageDetector.create({
      signal: controller.signal,
      monitor: (m) => m.addEventListener('downloadprogress', (e) => {
        seen.push(e.loaded);
        // As a page would: in a later microtask than the event itself.
        if (e.loaded === at) Promise.resolve().then(() => controller.abort(reason));
      }),
    });
    await assert.rejects(creating, (err) => err === reason);
    assert.equal(seen.filter((loaded) => loaded === at).length, 1, `one event at ${at}: ${seen}`);
  }
});

test('input quota: measureInputUsage is the length; over the quota a QuotaExceededError', async () => {
  const detector = await LanguageDetector.create();
  assert.equal(await detector.measureInputUsage('hola'), 4);
  assert.equal(await detector.measureInputUsage(''), 0);
  const big = 'a'.repeat(DETECTOR_INPUT_QUOTA + 1);
  await assert.rejects(detector.detect(big), (err) => err.name === 'QuotaExceededError' && err.requested === big.length &&
    err.quota === DETECTOR_INPUT_QUOTA);
  detector.destroy();
});

test('monitor: downloadprogress 0 then 1', async () => {
  const seen = [];
  const detector = await LanguageDetector.create({ monitor: (m) => m.addEventListener('downloadprogress', (e) => seen.push(e.loaded)) });
  assert.deepEqual(seen, [0, 1]);
  detector.destroy();
});

test('in a worker_thread as in-process: the same answers', async () => {
  const inline = await createLanguageDetector({ worker: false });
  const worker = await createLanguageDetector({ worker: true });
  for (const text of Object.values(SENTENCES)) assert.deepEqual(await worker.detect(text), await inline.detect(text));
  inline.destroy();
  worker.destroy();
});

test('polyfills: LanguageDetector installed where absent; /replace installs it over a built-in', () => {
  const script = `
    globalThis.LanguageDetector = undefined; delete globalThis.LanguageDetector;
    class Builtin {}
    globalThis.Translator = Builtin;
    await import('residual-mt/polyfill');
    const ours = (await import('residual-mt')).LanguageDetector;
    if (globalThis.LanguageDetector !== ours) throw new Error('not installed where absent');
    if (globalThis.Translator !== Builtin) throw new Error('the polyfill replaced a built-in');
    await import('residual-mt/polyfill/replace');
    if (globalThis.Translator === Builtin || globalThis.Translator.builtin !== Builtin) throw new Error('replace did not');
    const d = await LanguageDetector.create();
    console.log((await d.detect('Guten Morgen, wie geht es dir?'))[0].detectedLanguage);
    d.destroy();`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'de');
});

test('the model package: models/langid/package.json is the version DETECTOR_MODEL pins, and holds its file', async () => {
  const { DETECTOR_MODEL } = await import('../js/index.js');
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(`${root}${DETECTOR_MODEL.repoPath}package.json`, 'utf8'));
  assert.equal(pkg.name, DETECTOR_MODEL.package);
  assert.equal(pkg.version, DETECTOR_MODEL.version);
  assert.ok(pkg.files.includes(DETECTOR_MODEL.file));
  assert.ok(DETECTOR_MODEL.url.endsWith(`${pkg.name}@${pkg.version}/`));
});

test('rankLanguages: float32 sums a hair over 1 are cut to 1', () => {
  const results = rankLanguages(['a', 'b'], [0.9, 0.100001]);
  assert.ok(results.reduce((sum, r) => sum + r.confidence, 0) <= 1);
  assert.equal(results[0].confidence, 0.9);
});
