// Loading fast without trusting less: the SHA-256 check of downloaded model
// weights runs while the engine loads them (loadFiles' deferVerify: the
// worker hands the weights back once they are in its memory), and a file
// that fails it still fails the load with a clear error and is never cached;
// the engine also loads from a compiled WebAssembly.Module (what a browser's
// streaming compilation gives); the load's steps are User Timing measures.
// (The demo's streaming compilation and offline use run in tests/browser.test.js.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTranslator } from '../js/index.js';
import { loadFiles, toLocation } from '../js/load/loader.js';
import { Engine } from '../js/engine/binding.js';
import { withServer } from './lib/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}tests/fixtures/models/residual-text/`;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-load-'));
process.env.XDG_CACHE_HOME = join(tmp, 'cache');
after(() => rmSync(tmp, { recursive: true, force: true }));

// A copy of the fixture model whose model.safetensors has one byte changed.
function corruptCopy(name) {
  const dir = join(tmp, name, 'model/');
  cpSync(FIXTURE, dir, { recursive: true });
  const weights = readFileSync(join(dir, 'model.safetensors'));
  weights[weights.length - 1] ^= 1;
  writeFileSync(join(dir, 'model.safetensors'), weights);
  return dir;
}

const SHA_ERROR = /model\.safetensors \(.*\) failed SHA-256 verification against manifest\.json/;

test('deferVerify: loadFiles leaves the weights\' check to the caller (checkWeights), and checks the rest itself', async () => {
  const good = await loadFiles(await toLocation(FIXTURE), { deferVerify: true });
  assert.ok(good.weights.length > 0 && good.wasm instanceof Uint8Array, 'in Node the engine comes as bytes');
  assert.equal(typeof good.checkWeights, 'function');
  assert.equal(await good.checkWeights(good.weights), undefined);
  const bad = await loadFiles(await toLocation(corruptCopy('defer')), { deferVerify: true });
  assert.ok(bad.weights.length > 0, 'the bytes came before the check');
  await assert.rejects(bad.checkWeights(bad.weights), (err) => err.name === 'OperationError' && SHA_ERROR.test(err.message));
  // Without deferVerify the check is done before loadFiles returns; so it is for a corrupt spm.model.
  await assert.rejects(loadFiles(await toLocation(corruptCopy('now'))), SHA_ERROR);
  const spm = corruptCopy('spm');
  writeFileSync(join(spm, 'spm.model'), Buffer.concat([readFileSync(join(spm, 'spm.model')), Buffer.from([0])]));
  await assert.rejects(loadFiles(await toLocation(spm), { deferVerify: true }), /spm\.model .*manifest\.json says/);
  // Without a manifest there is nothing to check.
  const plain = corruptCopy('plain');
  rmSync(join(plain, 'manifest.json'));
  assert.equal((await loadFiles(await toLocation(plain), { deferVerify: true })).checkWeights, null);
});

test('a corrupt model fails create() with the SHA-256 error, in-process and in a worker, and over HTTP is not cached', async () => {
  for (const worker of [false, true]) {
    await assert.rejects(createTranslator({ model: corruptCopy(`create-${worker}`), sourceLanguage: 'en', targetLanguage: 'es', worker }),
      (err) => err.name === 'OperationError' && SHA_ERROR.test(err.message), `worker: ${worker}`);
  }
  const dir = corruptCopy('http');
  await withServer({ mounts: [{ prefix: '/m/', dir }] }, async (base) => {
    for (const cache of [true, false]) {
      await assert.rejects(createTranslator({ model: `${base}m/`, sourceLanguage: 'en', targetLanguage: 'es', cache }),
        (err) => err.name === 'OperationError' && SHA_ERROR.test(err.message), `cache: ${cache}`);
    }
  });
  const cached = join(tmp, 'cache/residual-mt');
  const stored = existsSync(cached) ? readdirSync(cached, { recursive: true }).map(String) : [];
  assert.ok(!stored.some((path) => path.endsWith('model.safetensors')), `cached: ${stored.join(', ')}`);
});

// Checked against the PyTorch reference (tests/fixtures/make_fixtures.py's
// reference.json), not against the engine loaded another way: every search
// of residual-2x2 (beam 1 to 5, n-best lists, length penalties and limits),
// token ids identical and scores within 1e-4 (float32 rounding: the
// reference's and the engine's sums differ by ~1e-6), and residual-text's
// greedy translations of text, ids and text.
test('the engine loads from a compiled WebAssembly.Module, as a browser compiles it while it downloads, and translates as the reference does', async () => {
  const module = await WebAssembly.compile(readFileSync(`${root}dist/residual-mt.wasm`));
  const engine = await Engine.load(module);
  const ids = `${root}tests/fixtures/models/residual-2x2/`;
  const ref = JSON.parse(readFileSync(`${ids}reference.json`, 'utf8'));
  const model = engine.loadModel({ config: readFileSync(`${ids}config.json`), weights: readFileSync(`${ids}model.safetensors`) });
  let hyps = 0;
  for (const search of ref.searches) {
    const got = model.translateIds(ref.sentences, { beam: search.beam, nbest: search.nbest, lenpen: search.lenpen,
      minLen: search.min_len, maxLenA: search.max_len_a, maxLenB: search.max_len_b });
    search.hyps.forEach((want, i) => {
      assert.deepEqual(got[i].map((h) => h.ids), want.map((h) => h.tokens), `beam ${search.beam}, sentence ${i}`);
      want.forEach((h, k) => {
        assert.ok(Math.abs(got[i][k].score - h.score) < 1e-4, `beam ${search.beam}, sentence ${i}, hypothesis ${k}: ${got[i][k].score} vs ${h.score}`);
        hyps++;
      });
    });
  }
  assert.ok(ref.searches.length >= 5 && hyps > 50, `${hyps} hypotheses`);
  model.dispose();
  const text = JSON.parse(readFileSync(`${FIXTURE}reference.json`, 'utf8'));
  const textModel = engine.loadModel({ config: readFileSync(`${FIXTURE}config.json`), weights: readFileSync(`${FIXTURE}model.safetensors`),
    spm: readFileSync(`${FIXTURE}spm.model`) });
  for (const lang of ['en', 'es']) {
    const got = textModel.translateTexts(text.texts, { beam: 1, targetLanguage: lang });
    assert.deepEqual(got.map(([best]) => best.ids), text.translations[lang].ids, lang);
    assert.deepEqual(got.map(([best]) => best.text.trim()), text.translations[lang].text, lang);
  }
  textModel.dispose();
});

test('the load\'s steps are User Timing measures (rmt:<step>), the worker\'s replayed on this thread', async () => {
  for (const worker of [false, true]) {
    performance.clearMeasures();
    const t = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', worker });
    await t.translate('Hello.'); // after the warm-up, which runs once the load has answered
    t.destroy();
    const names = new Set(performance.getEntriesByType('measure').map((e) => e.name));
    for (const step of ['manifest', 'fetch model.safetensors', 'sha256 model.safetensors', 'load', 'engine', 'copy weights', 'model', 'spm', 'warmup']) {
      assert.ok(names.has(`rmt:${step}`), `worker: ${worker}: no rmt:${step} in ${[...names].join(', ')}`);
    }
  }
});

test('the demo server asks a first visit to preload the default model (a Link header), only on a navigation to the demo without ?model=', async () => {
  const html = readFileSync(`${root}web/index.html`, 'utf8');
  const dir = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(html)[1]).imports['residual-mt-es-en/'];
  const modelPath = new URL(dir, 'http://localhost/').pathname;
  await withServer({}, async (base) => {
    // (node:http: fetch() sets Sec-Fetch-Mode itself.)
    const head = (path, headers) => new Promise((resolve, reject) => {
      request(new URL(path, base), { method: 'HEAD', headers }, (res) => {
        res.resume();
        resolve(res.headers.link ?? null);
      }).on('error', reject).end();
    });
    const link = await head('/', { 'Sec-Fetch-Mode': 'navigate' });
    for (const name of ['manifest.json', 'config.json', 'model.safetensors', 'spm.model']) {
      assert.ok(link.includes(`<${modelPath}${name}>; rel=preload; as=fetch; crossorigin`), `${name} in ${link}`);
      // Each file it names is there to be had.
      assert.equal((await fetch(new URL(`${modelPath}${name}`, base), { method: 'HEAD' })).status, 200);
    }
    assert.equal(await head('/?model=../tests/fixtures/models/residual-text/', { 'Sec-Fetch-Mode': 'navigate' }), null);
    assert.equal(await head('/', { 'Sec-Fetch-Mode': 'cors' }), null, 'the service worker fetches the page: no preload in its copy');
    assert.equal(await head('/sw.js', { 'Sec-Fetch-Mode': 'navigate' }), null);
  });
});
