// A catalogue of models (js/api/catalog.js): create() and availability() find the
// model for a pair in it, and a pair no model covers goes through English with
// two (js/api/pivot.js): its output is the second model's translation of the
// first's, plain text, batches, HTML and streams alike, its download progress
// one sequence. The models: tests/lib/catalog.js (the shipped model as es → en,
// and as en → "fr", its Spanish under another tag).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { availability, createTranslator } from '../js/index.js';
import { catalogSite } from './lib/catalog.js';
import { randomMarianModel, writeMarianBin } from './lib/marian.js';

const { site, catalog, esEn, enFr, remove } = catalogSite();
process.on('exit', remove);

const TEXTS = ['El archivo no existe.', 'No se puede abrir la carpeta de descargas.'];

test('a direct pair of the catalogue loads its model', async () => {
  const viaCatalog = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog });
  const direct = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', model: esEn });
  try {
    assert.equal(viaCatalog.model, direct.model);
    assert.deepEqual(await viaCatalog.translate(TEXTS), await direct.translate(TEXTS));
  } finally {
    viaCatalog.destroy();
    direct.destroy();
  }
});

test('es → fr through en: the second model\'s translation of the first\'s, text, batch, HTML and stream; progress summed', async () => {
  const events = [];
  const pivot = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'fr', catalog,
    monitor: (m) => m.addEventListener('downloadprogress', (e) => events.push(e.loaded)) });
  const first = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', model: esEn });
  const second = await createTranslator({ sourceLanguage: 'en', targetLanguage: 'fr', model: enFr });
  try {
    assert.deepEqual([pivot.sourceLanguage, pivot.pivotLanguage, pivot.targetLanguage], ['es', 'en', 'fr']);
    for (const text of TEXTS) assert.equal(await pivot.translate(text), await second.translate(await first.translate(text)));
    const middle = await first.translate(TEXTS[0]);
    assert.match(middle, /file/i);
    assert.match(await pivot.translate(TEXTS[0]), /archivo/i);
    console.log(`# ${JSON.stringify(TEXTS[0])} → ${JSON.stringify(middle)} → ${JSON.stringify(await pivot.translate(TEXTS[0]))}; progress events ${events.length}`);
    assert.deepEqual(await pivot.translate(TEXTS), await second.translate(await first.translate(TEXTS)));
    const html = '<p>El <b>archivo</b> no existe.</p>';
    assert.equal(await pivot.translate(html, { format: 'html' }),
      await second.translate(await first.translate(html, { format: 'html' }), { format: 'html' }));
    const chunks = [];
    for await (const chunk of pivot.translateStreaming(TEXTS[1])) chunks.push(chunk);
    assert.equal(chunks.join(''), await pivot.translate(TEXTS[1]));
    assert.equal(await pivot.measureInputUsage(TEXTS[0]), await first.measureInputUsage(TEXTS[0]));
    assert.equal(events[0], 0);
    assert.equal(events.at(-1), 1);
    assert.ok(events.every((v, i) => i === 0 || v > events[i - 1]), `progress ${events}`);
  } finally {
    pivot.destroy();
    first.destroy();
    second.destroy();
  }
  assert.equal(pivot.destroyed, true);
  await assert.rejects(pivot.translate(TEXTS[0]), { name: 'AbortError' });
});

test('availability() consults the catalogue: direct, pivot, neither', async () => {
  assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'en', catalog }), 'available');
  assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'fr', catalog }), 'available');
  assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'ja', catalog }), 'unavailable');
  assert.equal(await availability({ sourceLanguage: 'fr', targetLanguage: 'es', catalog }), 'unavailable');
});

test('a pair neither direct nor through en, a missing catalogue, a malformed one: clear errors', async () => {
  await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'ja', catalog }),
    (err) => err.name === 'NotSupportedError' && /es → ja, directly or through en \(it has es → en, en → fr/.test(err.message));
  await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog: join(site, 'none.json') }),
    (err) => err.name === 'NetworkError' && /cannot read the catalogue/.test(err.message));
  const huge = join(site, 'huge.json');
  closeSync(openSync(huge, 'w'));
  truncateSync(huge, 2 ** 30);  // sparse: refused by its size, before a byte is read (js/load/loader.js readJson)
  await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog: huge }),
    (err) => err.name === 'OperationError' && /has 1073741824 bytes/.test(err.message));
  await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog: { models: [{}] } }),
    (err) => err instanceof TypeError && /entry 0 has no "model"/.test(err.message));
});

test('a catalogue entry of Marian files (a Firefox Translations model: relative URLs, its pairs given), direct and as a pivot\'s first leg', async () => {
  const vocab = fileURLToPath(new URL('fixtures/models/residual-text/spm.model', import.meta.url));
  writeFileSync(join(site, 'model.deen.bin'), writeMarianBin(randomMarianModel({ seed: 91, decoder: 'ssru' })));
  writeFileSync(join(site, 'vocab.deen.spm'), readFileSync(vocab));
  const marianCatalog = { models: [{ model: { marian: { model: 'model.deen.bin', vocab: 'vocab.deen.spm' } }, pairs: [['de', 'en']] }] };
  const withMarian = join(site, 'catalog-marian.json');
  writeFileSync(withMarian, JSON.stringify({ models: [...marianCatalog.models, { model: 'en-fr/' }] }));
  const files = { model: join(site, 'model.deen.bin'), vocab: join(site, 'vocab.deen.spm') };
  const text = 'Ein großer Hund läuft durch den Park.';
  const direct = await createTranslator({ sourceLanguage: 'de', targetLanguage: 'en', model: { marian: files } });
  const viaCatalog = await createTranslator({ sourceLanguage: 'de', targetLanguage: 'en', catalog: withMarian });
  const second = await createTranslator({ sourceLanguage: 'en', targetLanguage: 'fr', model: enFr });
  const pivot = await createTranslator({ sourceLanguage: 'de', targetLanguage: 'fr', catalog: withMarian });
  try {
    const middle = await direct.translate(text);
    assert.equal(await viaCatalog.translate(text), middle);
    assert.equal(pivot.pivotLanguage, 'en');
    assert.equal(await pivot.translate(text), await second.translate(middle));
  } finally {
    for (const t of [direct, viaCatalog, second, pivot]) t.destroy();
  }
  await assert.rejects(createTranslator({ sourceLanguage: 'de', targetLanguage: 'en',
    catalog: { models: [{ model: { marian: files } }] } }), (err) => err instanceof TypeError && /needs its "pairs"/.test(err.message));
});
