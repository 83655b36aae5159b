// The demo page (web/) and the package in Debian's Chromium, driven by
// playwright-core (no browser download): load with a progress bar, wait for
// "ready", translate (button and as-you-type), reload warm, then go offline,
// reload and translate again (service worker); no console errors. Then a page
// outside the repo that imports the package as a user would.
//
// Skipped only when /usr/bin/chromium is missing and CI is not set; in CI it
// runs (and fails if Chromium or playwright-core is missing). Prints the
// timings it measures: first load, warm load, first translation, bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStaticServer, demoMounts } from '../js/serve.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const root = fileURLToPath(new URL('..', import.meta.url));
const ref = JSON.parse(readFileSync(`${root}tests/fixtures/models/residual-text/reference.json`, 'utf8'));
const haveChromium = existsSync(CHROMIUM);
const skip = !haveChromium && !process.env.CI ? `${CHROMIUM} not found (apt-get install chromium); CI is not set` : false;
// Without the shipped model, the page probes models/es-en/ first (one 404 per
// load) before using the fixture; that request is expected.
const shippedModel = existsSync(`${root}models/es-en/config.json`);
const fixtureIsDefault = !shippedModel;

async function withServer(options, fn) {
  const server = createStaticServer(options);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://localhost:${server.address().port}/`, server);
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
}

async function launch() {
  assert.ok(haveChromium, `${CHROMIUM} is missing: apt-get install chromium`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    assert.fail('playwright-core is not installed: npm install');
  }
  const profile = mkdtempSync(join(tmpdir(), 'rmt-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync'],
    timeout: 30_000,
  });
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

// Collects console errors and page errors, except the expected model probe.
function watchConsole(page) {
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const url = msg.location()?.url ?? '';
    if (!shippedModel && /\/models\/es-en\/config\.json$/.test(url) && /Failed to load resource/.test(msg.text())) return;
    errors.push(`${msg.text()} (${url})`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  return errors;
}

test('the demo: load, translate, warm reload, offline reload and translate; no console errors', { skip, timeout: 120_000 }, async () => {
  const { context, close } = await launch();
  try {
    await withServer({}, async (base, server) => {
      const page = context.pages()[0] ?? await context.newPage();
      const errors = watchConsole(page);
      const waitReady = async () => {
        try {
          await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'ready', null, { timeout: 30_000 });
        } catch (err) {
          throw new Error(`status is "${await page.textContent('[data-testid=status]').catch(() => '?')}"; errors: ${errors.join('; ')}\n${err.message}`);
        }
      };
      const translateTo = async (text, want) => {
        await page.fill('[data-testid=source]', text);
        const started = Date.now();
        await page.click('[data-testid=translate]');
        await page.waitForFunction((w) => document.querySelector('[data-testid=target]').textContent === w, want, { timeout: 20_000 });
        return Date.now() - started;
      };

      // First visit: progress bar, service worker, model download.
      let started = Date.now();
      await page.goto(`${base}?beam=1`);
      await waitReady();
      const firstLoad = Date.now() - started;
      await page.waitForFunction(() => document.querySelector('[data-testid=offline]').textContent.includes('offline'), null, { timeout: 30_000 });
      const firstVisitBytes = server.stats.bytes;
      const firstVisitRequests = server.stats.requests;
      // Each model file and the engine came down once (the service worker kept the page's download).
      for (const [path, n] of Object.entries(server.stats.full)) {
        if (/\.(safetensors|wasm)$|spm\.model$/.test(path)) assert.equal(n, 1, `${path} downloaded ${n} times`);
      }

      const options = await page.$$eval('[data-testid=direction] option', (os) => os.map((o) => o.value));
      if (fixtureIsDefault) assert.deepEqual(options, ['en-es', 'es-en']);
      assert.ok(options.length >= 1);

      let firstTranslation = null;
      if (fixtureIsDefault) {
        await page.selectOption('[data-testid=direction]', 'en-es');
        firstTranslation = await translateTo(ref.texts[2], ref.translations.es.text[2]);
        // Translate as you type (debounced), no button.
        await page.fill('[data-testid=source]', ref.texts[3]);
        await page.waitForFunction((w) => document.querySelector('[data-testid=target]').textContent === w, ref.translations.es.text[3]);
        await page.selectOption('[data-testid=direction]', 'es-en');
        await page.waitForFunction((w) => document.querySelector('[data-testid=target]').textContent === w, ref.translations.en.text[3]);
        assert.match(await page.textContent('[data-testid=stats]'), /ms .* tokens\/s/);
        // Streaming: the output grows, then equals the full translation.
        await page.check('[data-testid=stream]');
        await page.fill('[data-testid=source]', ref.texts[1]);
        await page.waitForFunction((w) => document.querySelector('[data-testid=target]').textContent === w, ref.translations.en.text[1]);
        await page.uncheck('[data-testid=stream]');
      } else {
        await page.fill('[data-testid=source]', 'Hola, mundo.');
        started = Date.now();
        await page.click('[data-testid=translate]');
        await page.waitForFunction(() => document.querySelector('[data-testid=target]').textContent.trim().length > 0, null, { timeout: 20_000 });
        firstTranslation = Date.now() - started;
      }

      // Warm load: everything cached.
      started = Date.now();
      await page.reload();
      await waitReady();
      const warmLoad = Date.now() - started;

      // Offline: reload and translate from the service worker's cache.
      await context.setOffline(true);
      started = Date.now();
      await page.reload();
      await waitReady();
      const offlineLoad = Date.now() - started;
      if (fixtureIsDefault) {
        await page.selectOption('[data-testid=direction]', 'en-es');
        await translateTo(ref.texts[0], ref.translations.es.text[0]);
      } else {
        await page.fill('[data-testid=source]', 'Buenos días.');
        await page.click('[data-testid=translate]');
        await page.waitForFunction(() => document.querySelector('[data-testid=target]').textContent.trim().length > 0, null, { timeout: 20_000 });
      }
      await context.setOffline(false);
      assert.deepEqual(errors, [], 'console errors');

      // A browser without WebAssembly SIMD is told what is missing.
      const noSimd = await context.newPage();
      await noSimd.addInitScript(() => { WebAssembly.validate = () => false; });
      await noSimd.goto(base);
      await noSimd.waitForFunction(() => /unsupported: .*WebAssembly SIMD/.test(document.querySelector('[data-testid=status]').textContent));
      await noSimd.close();

      console.log(`browser timings (Chromium ${await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])}): first load ${firstLoad} ms, ` +
        `warm load ${warmLoad} ms, offline load ${offlineLoad} ms, first translation ${firstTranslation} ms, ` +
        `first visit downloaded ${firstVisitBytes} bytes in ${firstVisitRequests} requests ` +
        `(model ${fixtureIsDefault ? 'tests/fixtures/models/residual-text' : 'models/es-en'})`);
    });
  } finally {
    await close();
  }
});

test('a page outside the repo uses the package with three lines (installed, or from a CDN origin)', { skip, timeout: 60_000 }, async () => {
  const site = mkdtempSync(join(tmpdir(), 'rmt-site-'));
  mkdirSync(join(site, 'node_modules'));
  symlinkSync(root, join(site, 'node_modules', 'residual-mt'), 'dir');
  const html = readFileSync(`${root}tests/fixtures/page/index.html`, 'utf8');
  cpSync(`${root}tests/fixtures/page/index.html`, join(site, 'index.html'));
  const { createTranslator } = await import('../js/index.js');
  const node = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
  const want = await node.translate('Hola, mundo. ¿Qué tal?', { beam: 1 });
  node.destroy();
  const { context, close } = await launch();
  const run = async (url) => {
    const page = await context.newPage();
    const errors = watchConsole(page);
    page.on('console', (msg) => { if (/running on the page's thread/.test(msg.text())) errors.push(msg.text()); });
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.done === 'true' || null, null, { timeout: 30_000 })
      .catch((err) => { throw new Error(`${errors.join('; ')}\n${err.message}`); });
    // The same answer as the package gives in Node.
    assert.equal(await page.textContent('#out'), want);
    assert.deepEqual(errors, []);
    await page.close();
  };
  try {
    await withServer({ mounts: [{ prefix: '/', dir: site }] }, async (base) => {
      await run(base);
      // The package on another origin (a CDN, with CORS): the worker still starts.
      await withServer({ mounts: [{ prefix: '/', dir: site }], cors: true }, async (cdn) => {
        const cdnUrl = cdn.replace('localhost', '127.0.0.1');
        writeFileSync(join(site, 'cdn.html'), html.replace('./node_modules/residual-mt/js/index.js', `${cdnUrl}node_modules/residual-mt/js/index.js`));
        await run(`${base}cdn.html`);
      });
    });
  } finally {
    await close();
    rmSync(site, { recursive: true, force: true });
  }
});

test('a new model replaces the cached one as a whole; each page sees one version', { skip, timeout: 90_000 }, async () => {
  // The default model is a copy of the fixture that the test then changes
  // (models/es-en/ hidden, so that this holds with the shipped model too).
  const dir = mkdtempSync(join(tmpdir(), 'rmt-model-'));
  cpSync(`${root}tests/fixtures/models/residual-text/`, dir, { recursive: true });
  const mounts = [{ prefix: '/models/es-en/', dir, allow: () => false },
    { prefix: '/tests/fixtures/models/residual-text/', dir }, ...demoMounts()];
  const { context, close } = await launch();
  const page = context.pages()[0] ?? await context.newPage();
  const ready = () => page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'ready', null, { timeout: 30_000 });
  const offlineText = (pattern) => page.waitForFunction((p) => new RegExp(p).test(document.querySelector('[data-testid=offline]').textContent), pattern, { timeout: 30_000 });
  const config = () => page.evaluate(() => fetch('/tests/fixtures/models/residual-text/config.json').then((r) => r.json()));
  const versions = () => page.evaluate(async () => (await caches.keys()).filter((n) => /^residual-mt-v/.test(n)).sort());
  try {
    await withServer({ mounts }, async (base) => {
      await page.goto(`${base}?beam=1`);
      await ready();
      await offlineText('available offline');
      const [v1] = await versions();
      assert.ok(v1, 'a versioned cache');

      // The server gets a new model (here: config.json changes, manifest.json follows).
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, note: 'v2' }, null, 1));
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
      const bytes = readFileSync(join(dir, 'config.json'));
      manifest.files['config.json'] = { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));

      // Next visit: served the cached version (whole), while the new one downloads.
      await page.reload();
      await ready();
      assert.equal((await config()).note, undefined);
      await offlineText('new version');
      assert.equal((await config()).note, undefined, 'this page stays on the version it started with');
      const both = await versions();
      assert.equal(both.length, 2, `old (in use) and new: ${both}`);
      const [v2] = both.filter((n) => n !== v1);
      assert.equal(v2.split('-').slice(0, 3).join('-'), v1.split('-').slice(0, 3).join('-'), 'same shell');

      // The visit after: the new model, and the old cache is gone.
      await page.reload();
      await ready();
      assert.equal((await config()).note, 'v2');
      await offlineText('available offline');
      assert.deepEqual(await versions(), [v2]);
      await context.setOffline(true);
      await page.reload();
      await ready();
      await page.selectOption('[data-testid=direction]', 'en-es');
      await page.fill('[data-testid=source]', ref.texts[3]);
      await page.click('[data-testid=translate]');
      await page.waitForFunction((w) => document.querySelector('[data-testid=target]').textContent === w, ref.translations.es.text[3]);
    });
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
});
