// The int8 GEMM of one engine build in a Chromium page, on shapes given,
// against the page's dot_i16x8 peak (tests/bench/kernels.js): how its rate
// holds as one product's weights outgrow the caches (a decoder step of
// OPUS-MT's base shape reads 25 MB of int8 weights).
//
//   node tests/bench/gemm_sizes.js [BUILD.wasm] [--shapes '[[M,N,K],...]'] [--rounds N]
//   (default: dist/residual-mt.wasm; M 16 and 1, K 512, 1 MB to 25 MB of weights)
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { withServer } from '../lib/server.js';
import { launchChromium } from './load_bench.js';

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: {
  shapes: { type: 'string', default: '[[16,2048,512],[16,16384,512],[16,40960,512],[16,51200,512],[1,2048,512],[1,51200,512]]' },
  rounds: { type: 'string', default: '5' },
} });
const wasm = resolve(positionals[0] ?? 'dist/residual-mt.wasm');
const root = resolve(new URL('../../', import.meta.url).pathname);
const shapes = JSON.parse(opt.shapes), rounds = Number(opt.rounds);

const lines = await withServer({ mounts: [{ prefix: '/build/', dir: dirname(wasm) }, { prefix: '/', dir: root }] }, async (base) => {
  const { context, close } = await launchChromium();
  try {
    const page = await context.newPage();
    await page.goto(`${base}tests/bench/page.html`);
    return await page.evaluate(async ([url, shapes, rounds]) => {
      const { loadWasm } = await import('/js/engine/wasm.js');
      const { gemmBenchI8, peakRunner } = await import('/tests/bench/kernels.js');
      const engine = await loadWasm(url);
      const peakRun = peakRunner('dot_i16'), best = (run) => Math.max(...Array.from({ length: rounds }, run));
      const peak = best(peakRun), out = [`dot_i16x8 peak ${peak.toFixed(1)} GOP/s`];
      for (const [M, N, K] of shapes) {
        const g = gemmBenchI8(engine, M, N, K, false), gops = best(g.run);
        g.free();
        out.push(`M ${M}, N ${N}, K ${K} (${(N * K / 2 ** 20).toFixed(1)} MB of weights): ${gops.toFixed(1)} GOP/s, ${(100 * gops / peak).toFixed(0)}% of the peak`);
      }
      return out;
    }, [`/build/${basename(wasm)}`, shapes, rounds]);
  } finally {
    await close();
  }
});
console.log(lines.join('\n'));
