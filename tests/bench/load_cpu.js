// CPU time a warm reload of the demo costs in Chromium (all its processes:
// browser, renderer, GPU, network, service worker), from reload to "ready",
// for two checkouts alternately: a figure that other jobs on a shared
// machine disturb much less than wall time (they delay work, they do not
// add to it). Each reload also gives its wall time to ready.
//
//   node tests/bench/load_cpu.js DIR_A DIR_B [RELOADS]      (default 8 each, alternating)
//
// Linux only (/proc). Each directory needs its engine built and node_modules.

import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium, untilReady } from './load_bench.js';

const [a, b, reloads = '8'] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node tests/bench/load_cpu.js DIR_A DIR_B [RELOADS]');
  process.exit(2);
}
const TICK_MS = 10; // USER_HZ 100

// utime + stime (ms) of every process whose command line names `profile`.
function cpuMs(profile) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(profile)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
  }
  return ticks * TICK_MS;
}

// A checkout's demo, warmed up (first visit, offline copy made): reload() -> { cpu, wall }.
async function open(dir) {
  const root = resolve(dir);
  const { withServer } = await import(pathToFileURL(`${root}/tests/lib/server.js`).href);
  await (await import(pathToFileURL(`${root}/scripts/bundle.js`).href)).writeDemoBundles();
  (await import(pathToFileURL(`${root}/scripts/shell.js`).href)).writeShellManifest();
  const { context, close, profile } = await launchChromium();
  let stop;
  const served = new Promise((ready) => {
    withServer({}, (base) => new Promise((resolveStop) => { stop = resolveStop; ready(base); }));
  });
  const base = await served;
  const page = context.pages()[0] ?? await context.newPage();
  const ready = () => page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 60_000 });
  await page.goto(base);
  await ready();
  await page.waitForFunction(() => document.querySelector('[data-testid=offline]')?.textContent.includes('offline'), null, { timeout: 60_000 });
  await page.reload(); // the first warm reload fills what later ones read (kept weights)
  await ready();
  await page.waitForTimeout(1000);
  return {
    profile,
    async reload() {
      const before = cpuMs(profile);
      await page.reload({ waitUntil: 'commit' });
      await untilReady(page); // nothing injected into the page while it loads
      const cpu = cpuMs(profile) - before;
      const wall = await page.evaluate(() => performance.getEntriesByName('rmt-ready')[0]?.startTime);
      await page.waitForTimeout(1000); // what runs after ready (warm-up, keeping) is not the next reload's
      return { cpu, wall: Math.round(wall) };
    },
    async close() {
      stop();
      await close();
    },
  };
}

const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1];
const sides = [await open(a), await open(b)];
const results = [[], []];
for (let r = 0; r < Number(reloads); r++) {
  for (const i of r % 2 ? [1, 0] : [0, 1]) results[i].push(await sides[i].reload());
}
for (const side of sides) await side.close();
[a, b].forEach((dir, i) => {
  console.log(`${dir}: CPU to ready ${median(results[i].map((x) => x.cpu))} ms (runs ${results[i].map((x) => x.cpu).join(', ')}); ` +
    `wall ${median(results[i].map((x) => x.wall))} ms (runs ${results[i].map((x) => x.wall).join(', ')})`);
});
