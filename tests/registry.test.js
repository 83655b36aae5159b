// Firefox's model registry as a catalogue (js/load/registry.js): catalog: {
// firefox: URL } against a replica of Remote Settings (tests/lib/registry.js:
// both collections in their exact forms, attachments written by the real
// zstd and gzip tools, random-weight Marian students of the real tiny shape
// with Firefox's real vocabulary). Outputs are compared with the same files
// loaded directly (model: { marian } from their paths), in Node and in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { withServer } from './lib/server.js';
import { buildReplica, directOptions, startReplica, translateOnce } from './lib/registry.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'rmt-registry-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
let caches = 0;
const freshCache = () => { process.env.XDG_CACHE_HOME = join(tmp, `cache-${caches++}`); };
freshCache();
const { availability, createTranslator } = await import('../js/index.js');
const { compareVersions, selectModels } = await import('../js/load/registry.js');

const replica = buildReplica(tmp);
const TEXTS = { es: ['El archivo no existe.', 'No se puede abrir la carpeta.'], en: ['The file does not exist.'], de: ['Die Datei existiert nicht.'] };

const translateWith = (options, texts) => translateOnce(createTranslator, options, texts);

// What the pair's files give loaded straight from disk (memoised).
const directs = new Map();
function direct(pair, texts) {
  const key = `${pair}:${texts.join('|')}`;
  if (!directs.has(key)) directs.set(key, translateWith(directOptions(replica, pair), texts));
  return directs.get(key);
}

async function withReplica(fn) {
  const server = await startReplica(replica);
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

const attachmentsOf = (server, predicate) => server.collections['translations-models-v2'].filter(predicate);
const served = (server, record) => server.requests[`/attachments/${record.attachment.location}`] ?? 0;

test('Mozilla\'s version order, and the selection: newest supported version, files of the model\'s version, what is refused and why', () => {
  for (const [a, b] of [['3.0', '3.1'], ['3.0a1', '3.0'], ['3.0a1', '3.0a2'], ['3.9', '3.10'], ['2.1', '3'], ['1.0', '1.0.1']]) {
    assert.equal(compareVersions(a, b), -1, `${a} < ${b}`);
    assert.equal(compareVersions(b, a), 1, `${b} > ${a}`);
  }
  assert.equal(compareVersions('3', '3.0.0'), 0);
  const { models, refused } = selectModels(replica.collections['translations-models-v2']);
  assert.deepEqual(models.map((m) => [m.pair.join('-'), m.version, Object.keys(m.files).sort().join(',')]), [
    ['de-en', '3.0', 'model,shortlist,vocab'], ['en-es', '3.0', 'model,shortlist,vocab'],
    ['en-fr', '3.0', 'model,shortlist,vocab'], ['es-en', '3.1', 'model,shortlist,vocab'],
  ]);
  const why = Object.fromEntries(refused.map((r) => [r.why.split(/[ :]/)[0], r.name]));
  assert.equal(why.fileType, 'metadata.esen.json', 'unknown fileType');
  assert.ok(refused.some((r) => r.name === 'qualityModel.esen.bin' && /fileType qualityModel/.test(r.why)));
  assert.ok(refused.some((r) => /^version 4\.0: its major/.test(r.why)));
  assert.ok(refused.some((r) => /^filter_expression/.test(r.why)));
  // A model whose version has no vocabulary, and two vocabularies that differ.
  const esEn = replica.collections['translations-models-v2'].filter((r) => r.sourceLanguage === 'es' && r.version === '3.1');
  const noVocab = selectModels(esEn.filter((r) => r.fileType !== 'vocab'));
  assert.deepEqual(noVocab.models, []);
  assert.ok(noVocab.refused.some((r) => r.name === 'es→en' && /^no vocab or srcvocab file at version 3\.1$/.test(r.why)));
  const two = esEn.map((r) => (r.fileType === 'vocab' ? [{ ...r, name: 'srcvocab.esen.spm', fileType: 'srcvocab' }, { ...r, name: 'trgvocab.esen.spm', fileType: 'trgvocab', decompressedHash: 'f'.repeat(64), attachment: { ...r.attachment, hash: 'e'.repeat(64) } }] : [r])).flat();
  assert.ok(selectModels(two).refused.some((r) => r.name === 'es→en' && /separate source and target vocabularies/.test(r.why)));
  // v1's field names read alike.
  assert.deepEqual(selectModels(replica.collections['translations-models']).models.map((m) => [m.pair.join('-'), m.version]), [['es-en', '1.0']]);
});

test('availability and create for a direct pair (es → en, version 3.1 only) and a pivot (de → fr), identical to the files loaded directly; progress summed', async () => {
  freshCache();
  await withReplica(async (server) => {
    const catalog = { firefox: server.root };
    assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'en', catalog }), 'downloadable');
    assert.equal(await availability({ sourceLanguage: 'de', targetLanguage: 'fr', catalog }), 'downloadable');
    assert.equal(await availability({ sourceLanguage: 'fr', targetLanguage: 'de', catalog }), 'unavailable');
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es), await direct('es-en', TEXTS.es));
    const esEn = attachmentsOf(server, (r) => r.sourceLanguage === 'es');
    assert.deepEqual(esEn.filter((r) => served(server, r)).map((r) => `${r.name} ${r.version}`).sort(),
      ['lex.50.50.esen.s2t.bin 3.1', 'model.esen.intgemm8.bin 3.1', 'vocab.esen.spm 3.1'], 'only the newest version\'s files, no qualityModel');
    const events = [];
    const monitor = (m) => m.addEventListener('downloadprogress', (e) => events.push(e));
    const pivot = await createTranslator({ sourceLanguage: 'de', targetLanguage: 'fr', catalog, monitor });
    try {
      assert.deepEqual([pivot.sourceLanguage, pivot.pivotLanguage, pivot.targetLanguage], ['de', 'en', 'fr']);
      assert.deepEqual(await pivot.translate(TEXTS.de), await direct('en-fr', await direct('de-en', TEXTS.de)));
    } finally {
      pivot.destroy();
    }
    const bytes = attachmentsOf(server, (r) => ['de-en', 'en-fr'].includes(`${r.sourceLanguage}-${r.targetLanguage}`)).reduce((n, r) => n + r.attachment.size, 0);
    assert.equal(events.at(-1).loaded, 1);
    assert.ok(events.every((e, i) => i === 0 || e.loaded > events[i - 1].loaded));
    assert.ok(Math.max(...events.map((e) => e.bytesTotal)) >= bytes, `progress over both models' ${bytes} bytes`);
    assert.equal(await availability({ sourceLanguage: 'de', targetLanguage: 'fr', catalog }), 'available');
  });
});

test('en → es from srcvocab + trgvocab records (one vocabulary), and the older collection (fromLang/toLang, gzip)', async () => {
  freshCache();
  await withReplica(async (server) => {
    const catalog = { firefox: server.root };
    assert.deepEqual(await translateWith({ sourceLanguage: 'en', targetLanguage: 'es', catalog }, TEXTS.en), await direct('en-es', TEXTS.en));
    // A server with only translations-models (v1): es-en 1.0, gzip.
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog: { firefox: server.oldRoot } }, TEXTS.es),
      await direct('es-en', TEXTS.es));
    assert.ok(server.requests['/old/v1/buckets/main/collections/translations-models-v2/records'] === 1, 'v2 asked for first');
  });
});

test('a second create() downloads nothing; a new version is picked up at the next create(); offline the kept records and models load', async () => {
  freshCache();
  await withReplica(async (server) => {
    const catalog = { firefox: server.root };
    const expected = await direct('es-en', TEXTS.es);
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es), expected);
    const before = JSON.stringify(Object.entries(server.requests).filter(([p]) => p.startsWith('/attachments/')));
    assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'en', catalog }), 'available');
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es), expected);
    assert.equal(JSON.stringify(Object.entries(server.requests).filter(([p]) => p.startsWith('/attachments/'))), before, 'no attachment downloaded again');
    // es-en 3.2: de-en's files under es-en's names.
    const v2 = server.collections['translations-models-v2'];
    const deEn = v2.filter((r) => r.sourceLanguage === 'de');
    v2.push(...deEn.map((r) => ({ ...r, id: `${r.id}-esen`, name: r.name.replace('deen', 'esen'), sourceLanguage: 'es', version: '3.2' })));
    const newer = await direct('de-en', TEXTS.es);
    assert.notDeepEqual(newer, expected);
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es), newer, 'version 3.2 at the next create()');
    await server.stop();
    assert.equal(await availability({ sourceLanguage: 'es', targetLanguage: 'en', catalog }), 'available');
    assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es), newer, 'offline');
  });
});

// The es-en 3.1 records, one of them changed.
function breakRecord(server, name, change) {
  const record = server.collections['translations-models-v2'].find((r) => r.name === name && r.version === '3.1');
  change(record);
  return record;
}

test('a hash mismatch before and after decompression, a wrong size, a missing attachment and a truncated download fail create(), naming the file', async () => {
  const cases = [
    ['attachment hash', 'vocab.esen.spm', (r) => { r.attachment.hash = '0'.repeat(64); }, /OperationError.*vocab\.esen\.spm: .* failed SHA-256 verification/],
    ['decompressed hash', 'lex.50.50.esen.s2t.bin', (r) => { r.decompressedHash = '0'.repeat(64); }, /OperationError.*lex\.50\.50\.esen\.s2t\.bin failed SHA-256 verification once decompressed/],
    ['decompressed size', 'vocab.esen.spm', (r) => { r.decompressedSize += 1; }, /OperationError: residual-mt: the Marian vocabulary file vocab\.esen\.spm: 825463 bytes decompressed, 825464 declared/],
    ['attachment size', 'model.esen.intgemm8.bin', (r) => { r.attachment.size -= 1; }, /OperationError.*model\.esen\.intgemm8\.bin is larger than its bound of \d+ bytes \(the size given for it\)/],
    ['missing', 'model.esen.intgemm8.bin', (r, s) => { s.faults[r.attachment.location] = 'missing'; }, /NetworkError.*model\.esen\.intgemm8\.bin.*HTTP 404/],
    ['cut', 'model.esen.intgemm8.bin', (r, s) => { s.faults[r.attachment.location] = 'cut'; }, /NetworkError.*model\.esen\.intgemm8\.bin/],
  ];
  for (const [what, name, change, pattern] of cases) {
    freshCache();
    await withReplica(async (server) => {
      breakRecord(server, name, (r) => change(r, server));
      const catalog = { firefox: server.root };
      await assert.rejects(translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog }, TEXTS.es),
        (err) => { assert.match(`${err.name}: ${err.message}`, pattern, what); return true; });
    });
  }
});

test('a server without the registry\'s API, and records it cannot use, are clear errors', async () => {
  freshCache();
  await withReplica(async (server) => {
    await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog: { firefox: `${server.origin}/attachments/` } }),
      /NetworkError|no capabilities/);
    server.collections['translations-models-v2'] = server.collections['translations-models-v2'].map((r) => ({ ...r, version: '5.0' }));
    await assert.rejects(createTranslator({ sourceLanguage: 'de', targetLanguage: 'fr', catalog: { firefox: server.root } }),
      (err) => err.name === 'NotSupportedError' && /no model of the catalogue translates de → fr/.test(err.message));
    await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', catalog: { firefox: 42 } }), TypeError);
  });
});

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

test('Chromium: a page pointed at the replica fails on a wrong hash before and after decompression, naming the file, then translates es → en, en → es and de → fr (through English) as the files loaded directly, and again offline after a reload', {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found` : false,
}, async () => {
  const cases = [['es', 'en', TEXTS.es], ['en', 'es', TEXTS.en], ['de', 'fr', TEXTS.de]];
  const expected = {
    'es-en': await direct('es-en', TEXTS.es), 'en-es': await direct('en-es', TEXTS.en),
    'de-fr': await direct('en-fr', await direct('de-en', TEXTS.de)),
  };
  const pageDir = join(tmp, 'page');
  mkdirSync(pageDir, { recursive: true });
  writeFileSync(join(pageDir, 'page.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "js-yaml": "/node_modules/js-yaml/dist/js-yaml.mjs" } }</script>
<script type="module">
  import { availability, createTranslator } from '/js/index.js';
  const catalog = { firefox: new URLSearchParams(location.search).get('registry') };
  window.create = (sourceLanguage, targetLanguage) => createTranslator({ sourceLanguage, targetLanguage, catalog })
    .then((t) => { t.destroy(); return 'created'; }, (err) => err.name + ': ' + err.message);
  window.run = async () => {
    const out = {};
    for (const [sourceLanguage, targetLanguage, texts] of ${JSON.stringify(cases)}) {
      const translator = await createTranslator({ sourceLanguage, targetLanguage, catalog });
      out[sourceLanguage + '-' + targetLanguage] = await translator.translate(texts);
      translator.destroy();
    }
    out.availability = await availability({ sourceLanguage: 'de', targetLanguage: 'fr', catalog });
    return out;
  };
</script>`);
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(join(tmp, 'chromium'), { executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
  const server = await startReplica(replica);
  try {
    await withServer({ mounts: [{ prefix: '/files/', dir: pageDir }, { prefix: '/', dir: ROOT }], csp: null }, async (base) => {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}files/page.html?registry=${encodeURIComponent(server.root)}`);
      await page.waitForFunction(() => window.run);
      // Broken records first (nothing is kept of a failed load): a wrong hash before and after decompression.
      const lex = server.collections['translations-models-v2'].find((r) => r.name === 'lex.50.50.esen.s2t.bin' && r.version === '3.1');
      const good = structuredClone(lex);
      lex.decompressedHash = '0'.repeat(64);
      assert.match(await page.evaluate(() => window.create('es', 'en')), /^OperationError: .*lex\.50\.50\.esen\.s2t\.bin failed SHA-256 verification once decompressed/);
      Object.assign(lex, structuredClone(good), { attachment: { ...good.attachment, hash: '0'.repeat(64) } });
      assert.match(await page.evaluate(() => window.create('es', 'en')), /^OperationError: .*lex\.50\.50\.esen\.s2t\.bin: .* failed SHA-256 verification/);
      Object.assign(lex, good);
      assert.deepEqual(await page.evaluate(() => window.run()), { ...expected, availability: 'available' });
      await server.stop();
      await page.reload();
      await page.waitForFunction(() => window.run);
      assert.deepEqual(await page.evaluate(() => window.run()), { ...expected, availability: 'available' }, 'offline, after a reload');
      assert.deepEqual(errors, []);
    });
  } finally {
    await server.stop();
    await context.close();
  }
});
