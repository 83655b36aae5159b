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
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStaticServer } from '../js/serve.js';

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
      console.log(`browser timings (Chromium ${await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1])}): first load ${firstLoad} ms, ` +
        `warm load ${warmLoad} ms, offline load ${offlineLoad} ms, first translation ${firstTranslation} ms, ` +
        `first visit downloaded ${firstVisitBytes} bytes in ${firstVisitRequests} requests ` +
        `(model ${fixtureIsDefault ? 'tests/fixtures/models/residual-text' : 'models/es-en'})`);
    });
  } finally {
    await close();
  }
});

test('a page outside the repo uses the package with three lines', { skip, timeout: 60_000 }, async () => {
  const site = mkdtempSync(join(tmpdir(), 'rmt-site-'));
  mkdirSync(join(site, 'node_modules'));
  symlinkSync(root, join(site, 'node_modules', 'residual-mt'), 'dir');
  cpSync(`${root}tests/fixtures/page/index.html`, join(site, 'index.html'));
  const { context, close } = await launch();
  try {
    await withServer({ mounts: [{ prefix: '/', dir: site }] }, async (base) => {
      const page = await context.newPage();
      const errors = watchConsole(page);
      await page.goto(base);
      await page.waitForFunction(() => document.body.dataset.done === 'true' || null, null, { timeout: 30_000 })
        .catch((err) => { throw new Error(`${errors.join('; ')}\n${err.message}`); });
      // The same answer as the package gives in Node.
      const { createTranslator } = await import('../js/index.js');
      const node = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
      const want = await node.translate('Hola, mundo. ¿Qué tal?', { beam: 1 });
      node.destroy();
      assert.equal(await page.textContent('#out'), want);
      assert.deepEqual(errors, []);
    });
  } finally {
    await close();
    rmSync(site, { recursive: true, force: true });
  }
});
