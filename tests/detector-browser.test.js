// The LanguageDetector in Debian's Chromium (playwright-core, no browser
// download), next to Chromium's own built-in Translator and LanguageDetector,
// which cannot serve here (no model downloads: the built-in detector is
// 'unavailable', the built-in translator 'downloadable' but its create() never
// settles): residual-mt/polyfill stands aside for them, residual-mt/polyfill/replace
// installs this engine in their place, and both of ours then work: detection
// (in the engine's worker) as in Node, the spec's shapes, abort and destroy,
// and a translation created in a click.
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
