// Tokenizer benchmark (not a test): encode throughput in MB/s of the WASM
// build (dist/residual-mt.wasm) against the sentencepiece CLI (spm_encode
// --output_format=id) on the same file, line by line in both, as a ratio.
//
//   node tests/bench/spm_bench.js [--file F] [--models a,b] [--repeat N] [--wasm path]
//
// Default input: tests/fixtures/spm/corpus.txt repeated 8 times (~2.6 MB),
// written to a temporary file. Needs spm_encode (apt-get install sentencepiece).
// Each side is timed the best of --repeat runs (default 3); spm_encode's time
// includes loading its model (a few ms) and writing ids to /dev/null.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadWasm } from '../../js/engine/wasm.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const DIR = new URL('../fixtures/spm/', import.meta.url);
const repeat = Number(args.repeat ?? 3);
const models = args.models ? args.models.split(',')
  : readdirSync(DIR).filter((f) => f.endsWith('.model')).map((f) => f.slice(0, -6)).sort();

const tmp = mkdtempSync(join(tmpdir(), 'spm-bench-'));
let file = args.file;
if (!file) {
  file = join(tmp, 'input.txt');
  writeFileSync(file, Buffer.concat(Array(8).fill(readFileSync(new URL('corpus.txt', DIR)))));
}
const input = readFileSync(file);
const mb = input.length / 1e6;

const wasm = await loadWasm(args.wasm);
const ex = wasm.exports;

function timeSpmEncode(model) {
  let best = Infinity;
  for (let r = 0; r < repeat; r++) {
    const t0 = performance.now();
    execFileSync('spm_encode', [`--model=${model}`, '--output_format=id', `--input=${file}`,
      '--output=/dev/null']);
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

function timeWasmEncode(modelBytes) {
  const mptr = wasm.copyIn(modelBytes);
  const spm = ex.rmt_spm_load(mptr, modelBytes.length);
  wasm.free(mptr);
  if (!spm) throw new Error(wasm.lastError());
  // Lines as spm_encode reads them; one call per line, the line copied in each time.
  const lines = [];
  for (let start = 0, i; (i = input.indexOf(10, start)) >= 0; start = i + 1) lines.push(input.subarray(start, i));
  let maxLen = 0;
  for (const l of lines) maxLen = Math.max(maxLen, l.length);
  const text = wasm.malloc(maxLen + 1);
  let idsCap = 4 * maxLen + 16;
  const ids = wasm.malloc(4 * idsCap);
  let best = Infinity, total = 0;
  for (let r = 0; r < repeat; r++) {
    total = 0;
    const t0 = performance.now();
    for (const line of lines) {
      wasm.u8.set(line, text);
      const n = ex.rmt_spm_encode(spm, text, line.length, ids, idsCap);
      if (n < 0 || n > idsCap) throw new Error(`encode failed: ${n} ${wasm.lastError()}`);
      total += n;
    }
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  wasm.free(text);
  wasm.free(ids);
  ex.rmt_spm_free(spm);
  return [best, total];
}

console.log(`input: ${file} (${mb.toFixed(2)} MB), best of ${repeat}`);
console.log('model          spm_encode MB/s   wasm MB/s   ratio (wasm/spm)   ids');
const ratios = [];
for (const name of models) {
  const path = new URL(`${name}.model`, DIR).pathname;
  const spmSec = timeSpmEncode(path);
  const [wasmSec, nIds] = timeWasmEncode(readFileSync(path));
  const ratio = spmSec / wasmSec;
  ratios.push(ratio);
  console.log(`${name.padEnd(14)} ${(mb / spmSec).toFixed(2).padStart(15)} ${(mb / wasmSec).toFixed(2).padStart(11)} ${ratio.toFixed(2).padStart(18)} ${String(nIds).padStart(9)}`);
}
const geo = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
console.log(`geometric mean ratio (wasm/spm_encode): ${geo.toFixed(2)}`);
rmSync(tmp, { recursive: true, force: true });
