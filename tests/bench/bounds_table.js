// The before/after table of issue 42: every case of tests/lib/bounds.js
// boundsCases loaded by each repository given (its js/index.js), in Node (a
// child process each) and in Chromium (a fresh page each; the URL cases),
// side by side: the error, the time to it and the peak memory (Node: the
// process's; Chromium: the page's renderer's). A load that passes 2,500 MB
// of memory or 20 s is killed (code without bounds takes what the machine has).
//   node tests/bench/bounds_table.js /work/main .    # before, after
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { boundsCases, boundsPage, chromiumLoader, hostileServer, runCase, writeModels } from '../lib/bounds.js';
import { randomMarianModel, randomShortlist, writeMarianBin } from '../lib/marian.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const roots = (process.argv.length > 2 ? process.argv.slice(2) : [ROOT]).map((r) => resolve(r));
const BOMB_BYTES = 2 ** 30, MAX_BYTES = 64 * 2 ** 20, LIMITS = { timeoutMs: 20000, killAboveMB: 2500 };

const tmp = mkdtempSync(join(tmpdir(), 'rmt-bounds-table-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const marian = { model: writeMarianBin(randomMarianModel({ seed: 81, decoder: 'ssru', yml: 'flow' })),
  shortlist: randomShortlist({ vocab: 150, first: 10, best: 6, seed: 82 }) };
const { files, model } = await writeModels(tmp, { root: ROOT, bombBytes: BOMB_BYTES, marian });

const shown = (r) => {
  if (!r) return '– | | ';
  const what = r.killed ? `killed: ${r.killed}` : r.ok ? 'loaded' : `${r.name}: ${r.message.replace(/^residual-mt: /, '').replace(/https?:\/\/127\.0\.0\.1:\d+/g, '')}`;
  return `${what.replaceAll('|', '\\|')} | ${(r.ms / 1000).toFixed(1)} s | ${r.peakMB} MB`;
};

// Each case's results: name -> [{ node, chromium } for each root].
const rows = new Map();
const { chromium } = existsSync(CHROMIUM) ? await import('playwright-core') : { chromium: null };
for (const [i, root] of roots.entries()) {
  const server = await hostileServer({ files, dir: model, root, pages: { '/bounds.html': boundsPage() } });
  const browser = await chromium?.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
  try {
    const load = browser && chromiumLoader(browser, server.base, LIMITS);
    for (const [name, spec] of Object.entries(boundsCases(server.base, files, MAX_BYTES))) {
      if (!rows.has(name)) rows.set(name, roots.map(() => ({})));
      const cell = rows.get(name)[i];
      cell.node = await runCase(root, spec, { env: { XDG_CACHE_HOME: mkdtempSync(join(tmp, 'cache-')) }, ...LIMITS });
      if (load && !/\((path|bytes)\)$/.test(name)) cell.chromium = await load(spec);
    }
  } finally {
    await browser?.close();
    server.close();
  }
}
console.log(`Bombs of ${BOMB_BYTES / 2 ** 20} MiB of zeros; maxModelBytes ${MAX_BYTES / 2 ** 20} MiB (ignored by code without that option); ` +
  `Node ${process.version}${chromium ? `, Chromium ${CHROMIUM}` : ''}.\n`);
console.log(`| case | runtime | ${roots.map((r) => `${r}: error | time | peak memory`).join(' | ')} |`);
console.log(`| --- | --- | ${roots.map(() => '--- | ---: | ---:').join(' | ')} |`);
for (const [name, cells] of rows) {
  for (const runtime of ['node', 'chromium']) {
    if (cells.every((c) => !c[runtime])) continue;
    console.log(`| ${name} | ${runtime === 'node' ? 'Node' : 'Chromium'} | ${cells.map((c) => shown(c[runtime])).join(' | ')} |`);
  }
}
