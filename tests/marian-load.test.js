// Marian files loaded straight from JavaScript: createTranslator({ model: {
// marian: { model, vocab, shortlist } } }) in Node (URLs over HTTP, one of
// them gzipped, paths, bytes) and in Chromium (URLs, the model gzipped),
// converted in memory (js/marian/load.js) and translating as the model that
// models/convert_marian.py converts; SHA-256 checks, download progress, and
// the model cache (a second load with every sha256 given downloads nothing;
// offline, the last conversion of those URLs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { withServer } from './lib/server.js';
import { convertMarian as convertPython, randomMarianModel, randomShortlist, writeMarianBin } from './lib/marian.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'rmt-marian-load-'));
process.env.XDG_CACHE_HOME = join(tmp, 'cache'); // the model cache (js/load/cache.js), this test's own
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const { createTranslator } = await import('../js/index.js');

const TEXTS = ['Un perro grande y negro corre por el parque.', 'Hello world.'];
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

// A small SSRU student with a shortlist, as Firefox Translations ships it
// (model gzipped), served from tmp/files/; and what the model that
// convert_marian.py makes of it translates.
const files = join(tmp, 'files');
mkdirSync(files);
const marian = randomMarianModel({ seed: 81, decoder: 'ssru', yml: 'flow' });
const bin = writeMarianBin(marian);
const lex = randomShortlist({ vocab: 150, first: 10, best: 6, seed: 82 });
writeFileSync(join(files, 'model.esen.bin'), bin);
writeFileSync(join(files, 'model.esen.bin.gz'), gzipSync(bin));
writeFileSync(join(files, 'lex.esen.s2t.bin'), lex);
writeFileSync(join(files, 'vocab.esen.spm'), readFileSync(join(ROOT, 'tests/fixtures/models/residual-text/spm.model')));
const converted = join(tmp, 'converted');
const r = convertPython(join(files, 'model.esen.bin.gz'), join(files, 'vocab.esen.spm'), converted,
  ['--shortlist', join(files, 'lex.esen.s2t.bin'), '--source-language', 'es', '--target-language', 'en']);
assert.equal(r.status, 0, r.stderr);
const expected = await translateAll(converted);

async function translateAll(model, extra = {}) {
  const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', model, ...extra });
  try {
    return await translator.translate(TEXTS, { beam: 4 });
  } finally {
    translator.destroy();
  }
}

const mounts = [{ prefix: '/files/', dir: files }, { prefix: '/', dir: ROOT }];
const hashed = (url, name) => ({ url, sha256: sha256(readFileSync(join(files, name))) });

test('Marian files from URLs (the model gzipped) load with createTranslator, with progress, and translate as the Python conversion does', async () => {
  await withServer({ mounts, csp: null }, async (base, server) => {
    const events = [];
    const model = { marian: { model: `${base}files/model.esen.bin.gz`, vocab: `${base}files/vocab.esen.spm`, shortlist: `${base}files/lex.esen.s2t.bin` } };
    const monitor = (m) => m.addEventListener('downloadprogress', (e) => events.push(e.loaded));
    assert.deepEqual(await translateAll(model, { monitor }), expected);
    assert.equal(events.at(-1), 1);
    assert.ok(events.length >= 3 && events.every((v, i) => i === 0 || v >= events[i - 1]), `progress ${events}`);
    // Offline: the last conversion of these URLs (none has a sha256 here).
    server.close();
    server.closeAllConnections?.();
    assert.deepEqual(await translateAll(model), expected, 'offline, from the cache');
  });
});

test('with a sha256 for every file, a second load downloads nothing; a wrong sha256 fails the load, naming the file', async () => {
  process.env.XDG_CACHE_HOME = join(tmp, 'cache2'); // a cache without the first test's conversion
  await withServer({ mounts, csp: null }, async (base, server) => {
    const model = { marian: {
      model: hashed(`${base}files/model.esen.bin.gz`, 'model.esen.bin.gz'),
      vocab: hashed(`${base}files/vocab.esen.spm`, 'vocab.esen.spm'),
      shortlist: hashed(`${base}files/lex.esen.s2t.bin`, 'lex.esen.s2t.bin'),
    } };
    assert.deepEqual(await translateAll(model), expected);
    const before = { ...server.stats.full };
    assert.equal(before['/files/model.esen.bin.gz'], 1);
    assert.deepEqual(await translateAll(model), expected, 'from the cache');
    assert.deepEqual(server.stats.full, before, 'no file downloaded again');
    const wrong = { marian: { ...model.marian, vocab: { url: `${base}files/vocab.esen.spm`, sha256: '0'.repeat(64) } } };
    await assert.rejects(translateAll(wrong), (err) => err.name === 'OperationError' && /vocab\.esen\.spm failed SHA-256/.test(err.message));
    // cache: false converts again and keeps nothing.
    assert.deepEqual(await translateAll(model, { cache: false }), expected);
  });
});

test('Marian files as paths and as bytes load the same model', async () => {
  const paths = { model: join(files, 'model.esen.bin'), vocab: join(files, 'vocab.esen.spm'), shortlist: join(files, 'lex.esen.s2t.bin') };
  assert.deepEqual(await translateAll({ marian: paths }), expected);
  const bytes = Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, new Uint8Array(readFileSync(p))]));
  bytes.model = { bytes: gzipSync(bin), name: 'model.esen.bin.gz' };
  assert.deepEqual(await translateAll({ marian: bytes }), expected);
  await assert.rejects(translateAll({ marian: { model: paths.model } }), /needs model and vocab/);
  await assert.rejects(translateAll({ marian: { ...paths, lexicon: paths.shortlist } }), /no file "lexicon"/);
});

test('Chromium: Marian files from URLs (one gzipped) load through createTranslator and translate as in Node', {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found` : false,
}, async () => {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmp, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
  try {
    writeFileSync(join(files, 'page.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "js-yaml": "/node_modules/js-yaml/dist/js-yaml.mjs" } }</script>
<script type="module">
  import { createTranslator } from '/js/index.js';
  const model = { marian: { model: '/files/model.esen.bin.gz', vocab: '/files/vocab.esen.spm', shortlist: '/files/lex.esen.s2t.bin' } };
  const progress = [];
  window.result = createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', model,
    monitor: (m) => m.addEventListener('downloadprogress', (e) => progress.push(e.loaded)) })
    .then(async (t) => ({ texts: await t.translate(${JSON.stringify(TEXTS)}, { beam: 4 }), progress, inWorker: t.inWorker }))
    .catch((err) => ({ error: err.name + ': ' + err.message }));
</script>`);
    await withServer({ mounts, csp: null }, async (base) => {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}files/page.html`);
      const got = await page.evaluate(() => window.result);
      assert.equal(got.error, undefined, got.error);
      assert.deepEqual(got.texts, expected);
      assert.equal(got.progress.at(-1), 1);
      // Again: the files download (no sha256 given), the conversion comes from
      // the cache (the weights from the origin's file system, checked).
      await page.reload();
      const again = await page.evaluate(() => window.result);
      assert.equal(again.error, undefined, again.error);
      assert.deepEqual(again.texts, expected, 'after a reload');
      const kept = await page.evaluate(async () => (await (await caches.open('residual-mt.models/1')).keys()).length);
      assert.ok(kept >= 3, `${kept} entries in the model cache`);
      assert.deepEqual(errors, []);
      console.log(`# Chromium: ${TEXTS.length} translations as in Node (engine in a worker: ${got.inWorker}), again after a reload`);
    });
  } finally {
    await context.close();
  }
});
