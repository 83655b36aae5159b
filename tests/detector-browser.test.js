// The LanguageDetector in Debian's Chromium (playwright-core, no browser
// download), next to Chromium's own built-in Translator and LanguageDetector,
// which cannot serve here (no model downloads: the built-in detector is
// 'unavailable', the built-in translator 'downloadable' but its create() never
// settles): residual-mt/polyfill stands aside for them, residual-mt/polyfill/replace
// installs this engine in their place, and both of ours then work: detection
// (in the engine's worker) as in Node, the spec's shapes, abort and destroy,
// and a translation created in a click. A detector and a translator share one
// Web Worker (counted at the page's Worker constructor; tests/shared-worker.test.js
// checks the same in Node).
//
// Skipped only when /usr/bin/chromium is missing and CI is not set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL, DETECTOR_MODEL, createLanguageDetector, createTranslator } from '../js/index.js';
import { withServer } from './lib/server.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const root = fileURLToPath(new URL('..', import.meta.url));
const skip = !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found (apt-get install chromium); CI is not set` : false;
const TEXTS = ['Die Datei konnte nicht geöffnet werden.', 'No se pudo abrir el archivo.', 'Файл не найден.',
  'Impossible d\'ouvrir le fichier.', 'ファイルを開けませんでした。', 'Kan ikke åpne filen.', '', '42 !!'];

// A cross-origin isolated page at the package's package.json (the package at
// /node_modules/residual-mt/, the two model packages beside it), for check(page).
async function onPage(check, csp = null) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'rmt-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
  });
  const mounts = [{ prefix: '/node_modules/residual-mt/', dir: root },
    { prefix: `/node_modules/${DEFAULT_MODEL.package}/`, dir: `${root}${DEFAULT_MODEL.repoPath}` },
    { prefix: `/node_modules/${DETECTOR_MODEL.package}/`, dir: `${root}${DETECTOR_MODEL.repoPath}` }];
  const errors = [];
  try {
    await withServer({ mounts, csp }, async (base) => {
      const page = await context.newPage();
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}node_modules/residual-mt/package.json`);
      await check(page);
    });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  assert.deepEqual(errors, []);
}

test('Chromium: polyfill stands aside for the built-ins; polyfill/replace puts ours in their place, and LanguageDetector detects as in Node', { skip, timeout: 180_000 }, async () => {
  const node = await createLanguageDetector({ worker: false });
  const want = [];
  for (const text of TEXTS) want.push(await node.detect(text));
  node.destroy();
  await onPage(async (page) => {
    const got = await page.evaluate(async (texts) => {
      const pkg = '/node_modules/residual-mt/js/';
      const builtins = { Translator: globalThis.Translator, LanguageDetector: globalThis.LanguageDetector };
      const out = { builtinDetector: typeof builtins.LanguageDetector, builtinTranslator: typeof builtins.Translator };
      out.builtinDetectorAvailability = builtins.LanguageDetector ? await builtins.LanguageDetector.availability() : null;
      await import(`${pkg}polyfill.js`);
      out.plainStoodAside = globalThis.LanguageDetector === builtins.LanguageDetector && globalThis.Translator === builtins.Translator;
      await import(`${pkg}polyfill-replace.js`);
      const ours = (await import(`${pkg}index.js`)).LanguageDetector;
      out.replaced = globalThis.LanguageDetector === ours && LanguageDetector.builtin === builtins.LanguageDetector &&
        Translator.builtin === builtins.Translator;
      out.availability = [await LanguageDetector.availability(), await LanguageDetector.availability({ expectedInputLanguages: ['tlh'] })];
      const detector = await LanguageDetector.create({ expectedInputLanguages: ['DE-de', 'es'] });
      out.expected = [detector.expectedInputLanguages, Object.isFrozen(detector.expectedInputLanguages)];
      out.results = [];
      for (const text of texts) out.results.push(await detector.detect(text));
      const running = detector.detect(texts[0].repeat(2000));
      detector.destroy();
      out.afterDestroy = await Promise.allSettled([running, detector.detect('hola')]).then((r) => r.map((s) => s.reason?.name));
      return out;
    }, TEXTS);
    assert.equal(got.builtinDetector, 'function', 'this Chromium has a built-in LanguageDetector');
    assert.equal(got.builtinDetectorAvailability, 'unavailable');
    assert.ok(got.plainStoodAside, 'residual-mt/polyfill leaves a built-in in place');
    assert.ok(got.replaced, 'residual-mt/polyfill/replace installs ours, the built-ins kept as .builtin');
    assert.deepEqual(got.availability, ['available', 'unavailable']);
    assert.deepEqual(got.expected, [['de-DE', 'es'], true]);
    assert.equal(got.results.length, want.length);
    got.results.forEach((results, i) => {
      assert.deepEqual(results.map((r) => r.detectedLanguage), want[i].map((r) => r.detectedLanguage), TEXTS[i]);
      results.forEach((r, k) => assert.ok(Math.abs(r.confidence - want[i][k].confidence) < 1e-5, TEXTS[i]));
    });
    assert.deepEqual(got.results.slice(0, 6).map((r) => r[0].detectedLanguage), ['de', 'es', 'ru', 'fr', 'ja', 'nb']);
    assert.deepEqual(got.results[6], [{ detectedLanguage: 'und', confidence: 1 }]);
    assert.deepEqual(got.afterDestroy, ['AbortError', 'AbortError']);
  });
});

test('Chromium: with polyfill/replace, Translator.create() in a click translates, where the built-in\'s made no progress', { skip, timeout: 180_000 }, async () => {
  const inNode = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
  const want = await inNode.translate('No se pudo abrir el archivo.');
  inNode.destroy();
  await onPage(async (page) => {
    await page.setContent('<button id="builtin">built-in</button><button id="ours">ours</button>');
    await page.evaluate(() => {
      window.log = { builtin: [], ours: [] };
      const start = (name, T) => {
        const t0 = performance.now();
        T.create({ sourceLanguage: 'es', targetLanguage: 'en',
          monitor: (m) => m.addEventListener('downloadprogress', (e) => window.log[name].push(['progress', e.loaded])) })
          .then(async (t) => window.log[name].push(['created', Math.round(performance.now() - t0), await t.translate('No se pudo abrir el archivo.')]),
            (e) => window.log[name].push(['rejected', e.name]));
      };
      document.getElementById('builtin').onclick = () => start('builtin', globalThis.Translator);
      document.getElementById('ours').onclick = async () => {
        await import('/node_modules/residual-mt/js/polyfill-replace.js');
        start('ours', globalThis.Translator);
      };
    });
    await page.click('#builtin');
    await page.click('#ours');
    await page.waitForFunction(() => window.log.ours.some((e) => e[0] !== 'progress'), null, { timeout: 120_000 });
    const log = await page.evaluate(() => window.log);
    console.log(`# built-in Translator after ${log.ours.find((e) => e[0] === 'created')?.[1]} ms: ${JSON.stringify(log.builtin)}`);
    const created = log.ours.find((e) => e[0] === 'created');
    assert.ok(created, JSON.stringify(log.ours));
    assert.equal(created[2], want, 'as in Node');
    assert.deepEqual(log.ours.filter((e) => e[0] === 'progress').at(-1), ['progress', 1]);
  });
});

test('Chromium: where a Content Security Policy forbids workers, the detector runs on the page\'s thread', { skip, timeout: 120_000 }, async () => {
  await onPage(async (page) => {
    const warnings = [];
    page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
    const got = await page.evaluate(async () => {
      const { LanguageDetector } = await import('/node_modules/residual-mt/js/index.js');
      const detector = await LanguageDetector.create();
      const [best] = await detector.detect('Dies ist ein deutscher Satz.');
      detector.destroy();
      const required = await LanguageDetector.create({ worker: true }).then(() => 'created', (e) => e.name);
      return { best: best.detectedLanguage, required };
    });
    assert.deepEqual(got, { best: 'de', required: 'OperationError' });
    assert.ok(warnings.some((w) => w.includes("runs on the page's thread")), warnings.join('\n'));
  }, "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; worker-src 'none'");
});

test('Chromium: a detector and a translator share one Web Worker, answer in it as alone, outlive each other, and fail together when it dies', { skip, timeout: 240_000 }, async () => {
  const spanish = ['No se pudo abrir el archivo.', 'El archivo está en uso.', 'Hola, mundo.'];
  const node = await createLanguageDetector({ worker: false });
  const wantDetected = [];
  for (const text of TEXTS) wantDetected.push(await node.detect(text));
  node.destroy();
  const inNode = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
  const wantTranslated = [];
  for (const text of spanish) wantTranslated.push(await inNode.translate(text));
  inNode.destroy();
  await onPage(async (page) => {
    const got = await page.evaluate(async ({ texts, spanish }) => {
      // The engine workers this page starts, counted where they are made.
      const started = [];
      let terminated = 0;
      window.Worker = class CountingWorker extends Worker {
        constructor(url, options) {
          super(url, options);
          if (String(url).endsWith('/js/worker.js')) started.push(this);
        }

        terminate() {
          if (started.includes(this)) terminated++;
          super.terminate();
        }
      };
      const { createLanguageDetector, createTranslator } = await import('/node_modules/residual-mt/js/index.js');
      const out = {};
      const detector = await createLanguageDetector();
      const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
      out.workers = started.length;
      out.inWorker = translator.inWorker;
      // Interleaved.
      const calls = [];
      texts.forEach((text, i) => {
        calls.push(detector.detect(text));
        if (i < spanish.length) calls.push(translator.translate(spanish[i]));
      });
      const results = await Promise.all(calls);
      out.detected = results.filter((r) => Array.isArray(r));
      out.translated = results.filter((r) => typeof r === 'string');
      // One destroyed mid-call of the other.
      const translating = translator.translate(spanish[0]);
      detector.destroy();
      out.afterDetectorDestroyed = await translating;
      out.terminatedWithOne = terminated;
      translator.destroy();
      const deadline = Date.now() + 10_000;
      while (!terminated && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      out.terminatedWithNone = terminated;
      // The worker dies (terminated, not by the library) with calls of both in hand.
      const d2 = await createLanguageDetector();
      const t2 = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
      out.workersAfterRestart = started.length;
      const long = t2.translate(`${spanish[0]} `.repeat(200));
      await new Promise((resolve) => setTimeout(resolve, 50));
      Worker.prototype.terminate.call(started.at(-1));
      const detecting = d2.detect(texts[0]);
      const settled = await Promise.race([Promise.allSettled([long, detecting]),
        new Promise((resolve) => { setTimeout(() => resolve('hung'), 20_000); })]);
      out.died = settled === 'hung' ? settled : settled.map((s) => (s.status === 'rejected' ? s.reason.message : 'resolved'));
      out.later = await d2.detect('hola').then(() => 'resolved', (err) => err.message);
      d2.destroy();
      t2.destroy();
      return out;
    }, { texts: TEXTS, spanish });
    assert.equal(got.workers, 1, 'one worker for both');
    assert.equal(got.inWorker, true);
    assert.deepEqual(got.translated, wantTranslated, 'as in Node');
    got.detected.forEach((results, i) => {
      assert.deepEqual(results.map((r) => r.detectedLanguage), wantDetected[i].map((r) => r.detectedLanguage), TEXTS[i]);
      results.forEach((r, k) => assert.ok(Math.abs(r.confidence - wantDetected[i][k].confidence) < 1e-5, TEXTS[i]));
    });
    assert.equal(got.afterDetectorDestroyed, wantTranslated[0]);
    assert.equal(got.terminatedWithOne, 0, 'the translator still holds the worker');
    assert.equal(got.terminatedWithNone, 1, 'both destroyed: the worker is terminated');
    assert.equal(got.workersAfterRestart, 2, 'one new worker for the next two');
    assert.notEqual(got.died, 'hung');
    for (const message of [...got.died, got.later]) assert.match(message, /the translation worker failed: it stopped \(closed or crashed\)/);
  });
});
