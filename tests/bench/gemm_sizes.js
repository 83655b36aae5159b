// The int8 GEMM of one engine build on shapes given, against the dot_i16x8
// peak (tests/bench/kernels.js), in a Chromium page or (--node) in Node, each
// shape twice: its weights warm (one copy, called again and again: in L2 up
// to 2 MB) and cold (copies of about 40 MB in all, one a call in turn), as a
// model's step finds them: it reads each product's weights once, 25 MB of
// them for OPUS-MT's base shape. The default shapes are that decoder's
// products for a batch of 16 (FFN up and down, QKV, an attention projection,
// the output layer) and FFN up for one sentence. First the peak loop, and the
// same loop with the int8 tile's loads: the most the tile's form can give.
//
//   node tests/bench/gemm_sizes.js [BUILD.wasm] [--shapes '[[M,N,K],...]'] [--rounds N] [--node]
//   (default: dist/residual-mt.wasm)
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { withServer } from '../lib/server.js';
import { launchChromium } from './load_bench.js';

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: {
  shapes: { type: 'string', default: '[[16,2048,512],[16,512,2048],[16,1536,512],[16,512,512],[16,8000,512],[1,2048,512]]' },
  rounds: { type: 'string', default: '5' },
  node: { type: 'boolean', default: false },
} });
const wasm = resolve(positionals[0] ?? 'dist/residual-mt.wasm');
const root = resolve(new URL('../../', import.meta.url).pathname);
const shapes = JSON.parse(opt.shapes), rounds = Number(opt.rounds);

// In the page or in Node: one line a shape, warm and cold against the peak.
async function measure({ url, shapes, rounds, kernelsUrl, wasmUrl }) {
  const { loadWasm } = await import(wasmUrl);
  const { gemmBenchI8, peakRunner } = await import(kernelsUrl);
  const engine = await loadWasm(url);
  const peakRun = peakRunner('dot_i16'), best = (run) => Math.max(...Array.from({ length: rounds }, run));
  const peak = best(peakRun), out = [`dot_i16x8 peak ${peak.toFixed(1)} GOP/s`];
  const pct = (gops) => `${gops.toFixed(1)} GOP/s (${(100 * gops / peak).toFixed(0)}%)`;
  // The peak loop in the tile's own form: the most the kernel's loop can give from L1
  out.push(`the same loop with the tile's loads (int8 weights widened, rows broadcast): ${pct(best(peakRunner('dot_i16_tile')))}`);
  for (const [M, N, K] of shapes) {
    const copies = Math.max(2, Math.ceil(40e6 / (N * K)));
    const rates = [1, copies].map((n) => {
      const g = gemmBenchI8(engine, M, N, K, false, n), gops = best(g.run);
      g.free();
      return gops;
    });
    out.push(`M ${M}, N ${N}, K ${K} (${(N * K / 2 ** 20).toFixed(2)} MB of weights): warm ${pct(rates[0])}, ` +
      `cold (${copies} copies) ${pct(rates[1])}`);
  }
  return out;
}

let lines;
if (opt.node) {
  lines = await measure({ url: wasm, shapes, rounds, kernelsUrl: new URL('./kernels.js', import.meta.url).href,
    wasmUrl: new URL('../../js/engine/wasm.js', import.meta.url).href });
} else {
  lines = await withServer({ mounts: [{ prefix: '/build/', dir: dirname(wasm) }, { prefix: '/', dir: root }] }, async (base) => {
    const { context, close } = await launchChromium();
    try {
      const page = await context.newPage();
      await page.goto(`${base}tests/bench/page.html`);
      return await page.evaluate(measure,
        { url: `/build/${basename(wasm)}`, shapes, rounds, kernelsUrl: '/tests/bench/kernels.js', wasmUrl: '/js/engine/wasm.js' });
    } finally {
      await close();
    }
  });
}
console.log(`${opt.node ? `Node ${process.version}` : 'Chromium'}, ${basename(wasm)}\n${lines.join('\n')}`);
