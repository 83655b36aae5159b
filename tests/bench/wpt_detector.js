// web-platform-tests' ai/language_detection/ against residual-mt/polyfill in
// Debian's Chromium (a check to run by hand, not a test: the WPT files are
// not part of this repository). Each test file runs in a page of its own,
// with Chromium's built-in LanguageDetector and Translator deleted and the
// polyfill installed, the file's META scripts loaded from WPT_DIR and
// tests/bench/wpt_harness.js standing in for testharness.js and testdriver.js.
//
//   node tests/bench/wpt_detector.js WPT_DIR [--json]
//
// WPT_DIR: a copy of web-platform-tests' tree holding at least
// ai/language_detection/*.js and ai/resources/util.js. Prints each subtest's
// PASS or FAIL (with its message), then the count.

import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DETECTOR_MODEL } from '../../js/defaults.js';
import { withServer } from '../lib/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const [wptDir] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const TEST_DIR = 'ai/language_detection';

// The scripts a test file's "// META: script=" lines name, as paths under WPT_DIR.
function metaScripts(file) {
  const out = [];
  for (const [, src] of readFileSync(join(wptDir, file), 'utf8').matchAll(/^\/\/ META: script=(\S+)/gm)) {
    if (src.includes('testdriver')) continue; // wpt_harness.js has test_driver
    out.push(src.startsWith('/') ? src.slice(1) : join(dirname(file), src));
  }
  return out.filter((path) => existsSync(join(wptDir, path)));
}

// The page of one test file: the harness, then (a module, so after the classic
// scripts, which only register subtests) the polyfill in the built-ins' place.
function pageFor(file) {
  const scripts = [...metaScripts(file), file].map((path) => `<script src="/wpt/${path}"></script>`).join('\n');
  return `<!doctype html><meta charset="utf-8"><button id="bless">bless</button>
<script src="/harness/wpt_harness.js"></script>
<script type="module">
  delete globalThis.LanguageDetector; delete globalThis.Translator;
  await import('/node_modules/residual-mt/js/polyfill.js');
  window.__ready = true;
</script>
${scripts}`;
}

async function runFile(context, base, file, pages) {
  const page = await context.newPage();
  await page.exposeFunction('__click', () => page.click('#bless'));
  const name = file.replaceAll('/', '_') + '.html';
  writeFileSync(join(pages, name), pageFor(file));
  await page.goto(`${base}pages/${name}`);
  await page.waitForFunction(() => window.__ready === true, null, { timeout: 60_000 });
  const results = await page.evaluate(() => globalThis.__runSubtests());
  await page.close();
  return results.map((r) => ({ file: relative(TEST_DIR, file), ...r }));
}

async function main() {
  if (!wptDir || !existsSync(join(wptDir, TEST_DIR))) {
    console.error('usage: node tests/bench/wpt_detector.js WPT_DIR [--json]  (WPT_DIR/ai/language_detection/ must exist)');
    process.exit(2);
  }
  const files = readdirSync(join(wptDir, TEST_DIR)).filter((f) => f.endsWith('.js')).sort().map((f) => `${TEST_DIR}/${f}`);
  const pages = mkdtempSync(join(tmpdir(), 'rmt-wpt-'));
  const profile = mkdtempSync(join(tmpdir(), 'rmt-chromium-'));
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  const mounts = [{ prefix: '/node_modules/residual-mt/', dir: root },
    { prefix: `/node_modules/${DETECTOR_MODEL.package}/`, dir: `${root}${DETECTOR_MODEL.repoPath}` },
    { prefix: '/harness/', dir: join(root, 'tests/bench') }, { prefix: '/wpt/', dir: wptDir }, { prefix: '/pages/', dir: pages }];
  const results = [];
  try {
    await withServer({ mounts, csp: null }, async (base) => {
      for (const file of files) results.push(...await runFile(context, base, file, pages));
    });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(pages, { recursive: true, force: true });
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(results, null, 1));
  else for (const r of results) console.log(`${r.status} ${r.file}: ${r.name}${r.message ? ` (${r.message})` : ''}`);
  console.log(`${results.filter((r) => r.status === 'PASS').length} of ${results.length} subtests pass`);
}

await main();
