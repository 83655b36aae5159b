// Kernels checked in the WebAssembly build itself, where the C tests
// (tests/c/test_kernels.c, native) cannot: the SIMD swish gives the plain C
// one's floats bit for bit there (both take libm's expf as the wasm build
// links it), so a swish model's float32 outputs are what they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Engine } from '../js/engine/binding.js';

test('wasm: the SIMD swish equals the plain one bit for bit, over floats of every exponent', async () => {
  const engine = await Engine.load(undefined, { threads: 1 });
  const { wasm } = engine;
  const w = wasm.exports;
  // Every 65,537th float bit pattern (all signs and exponents, NaNs and
  // infinities among them), an odd count so that the tail runs too.
  const n = Math.floor(2 ** 32 / 65537) | 1;
  const bits = new Uint32Array(n);
  for (let i = 0; i < n; i++) bits[i] = (i * 65537 + 12345) >>> 0;
  bits.set([0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x42b00000, 0xc2b00000], 0);
  const ptr = wasm.malloc(n * 4);
  const run = (reference) => {
    new Uint32Array(wasm.memory.buffer, ptr, n).set(bits);
    w.rmt_kernel_swish_f32(ptr, n, reference);
    return Uint32Array.from(new Uint32Array(wasm.memory.buffer, ptr, n));
  };
  try {
    const want = run(1), got = run(0);
    const f = new Float32Array(want.buffer), g = new Float32Array(got.buffer);
    let differ = -1;
    for (let i = 0; i < n && differ < 0; i++) if (want[i] !== got[i] && !(Number.isNaN(f[i]) && Number.isNaN(g[i]))) differ = i;
    assert.equal(differ, -1, differ < 0 ? '' : `swish(${new Float32Array(bits.buffer)[differ]}): ${g[differ]}, plain ${f[differ]}`);
    // Swish itself, not two equal wrong answers: x * sigmoid(x) in float64, to float32's precision.
    const x = new Float32Array(bits.buffer);
    for (let i = 0; i < n; i += 97) {
      if (!Number.isFinite(x[i]) || Math.abs(x[i]) > 80) continue;
      const exact = x[i] / (1 + Math.exp(-x[i]));
      assert.ok(Math.abs(f[i] - exact) <= 4e-7 * Math.abs(exact) + 1e-45, `swish(${x[i]}) = ${f[i]}, expected ${exact}`);
    }
  } finally {
    wasm.free(ptr);
    engine.dispose();
  }
});

test('wasm: the SIMD SSRU cell equals the plain one bit for bit, with and without a previous cell', async () => {
  const engine = await Engine.load(undefined, { threads: 1 });
  const { wasm } = engine;
  const n = 4099;  // a tail too
  let seed = 5;
  const rand = (scale) => { seed = (seed * 1664525 + 1013904223) >>> 0; return (seed / 2 ** 32 - 0.5) * scale; };
  const inputs = [200, 20, 20].map((scale) => Float32Array.from({ length: n }, () => rand(scale)));  // gate, xw, prev
  inputs[0].set([0, -0, 88.5, -88.5, Infinity, -Infinity, NaN, 1e30], 0);
  inputs[1].set([NaN, -0, 0, 1e30, -1e30], 100);
  const ptrs = [...inputs.map((x) => wasm.copyIn(new Uint8Array(x.buffer))), ...[0, 1, 2, 3].map(() => wasm.malloc(n * 4))];
  const [gate, xw, prev, cell0, out0, cell1, out1] = ptrs;
  const bits = (ptr) => Uint32Array.from(new Uint32Array(wasm.memory.buffer, ptr, n));
  try {
    for (const p of [0, prev]) {
      wasm.exports.rmt_kernel_ssru_cell_f32(cell0, out0, p, xw, gate, n, 1);
      wasm.exports.rmt_kernel_ssru_cell_f32(cell1, out1, p, xw, gate, n, 0);
      for (const [want, got, what] of [[cell0, cell1, 'cell'], [out0, out1, 'out']]) {
        const a = bits(want), b = bits(got);
        const differ = a.findIndex((x, i) => x !== b[i] && !(Number.isNaN(new Float32Array(a.buffer)[i]) && Number.isNaN(new Float32Array(b.buffer)[i])));
        assert.equal(differ, -1, `${what} ${p ? 'with' : 'without'} a previous cell differs at ${differ}`);
      }
    }
    // The cell itself at one point: f = sigmoid(gate), c = f * prev + (1 - f) * xw.
    const f = 1 / (1 + Math.exp(-inputs[0][200]));
    const c = f * inputs[2][200] + (1 - f) * inputs[1][200];
    assert.ok(Math.abs(new Float32Array(wasm.memory.buffer, cell1, n)[200] - c) < 1e-5 * (1 + Math.abs(c)));
  } finally {
    ptrs.forEach((p) => wasm.free(p));
    engine.dispose();
  }
});
