// How fast the demo page (web/) gets ready in Chromium, served by scripts/serve.js
// on a free localhost port, and where the time goes:
//   - cold: a fresh browser profile (no HTTP cache, no service worker, no
//     Cache Storage, no compiled code): navigation to "ready";
//   - warm: the same profile reloaded once the service worker has cached the
//     app and the model (the page's usual second visit);
//   - first translation: a 20-word sentence put in and Translate pressed as
//     soon as the page is ready (the demo's own button and settings), until
//     the page shows it.
// Each figure is the median of its runs. The steps come from the User Timing
// measures the library records ("rmt:<step>", env.js timeStep: the worker's
// are replayed on the page's timeline) and the demo's marks (rmt-info,
// rmt-ready), all in ms since navigation start. The harness runs nothing in
// the page but one DevTools expression at a time (below).
//
//   node tests/bench/load_bench.js [--runs N] [--json]
//
// Chromium: /usr/bin/chromium (CHROMIUM overrides), driven by playwright-core;
// headless, no GPU, no browser download.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeDemoBundles } from '../../scripts/bundle.js';
import { writeShellManifest } from '../../scripts/shell.js';
import { withServer } from '../lib/server.js';
import { SENTENCE_20_WORDS } from './measure.js';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync'];


export function chromiumVersion() {
  try {
    return execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export async function launchChromium(extraArgs = []) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'rmt-bench-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs], timeout: 30_000,
  });
  return {
    context,
    profile,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// The harness asks the page through the DevTools protocol, one expression at
// a time (Runtime.evaluate): playwright's evaluate, waitForFunction or click
// would first inject its helper script into the new page (~330 KB, 20-35 ms
// of the page's main thread here) in the middle of the load it times, or of
// the first translation. fn: a function without closures, run with arg.
const sessions = new WeakMap(); // page -> its DevTools session, kept while the page lives
async function inPage(page, fn, arg) {
  if (!sessions.has(page)) sessions.set(page, await page.context().newCDPSession(page));
  const { result, exceptionDetails } = await sessions.get(page).send('Runtime.evaluate',
    { expression: `(${fn})(${JSON.stringify(arg ?? null)})`, returnByValue: true, awaitPromise: true });
  if (exceptionDetails) throw new Error(`in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return result.value;
}

// Polls fn in the page (every 20 ms, up to 60 s) until it returns true.
async function until(page, fn, what) {
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (await inPage(page, fn) === true) return;
  }
  throw new Error(`${what}: not within 60 s`);
}

export const untilReady = (page) => until(page, () => document.documentElement?.dataset.ready === 'true', 'the demo ready');

// The page's timeline once it is ready: { ready, steps: { name: { start, end } } }.
// `navigate` starts the load (only once the page is watched).
async function readyTimeline(page, navigate) {
  await navigate();
  await untilReady(page);
  return inPage(page, () => {
    const steps = {};
    const nav = performance.getEntriesByType('navigation')[0];
    if (nav) steps['page (HTML)'] = { start: nav.requestStart, end: nav.responseEnd };
    for (const e of performance.getEntriesByType('measure')) {
      if (e.name.startsWith('rmt:') && !(e.name in steps)) steps[e.name.slice(4)] = { start: e.startTime, end: e.startTime + e.duration };
    }
    for (const e of performance.getEntriesByType('mark')) if (e.name.startsWith('rmt-')) steps[e.name] = { start: e.startTime, end: e.startTime };
    return { ready: performance.getEntriesByName('rmt-ready')[0]?.startTime, steps };
  });
}

// Types `text` and presses Translate as soon as the page is ready (as a quick
// user would: before playwright's helper script is in the page); ms until the
// page shows the translation.
async function firstTranslation(page, text) {
  await inPage(page, (t) => {
    performance.clearMeasures('rmt:translate');
    document.querySelector('[data-testid=source]').value = t;
    document.querySelector('[data-testid=target]').dataset.state = '';
    document.querySelector('[data-testid=translate]').click();
  }, text);
  await until(page, () => document.querySelector('[data-testid=target]')?.dataset.state === 'done', 'the first translation');
  return inPage(page, () => performance.getEntriesByName('rmt:translate')[0]?.duration);
}

const offlineReady = (page) => until(page, () => document.querySelector('[data-testid=offline]')?.textContent.includes('offline'),
  'the demo available offline');

// Medians of runs' timelines: { ready_ms, steps: { name: { start, end } } }.
function summarize(runs) {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.steps)))];
  const steps = {};
  for (const name of names) {
    const start = median(runs.map((r) => r.steps[name]?.start)), end = median(runs.map((r) => r.steps[name]?.end));
    steps[name] = { start: Math.round(start * 10) / 10, end: Math.round(end * 10) / 10 };
  }
  return { ready_ms: Math.round(median(runs.map((r) => r.ready)) * 10) / 10, runs: runs.map((r) => Math.round(r.ready)), steps };
}

// The demo's load figures: { demo_cold_ready_ms, demo_warm_ready_ms,
// first_translation_ms, cold, warm, chromium }. runs: cold loads (each a new
// profile) and warm reloads.
export async function demoLoadBench({ runs = 3, text = SENTENCE_20_WORDS } = {}) {
  const cold = [], warm = [], translations = [];
  // As npm start does: the page's bundles, and the shell the service worker caches, as they are now.
  await writeDemoBundles();
  writeShellManifest();
  await withServer({}, async (base) => {
    for (let r = 0; r < runs; r++) {
      const { context, close } = await launchChromium();
      try {
        const page = context.pages()[0] ?? await context.newPage();
        cold.push(await readyTimeline(page, () => page.goto(base, { waitUntil: 'commit' })));
        await offlineReady(page);
        if (r > 0) continue;
        // Warm reloads in the first profile: the service worker now holds everything.
        for (let w = 0; w < runs; w++) {
          warm.push(await readyTimeline(page, () => page.reload({ waitUntil: 'commit' })));
          translations.push(await firstTranslation(page, text));
          await offlineReady(page);
        }
      } finally {
        await close();
      }
    }
  });
  const c = summarize(cold), w = summarize(warm);
  return {
    demo_cold_ready_ms: c.ready_ms,
    demo_warm_ready_ms: w.ready_ms,
    first_translation_ms: Math.round(median(translations) * 10) / 10,
    first_translation_runs_ms: translations.map((t) => Math.round(t)),
    first_translation_text: text,
    cold: c,
    warm: w,
    chromium: chromiumVersion(),
  };
}

export function printDemoLoad(result) {
  console.log(`demo load in ${result.chromium} (median of runs; ms since navigation start)`);
  console.log(`  cold load to ready ${result.demo_cold_ready_ms} ms (runs ${result.cold.runs.join(', ')}), ` +
    `warm reload to ready ${result.demo_warm_ready_ms} ms (runs ${result.warm.runs.join(', ')})`);
  console.log(`  first translation of a 20-word sentence after ready: ${result.first_translation_ms} ms ` +
    `(runs ${result.first_translation_runs_ms.join(', ')})`);
  for (const which of ['cold', 'warm']) {
    console.log(`\n  ${which}: step                         start      end   length`);
    const steps = Object.entries(result[which].steps).sort((a, b) => a[1].start - b[1].start || a[1].end - b[1].end);
    for (const [name, { start, end }] of steps) {
      console.log(`  ${name.padEnd(36)} ${start.toFixed(1).padStart(7)} ${end.toFixed(1).padStart(8)} ${(end - start).toFixed(1).padStart(8)}`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!existsSync(CHROMIUM)) {
    console.error(`${CHROMIUM} not found (apt-get install chromium)`);
    process.exit(1);
  }
  const args = process.argv.slice(2);
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3;
  const result = await demoLoadBench({ runs });
  if (args.includes('--json')) console.log(JSON.stringify(result, null, 1));
  else printDemoLoad(result);
}
