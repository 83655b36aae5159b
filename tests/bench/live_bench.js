// A page translated live (translatePage) against translateElement, side by
// side, on the longest page of Debian's Spanish manuals (debian-reference-es's
// ch09.es.html, downloaded with apt-get: tests/lib/debian-pages.js), in
// Chromium with the demo's engine (the shipped int8 model; relaxed SIMD and
// threads where the browser has them: the page is cross-origin isolated, as
// the demo is), es -> en, beam 1 unless --beam. Per method, each run in a
// fresh page, the two methods alternating:
//   - first screen: from the call to the moment the last run in view at the
//     start had been written (a MutationObserver of the harness notes the
//     first write into each run's element), the same rule for both;
//   - whole page: to translateElement's resolution / translatePage's `done`;
//   - restore: restoreElement() / restore() until the original is back;
//   - longest main-thread task during it: the 'longtask' PerformanceObserver's
//     (tasks over 50 ms, whoever ran them; none: "< 50"), and for the live
//     translation its own timing of each of its slices (stats.longestTaskMs);
//   - mutation latency (live only, once the page is done and idle): a new
//     paragraph put at the top of the page, until its text is translated.
//
//   node tests/bench/live_bench.js [--runs N] [--beam N] [--json]
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, chromiumVersion, launchChromium } from './load_bench.js';
import { withServer } from '../lib/server.js';
import { LONGEST, debianPage } from '../lib/debian-pages.js';
import { DEFAULT_MODEL } from '../../js/defaults.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const runs = arg('--runs', 3);
const beam = arg('--beam', 1);

// In the page: translate with `method`, measure, restore. Returns the figures.
async function measure({ method, beam }) {
  const lib = await import('/node_modules/residual-mt/js/index.js');
  const { collectRuns } = await import('/node_modules/residual-mt/js/text/html.js');
  const { domTree } = await import('/node_modules/residual-mt/js/text/html-tree.js');
  const translator = await lib.createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
  await translator.translate('Hola, mundo.', { beam });  // the engine warm
  const runs = collectRuns(document.body, domTree(document));
  const elementOf = (node) => (node.nodeType === 1 ? node : node.parentElement);
  const inView = (el) => {
    const box = el.getBoundingClientRect();
    return box.bottom > 0 && box.right > 0 && box.top < innerHeight && box.left < innerWidth;
  };
  const visible = new Set(runs.map((run) => elementOf(run.container)).filter(inView));
  const written = new Map();
  const watcher = new MutationObserver((records) => {
    const at = performance.now();
    for (const r of records) if (r.type === 'childList' && visible.has(r.target) && !written.has(r.target)) written.set(r.target, at);
  });
  watcher.observe(document.body, { childList: true, subtree: true });
  const longtasks = [];
  const tasks = new PerformanceObserver((list) => longtasks.push(...list.getEntries().map((e) => e.duration)));
  tasks.observe({ type: 'longtask' });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  let whole, own = null, ownKind = null, latencies = [], restoring;
  if (method === 'translateElement') {
    await lib.translateElement(document.body, translator, { beam });
    whole = performance.now() - started;
    restoring = performance.now();
    lib.restoreElement(document.body);
    restoring = performance.now() - restoring;
  } else {
    const live = lib.translatePage(document.body, translator, { beam });
    await live.done;
    whole = performance.now() - started;
    own = live.stats.longestTaskMs;
    await live.idle();
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const p = document.createElement('p');
      p.textContent = `El sistema número ${i + 1} se inicia con la red configurada por el administrador.`;
      const text = p.firstChild;
      const put = performance.now();
      document.body.prepend(p);
      await new Promise((resolve) => {
        const seen = new MutationObserver(() => { if (!text.isConnected) { seen.disconnect(); resolve(); } });
        seen.observe(p, { childList: true });
      });
      latencies.push(performance.now() - put);
    }
    restoring = performance.now();
    await live.restore();
    restoring = performance.now() - restoring;
    own = Math.max(own, live.stats.longestTaskMs);
    ownKind = live.stats.longestTask;
  }
  watcher.disconnect();
  tasks.disconnect();
  const firstScreen = Math.max(...[...visible].map((el) => written.get(el) ?? Infinity)) - started;
  const threads = translator.threads;
  translator.destroy();
  return { firstScreen, whole, restoring, ownKind, longtask: longtasks.length ? Math.max(...longtasks) : 0, longtasks: longtasks.length, own, latencies,
    runs: runs.length, inView: visible.size, threads };
}

const median = (values) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function bench() {
  const html = debianPage(...LONGEST);
  const site = mkdtempSync(join(tmpdir(), 'rmt-live-bench-'));
  writeFileSync(join(site, 'page.html'), html);
  const mounts = [
    { prefix: '/node_modules/residual-mt/', dir: root },
    { prefix: `/node_modules/${DEFAULT_MODEL.package}/`, dir: `${root}${DEFAULT_MODEL.repoPath}` },
    { prefix: '/', dir: site },
  ];
  const { context, close } = await launchChromium();
  const results = { translateElement: [], translatePage: [] };
  try {
    await withServer({ mounts, csp: null }, async (base) => {
      for (let r = 0; r < runs; r++) {
        for (const method of process.env.ONLY ? [process.env.ONLY] : ['translateElement', 'translatePage']) {
          const page = await context.newPage();
          await page.setViewportSize({ width: 1280, height: 800 });
          await page.goto(`${base}page.html`);
          results[method].push(await page.evaluate(measure, { method, beam }).catch((err) => { throw new Error(`${method}: ${err.message}`); }));
          await page.close();
        }
      }
    });
  } finally {
    await close();
    rmSync(site, { recursive: true, force: true });
  }
  return { page: `${LONGEST[0]} ${LONGEST[1].slice(1)}`, bytes: Buffer.byteLength(html), beam, chromium: chromiumVersion(), results,
    machine: `${cpus().length} cores (${cpus()[0]?.model}), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end` };
}

function summary(result) {
  const rows = Object.entries(result.results).filter(([, list]) => list.length).map(([method, list]) => {
    const all = list.flatMap((r) => r.latencies);
    return {
      method,
      first_screen_ms: Math.round(median(list.map((r) => r.firstScreen))),
      whole_page_ms: Math.round(median(list.map((r) => r.whole))),
      restore_ms: Math.round(median(list.map((r) => r.restoring))),
      longest_longtask_ms: Math.round(Math.max(...list.map((r) => r.longtask))),
      longtasks: list.map((r) => r.longtasks),
      own_longest_slice_ms: list[0].own === null ? null : Math.round(Math.max(...list.map((r) => r.own)) * 10) / 10,
      own_longest_kinds: list.map((r) => r.ownKind),
      mutation_ms: all.length ? { median: Math.round(median(all)), max: Math.round(Math.max(...all)) } : null,
      runs: list[0].runs, in_view: list[0].inView, threads: list[0].threads,
    };
  });
  return { page: result.page, bytes: result.bytes, beam: result.beam, chromium: result.chromium, machine: result.machine, runs, rows };
}

if (!existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} not found (apt-get install chromium)`);
  process.exit(1);
}
const result = summary(await bench());
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 1));
else {
  console.log(`${result.page} (${result.bytes} bytes; ${result.rows[0].runs} runs, ${result.rows[0].in_view} in view at 1280x800), ` +
    `${result.chromium}, beam ${result.beam}, ${result.rows[0].threads} threads, median of ${runs} runs each (alternating); ${result.machine}`);
  console.log('| method | first screen ms | whole page ms | restore ms | longest long task ms (count per run) | longest slice of ours ms | new paragraph translated ms (median, max) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of result.rows) {
    console.log(`| ${r.method} | ${r.first_screen_ms} | ${r.whole_page_ms} | ${r.restore_ms} | ${r.longest_longtask_ms || '< 50'} (${r.longtasks.join(', ')}) | ` +
      `${r.own_longest_slice_ms === null ? '–' : `${r.own_longest_slice_ms} (${r.own_longest_kinds.join(', ')})`} | ${r.mutation_ms ? `${r.mutation_ms.median}, ${r.mutation_ms.max}` : '–'} |`);
  }
}
