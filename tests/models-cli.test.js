// `residual-mt models list` and `models pull` (js/marian/models-cli.js) against the
// replica registry (tests/lib/registry.js): the listing, pulled models that
// DIR/catalog.json serves (translating as the same files loaded directly,
// direct and through English), a second run that downloads nothing, a model
// pulled again from the kept downloads, and failed files: named, and nothing
// half-written left; the demo showing pulled models' languages (Chromium).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { demoMounts, pulledMount } from '../scripts/serve.js';
import { withServer } from './lib/server.js';
import { buildReplica, directOptions, startReplica, translateOnce } from './lib/registry.js';

const CLI = fileURLToPath(new URL('../js/cli.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'rmt-models-cli-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
process.env.XDG_CACHE_HOME = join(tmp, 'cache');
const { createTranslator } = await import('../js/index.js');
const replica = buildReplica(tmp);
const server = await startReplica(replica);
after(() => server.stop());

const cli = (args) => run(['models', ...args]);
function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, XDG_CACHE_HOME: join(tmp, 'cli-cache') } });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const translateWith = (options, texts) => translateOnce(createTranslator, options, texts);
const direct = (pair, texts) => translateWith(directOptions(replica, pair), texts);
const attachmentRequests = () => Object.entries(server.requests).filter(([p]) => p.startsWith('/attachments/')).reduce((n, [, k]) => n + k, 0);
const v2 = () => server.collections['translations-models-v2'];
const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

test('models list: one line per model (pair, architecture, version, download size: a trgvocab the same as its srcvocab is not downloaded), what is not used on stderr', async () => {
  const r = await cli(['list', '--registry', server.root]);
  assert.equal(r.code, 0, r.stderr);
  const size = (pair, version) => MB(v2().filter((x) => `${x.sourceLanguage}-${x.targetLanguage}` === pair && x.version === version &&
    !['qualityModel', 'modelCard', 'trgvocab'].includes(x.fileType)).reduce((n, x) => n + x.attachment.size, 0));
  assert.deepEqual(r.stdout.trim().split('\n').map((line) => line.split(/\s{2,}| (?=\d)/).map((s) => s.trim()).filter(Boolean).join(' ')),
    [['de-en', '3.0'], ['en-es', '3.0'], ['en-fr', '3.0'], ['es-en', '3.1']].map(([p, v]) => `${p} tiny ${v} ${size(p, v)}`));
  assert.match(r.stderr, /4 models in translations-models-v2 at .* records not used \(.*fileType.*version.*filter_expression/);
});

test('models pull: DIR/<pair>/ and DIR/catalog.json, read by createTranslator({ catalog }) and the CLI\'s --catalog, direct and through English (and --registry); a second run downloads nothing', async () => {
  const out = join(tmp, 'pulled');
  const r = await cli(['pull', '--registry', server.root, 'es-en', 'de-en', 'en-fr', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const catalog = JSON.parse(readFileSync(join(out, 'catalog.json'), 'utf8'));
  assert.deepEqual(catalog.models.map((e) => [e.model, e.pairs, e.registry.version]),
    [['es-en/', [['es', 'en']], '3.1'], ['de-en/', [['de', 'en']], '3.0'], ['en-fr/', [['en', 'fr']], '3.0']]);
  const texts = ['El archivo no existe.'];
  assert.deepEqual(await translateWith({ sourceLanguage: 'es', targetLanguage: 'en', catalog: join(out, 'catalog.json') }, texts), await direct('es-en', texts));
  assert.deepEqual(await translateWith({ sourceLanguage: 'de', targetLanguage: 'fr', catalog: join(out, 'catalog.json') }, texts),
    await direct('en-fr', await direct('de-en', texts)));
  // The CLI's translations through the same catalogue, and straight from the registry.
  const viaCli = await run(['--catalog', join(out, 'catalog.json'), '--from', 'de', '--to', 'fr', ...texts]);
  assert.equal(viaCli.code, 0, viaCli.stderr);
  assert.equal(viaCli.stdout, `${(await direct('en-fr', await direct('de-en', texts))).join('\n')}\n`);
  const viaRegistry = await run(['--registry', server.root, '--from', 'es', '--to', 'en', ...texts]);
  assert.equal(viaRegistry.stdout, `${(await direct('es-en', texts)).join('\n')}\n`, viaRegistry.stderr);
  const wrong = await run(['--catalog', join(out, 'catalog.json'), '--from', 'de', '--to', 'fr', '--nbest', '2', 'x']);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /--catalog and --registry translate text .* nbest/);
  const before = attachmentRequests();
  const again = await cli(['pull', '--registry', server.root, 'es-en', 'de-en', '--out', out]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /es-en 3\.1: already in/);
  assert.equal(attachmentRequests(), before, 'nothing downloaded again');
  // A model directory removed: converted again from the kept downloads.
  rmSync(join(out, 'es-en'), { recursive: true });
  const third = await cli(['pull', '--registry', server.root, 'es-en', '--out', out]);
  assert.equal(third.code, 0, third.stderr);
  assert.equal(attachmentRequests(), before, 'from DIR/.downloads');
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'catalog.json'), 'utf8')).models.length, 3);
});

test('models pull: a missing attachment, a truncated one, a wrong hash and an unknown pair fail their pair only, naming the file; nothing half-written', async () => {
  const out = join(tmp, 'failing');
  const record = (name) => v2().find((x) => x.name === name);
  server.faults[record('model.enes.intgemm8.bin').attachment.location] = 'missing';
  server.faults[record('model.deen.intgemm8.bin').attachment.location] = 'cut';
  const lex = record('lex.50.50.enfr.s2t.bin');
  const hash = lex.attachment.hash;
  lex.attachment.hash = '0'.repeat(64);
  try {
    const r = await cli(['pull', '--registry', server.root, 'en-es', 'de-en', 'en-fr', 'xx-yy', 'es-en', '--out', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /en-es: model\.enes\.intgemm8\.bin: .*HTTP 404/);
    assert.match(r.stderr, /de-en: .*model\.deen\.intgemm8\.bin/);
    assert.match(r.stderr, /en-fr: lex\.50\.50\.enfr\.s2t\.bin: failed SHA-256 verification/);
    assert.match(r.stderr, /xx-yy: the registry has no model xx-yy/);
    assert.deepEqual(readdirSync(out).sort(), ['.downloads', 'catalog.json', 'es-en']);
    assert.ok(readdirSync(join(out, '.downloads')).every((name) => /^[0-9a-f]{64}$/.test(name)), 'no partial download left');
    assert.ok(!existsSync(join(out, '.downloads', record('model.deen.intgemm8.bin').attachment.hash)));
    assert.deepEqual(JSON.parse(readFileSync(join(out, 'catalog.json'), 'utf8')).models.map((e) => e.model), ['es-en/']);
  } finally {
    server.faults = {};
    lex.attachment.hash = hash;
  }
  const usage = await cli(['pull', 'es-en']);
  assert.equal(usage.code, 1);
  assert.match(usage.stderr, /models pull needs PAIRs and --out DIR/);
});

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

test('the demo with pulled models (what npm start serves from models/pulled/): their languages in the menu, pivots through English, the detector picks German, de → fr as Node, again offline', {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found` : false, timeout: 240_000,
}, async () => {
  const out = join(tmp, 'demo-pulled');
  const r = await cli(['pull', '--registry', server.root, 'de-en', 'en-fr', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const german = 'Die Datei konnte nicht geöffnet werden, weil ein anderes Programm sie gerade verwendet.';
  const want = await direct('en-fr', await direct('de-en', [german]));
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(join(tmp, 'chromium-demo'), { executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
  try {
    await withServer({ mounts: [pulledMount(out), ...demoMounts()] }, async (base) => {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      const state = async () => `status "${await page.textContent('[data-testid=status]')}", error "${await page.textContent('[data-testid=error]')}", ` +
        `direction ${await page.$eval('[data-testid=direction]', (s) => s.value)}, target "${await page.textContent('[data-testid=target]')}"; ${errors.join('; ')}`;
      const failing = async (err) => { throw new Error(`${await state()}: ${err.message}`); };
      const ready = () => page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 60_000 }).catch(failing);
      const options = () => page.$$eval('[data-testid=direction] option', (all) => Object.fromEntries(all.map((o) => [o.value, o.textContent])));
      const shows = (pair, text) => page.waitForFunction(([p, t]) => document.querySelector('[data-testid=direction]').value === p &&
        document.querySelector('[data-testid=target]').textContent === t, [pair, text], { timeout: 60_000 }).catch(failing);
      await page.goto(base);
      await ready();
      const menu = await options();
      for (const pair of ['es-en', 'en-es', 'de-en', 'en-fr']) assert.doesNotMatch(menu[pair] ?? '', /through English|^$/, pair);
      for (const pair of ['de-fr', 'de-es', 'es-fr']) assert.match(menu[pair] ?? '', /\(through English\)$/, pair);
      assert.equal(menu['fr-de'], undefined, 'no model from French');
      // German typed: the detector turns the source to German (its target stays English).
      await page.fill('[data-testid=source]', german);
      await shows('de-en', (await direct('de-en', [german]))[0]);
      assert.equal(await page.textContent('[data-testid=detected]'), 'detected: German');
      await page.selectOption('[data-testid=direction]', 'de-fr');
      await shows('de-fr', want[0]);
      // Offline after first use: the shell from the service worker, the catalogue as last read, the models from the library's cache.
      await page.waitForFunction(() => document.querySelector('[data-testid=offline]').textContent.includes('offline'), null, { timeout: 60_000 })
        .catch(async (err) => failing(new Error(`offline: "${await page.textContent('[data-testid=offline]')}" ${err.message}`)));
      // ... once the library has kept both pulled models (it writes its copies as they arrive, not before it translates)
      for (const until = Date.now() + 60_000; ;) {
        const kept = await page.evaluate(async (urls) => {
          const { isCached } = await import('/js/load/loader.js');
          return (await Promise.all(urls.map((u) => isCached(new URL(u, location.href))))).every(Boolean);
        }, ['models/pulled/de-en/', 'models/pulled/en-fr/']);
        if (kept) break;
        if (Date.now() > until) await failing(new Error('the pulled models were not in the model cache after 60 s'));
        await new Promise((r) => setTimeout(r, 250));
      }
      await context.setOffline(true);
      await page.reload();
      await ready();
      assert.deepEqual(await options(), menu);
      await page.selectOption('[data-testid=direction]', 'de-fr');
      await page.fill('[data-testid=source]', german);
      await shows('de-fr', want[0]);
      assert.deepEqual(errors, []);
    });
  } finally {
    await context.close();
  }
});
