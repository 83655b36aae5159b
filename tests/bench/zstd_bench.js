// zstd decoders side by side, for docs/API.md's "zstd" table: ours
// (js/load/zstd/zstd.js), the pure-JavaScript fzstd and zstddec (zstd's own decoder
// compiled to WebAssembly), both devDependencies here. On tests/lib/model-like.js's
// 16.5 MB file compressed by Debian's zstd at level 1 (what Mozilla's .zst
// files use) and 19: MB/s of decompressed output, whole and fed in 64 KiB
// pieces, in Node and in Chromium (best of 10 after the first run, decoders
// in turn; the first run's own figure too: a page decodes a model once); the gzipped bytes each adds to a page; and the peak memory (max RSS
// (VmHWM) of a fresh Node process, above one that only imports the decoder) of
// loading the file from disk into one Uint8Array: streamed, or read whole and
// then decompressed.
//
//   node tests/bench/zstd_bench.js [--json] [--no-browser]
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { open } from 'node:fs/promises';
import { modelLike } from '../lib/model-like.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PIECE = 64 << 10;
const RUNS = 10;
const OURS = ['js/load/zstd/zstd.js', 'js/load/zstd/block.js', 'js/load/zstd/entropy.js', 'js/load/zstd/xxh64.js', 'js/defaults.js'];
const FZSTD = 'node_modules/fzstd/esm/index.mjs';
const ZSTDDEC = 'node_modules/zstddec/dist/zstddec.mjs';
const ZSTDDEC_STREAM = 'node_modules/zstddec/dist/zstddec-stream.mjs';

// The decoders, as functions of (compressed bytes, its pieces, decompressed
// size) -> decompressed bytes; each module imported by `load` (a path -> module).
// Written without closures over this file: Chromium runs them from their text.
async function makeDecoders(load) {
  const ours = await load('js/load/zstd/zstd.js');
  const fzstd = await load('node_modules/fzstd/esm/index.mjs');
  const zstddec = new (await load('node_modules/zstddec/dist/zstddec.mjs')).ZSTDDecoder();
  const zstddecStream = new (await load('node_modules/zstddec/dist/zstddec-stream.mjs')).ZSTDDecoder();
  await zstddec.init();
  await zstddecStream.init();
  const join = (chunks, n) => {
    const out = new Uint8Array(n);
    let at = 0;
    for (const c of chunks) { out.set(c, at); at += c.length; }
    return out;
  };
  return {
    ours: (bytes) => ours.zstdDecompress(bytes),
    ours_stream: async (bytes, pieces, n) => {
      const source = new ReadableStream({ start(c) { for (const p of pieces) c.enqueue(p); c.close(); } });
      const chunks = [];
      const reader = source.pipeThrough(ours.zstdDecompressStream()).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
      return join(chunks, n);
    },
    fzstd: (bytes) => fzstd.decompress(bytes),
    fzstd_stream: (bytes, pieces, n) => {
      const chunks = [];
      const d = new fzstd.Decompress((chunk) => chunks.push(chunk));
      pieces.forEach((p, i) => d.push(p, i === pieces.length - 1));
      return join(chunks, n);
    },
    zstddec: (bytes, pieces, n) => zstddec.decode(bytes, n),
    zstddec_stream: (bytes, pieces, n) => join([...zstddecStream.decodeStreaming(pieces)].map((c) => c.slice()), n),
  };
}

// { best: { decoder: MB/s }, first: {...} } for each compressed file in `files` ({ name: bytes }).
async function timeAll(decoders, files, size, check, runs) {
  const result = {};
  for (const [file, bytes] of Object.entries(files)) {
    const pieces = [];
    for (let i = 0; i < bytes.length; i += 65536) pieces.push(bytes.subarray(i, i + 65536));
    const best = {};
    const first = {};
    for (let run = 0; run <= runs; run++) {
      for (const [name, decode] of Object.entries(decoders)) {
        const t = performance.now();
        const out = await decode(bytes, pieces, size);
        const mbs = size / 1e6 / ((performance.now() - t) / 1000);
        if (run === 0 && !(await check(out))) throw new Error(`${name} decoded ${file} wrongly`);
        if (run === 0) first[name] = mbs;
        else best[name] = Math.max(best[name] ?? 0, mbs);
      }
    }
    result[file] = { best, first };
  }
  return result;
}

async function inNode(files, model) {
  const decoders = await makeDecoders((path) => import(`${root}${path}`));
  return timeAll(decoders, files, model.length, (out) => Buffer.from(out.buffer, out.byteOffset, out.length).equals(model), RUNS);
}

async function inChromium(dir, files, model) {
  const { withServer } = await import('../lib/server.js');
  const { CHROMIUM, CHROMIUM_ARGS, chromiumVersion } = await import('./load_bench.js');
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const digest = createHash('sha256').update(model).digest('hex');
  try {
    const mounts = [{ prefix: '/bench/', dir: `${dir}/` }, { prefix: '/', dir: root }];
    const result = await withServer({ mounts, csp: null }, async (url) => {
      const page = await browser.newPage();
      await page.goto(`${url}package.json`);
      return page.evaluate(async ({ names, size, want, make, time, runs }) => {
        const makeDecoders = (0, eval)(`(${make})`);
        const timeAll = (0, eval)(`(${time})`);
        const decoders = await makeDecoders((path) => import(`/${path}`));
        const files = {};
        for (const name of names) files[name] = new Uint8Array(await (await fetch(`/bench/${name}`)).arrayBuffer());
        const hex = async (out) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', out))].map((b) => b.toString(16).padStart(2, '0')).join('');
        return timeAll(decoders, files, size, async (out) => (await hex(out)) === want, runs);
      }, { names: Object.keys(files), size: model.length, want: digest, make: makeDecoders.toString(), time: timeAll.toString(), runs: RUNS });
    });
    return { chromium: chromiumVersion(), ...result };
  } finally {
    await browser.close();
  }
}

// Gzipped bytes a page loads for each decoder: its modules as they are
// (ours: five requests; js/defaults.js is loaded by the library anyway) and
// minified into one file by esbuild.
function pageBytes() {
  const gz = (text) => gzipSync(text, { level: 9 }).length;
  const minified = (entry) => execFileSync(join(root, 'node_modules/.bin/esbuild'), [entry, '--bundle', '--minify', '--format=esm', '--external:./defaults.js'], { cwd: root, maxBuffer: 16 << 20 });
  const sum = (paths) => paths.reduce((n, p) => n + gz(readFileSync(join(root, p))), 0);
  return {
    ours: { modules: sum(OURS.slice(0, 4)), minified: gz(minified('js/load/zstd/zstd.js')) },
    fzstd: { modules: sum([FZSTD]), minified: gz(minified(FZSTD)) },
    zstddec: { modules: sum([ZSTDDEC]), minified: gz(minified(ZSTDDEC)) },
    zstddec_stream: { modules: sum([ZSTDDEC_STREAM]), minified: gz(minified(ZSTDDEC_STREAM)) },
  };
}

// Peak RSS (MB) of a fresh process per way of loading `file` (child mode).
function peakMemory(file, size) {
  const peak = (mode) => {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--memory-child', mode, file, String(size)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`memory child ${mode}: ${r.stderr}`);
    return Number(r.stdout.trim()) / 1024;
  };
  const base = peak('none');
  const out = { baseline_mb: base };
  for (const mode of ['ours_stream', 'ours_whole', 'fzstd_whole', 'zstddec_whole']) out[`${mode}_mb`] = peak(mode) - base;
  return out;
}

async function memoryChild(mode, file, size) {
  const ours = await import('../../js/load/zstd/zstd.js');
  const fzstd = await import(`${root}${FZSTD}`);
  const zstddec = new (await import(`${root}${ZSTDDEC}`)).ZSTDDecoder();
  await zstddec.init();
  let out = null;
  if (mode === 'ours_stream') {
    const chunks = [];
    // As a response body arrives: a piece at a time, read when asked for.
    const handle = await open(file);
    const stream = new ReadableStream({
      async pull(c) {
        const { bytesRead, buffer } = await handle.read(new Uint8Array(PIECE), 0, PIECE, null);
        if (bytesRead === 0) c.close();
        else c.enqueue(buffer.subarray(0, bytesRead));
      },
    }).pipeThrough(ours.zstdDecompressStream());
    for await (const chunk of stream) chunks.push(chunk);
    out = chunks.length === 1 ? chunks[0] : null;
    if (!out) { // a frame of known size comes as views of one buffer (js/load/zstd/zstd.js)
      const first = chunks[0];
      out = first.buffer.byteLength === size ? new Uint8Array(first.buffer) : Buffer.concat(chunks);
    }
  } else if (mode !== 'none') {
    const read = readFileSync(file);
    const bytes = new Uint8Array(read.buffer, read.byteOffset, read.length);
    if (mode === 'ours_whole') out = await ours.zstdDecompress(bytes);
    if (mode === 'fzstd_whole') out = fzstd.decompress(bytes);
    if (mode === 'zstddec_whole') out = zstddec.decode(bytes, size);
  }
  if (mode !== 'none' && out.length !== size) throw new Error(`${mode}: ${out.length} bytes`);
  // VmHWM, this process's own peak (getrusage's maxRSS would keep the parent's across exec).
  console.log(/VmHWM:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--memory-child') return memoryChild(args[1], args[2], Number(args[3]));
  const model = modelLike();
  const dir = mkdtempSync(join(tmpdir(), 'rmt-zstd-bench-'));
  try {
    const files = {};
    for (const level of [1, 19]) {
      const name = `model.${level}.zst`;
      // From a file, as Mozilla's were: the frame header holds the content size.
      if (level === 1) writeFileSync(join(dir, 'model.bin'), model);
      execFileSync('zstd', ['-q', '-f', '-T1', `-${level}`, join(dir, 'model.bin'), '-o', join(dir, name)]);
      files[name] = new Uint8Array(readFileSync(join(dir, name)));
    }
    const report = {
      file: { bytes: model.length, compressed: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.length])) },
      node: { version: process.version, ...(await inNode(files, model)) },
      page_bytes_gzip: pageBytes(),
      peak_memory: peakMemory(join(dir, 'model.1.zst'), model.length),
    };
    if (!args.includes('--no-browser')) report.browser = await inChromium(dir, files, model);
    console.log(args.includes('--json') ? JSON.stringify(report) : JSON.stringify(report, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
