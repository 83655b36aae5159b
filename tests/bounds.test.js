// No model file can take the machine down (issue 42): every download and
// every decompression stops at a bound (js/load/bounded.js). Each hostile case of
// tests/lib/bounds.js (endless and lying responses, a slow one aborted,
// compression bombs as each file of a Marian model, Content-Encoding bombs)
// loads in a child process of its own in Node, and in a fresh page in
// Chromium, and must be refused within seconds with an error naming the file
// and its bound, its peak memory under the load's own plus the bound; the
// .npz reader inflates to the sizes its directory declares; and random
// mutations of real files fed to the JavaScript Marian readers end in an
// error of ours, never a hang or a crash. tests/bench/bounds_table.js makes
// the before/after table of these cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { deflateRawSync, gzipSync } from 'node:zlib';

import { decompressed, weightsBound } from '../js/load/bounded.js';
import { readNpz, unpackedBytes } from '../js/marian/files.js';
import { boundsCases, boundsPage, bombs, chromiumLoader, hostileServer, runCase, writeModels } from './lib/bounds.js';
import { PYTHON, randomMarianModel, randomShortlist, spmPieces, writeMarianBin, writeMarianNpz } from './lib/marian.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const tmp = mkdtempSync(join(tmpdir(), 'rmt-bounds-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const MB = 2 ** 20, MAX_BYTES = 32 * MB, BOMB_BYTES = 512 * MB;
const marianModel = randomMarianModel({ seed: 81, decoder: 'ssru', yml: 'flow' });
const marian = { model: writeMarianBin(marianModel), shortlist: randomShortlist({ vocab: 150, first: 10, best: 6, seed: 82 }) };
const { files, model } = await writeModels(tmp, { root: ROOT, bombBytes: BOMB_BYTES, marian });
const loads = (base) => ({
  'a model directory': { model: `${base}dir/file/m/`, source: 'es', target: 'en', maxModelBytes: MAX_BYTES },
  'a Marian model': { model: { marian: { model: `${base}h/file/model.bin`, vocab: `${base}h/file/vocab.spm`, shortlist: `${base}h/file/lex.bin` } },
    source: 'es', target: 'en', maxModelBytes: MAX_BYTES },
});
const cacheDir = () => ({ XDG_CACHE_HOME: mkdtempSync(join(tmp, 'cache-')) });

// What a case's error must say: the abort's reason, the manifest's size, or the file and its bound.
function checkError(name, spec, r) {
  if (spec.abortAfterMs) return assert.equal(r.message, 'aborted by the test', name);
  assert.equal(r.name, 'OperationError', `${name}: ${r.name}: ${r.message}`);
  if (/smaller than the body/.test(name)) return assert.match(r.message, /model\.safetensors .* has \d+ bytes but manifest\.json says \d+/);
  assert.ok(r.message.startsWith(`residual-mt: ${spec.file}`), `${name}: ${r.message}`);
  // a zstd frame that declares less than it holds is refused as damaged at its first block, before any bound is reached
  if (/zstd bomb declaring a small size/.test(name)) return assert.match(r.message, /a damaged zstd stream \(.*decodes to more/, name);
  assert.match(r.message, /larger than its bound of \d+ bytes \(/, name);
}

// What the kernel may hold of a response no reader asked for: the largest
// receive buffer its TCP autotuning may grow to (tcp_rmem's maximum: 32 MiB
// on some machines, 6 MiB by default) and the largest send buffer. A reader
// that stopped at its bound leaves at most this much in flight.
function socketBufferBytes() {
  const max = (file, fallback) => {
    try { return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]); } catch { return fallback; }
  };
  return max('/proc/sys/net/ipv4/tcp_rmem', 6 * MB) + max('/proc/sys/net/ipv4/tcp_wmem', 4 * MB);
}
const IN_FLIGHT = socketBufferBytes() + 16 * MB;

// The hostile responses each reader stopped: closed by the load itself (the
// child still alive, lingering), having sent no more past the bound than the
// socket buffers and the reader's pipes hold.
function checkClosed(name, stats, r) {
  for (const [path, stat] of Object.entries(stats)) {
    if (!/\/(endless|huge|slow)\//.test(path)) continue;
    assert.ok(stat.closedAt !== null && stat.closedAt <= r.at + 250,
      `${name}: ${path} was not closed by the load (${stat.closedAt === null ? 'open' : `closed ${stat.closedAt - r.at} ms after it answered`})`);
    assert.ok(stat.sent <= MAX_BYTES + IN_FLIGHT, `${name}: ${path} sent ${stat.sent} bytes (bound ${MAX_BYTES} + ${IN_FLIGHT} in flight)`);
  }
}

test('every hostile file is refused within seconds, naming the file and its bound, the connection closed, memory bounded (Node)', async () => {
  const server = await hostileServer({ files, dir: model, root: ROOT });
  try {
    const ok = [];
    for (const [name, spec] of Object.entries(loads(server.base))) {
      const r = await runCase(ROOT, spec, { env: cacheDir() });
      assert.equal(r.ok, true, `${name}: ${JSON.stringify(r)}`);
      ok.push(r.peakMB);
    }
    // The process's own peak loading the model, plus the bound, plus room for streams' buffers and lazy GC.
    const limitMB = Math.max(...ok) + MAX_BYTES / MB + 48;
    for (const [name, spec] of Object.entries(boundsCases(server.base, files, MAX_BYTES))) {
      for (const path of Object.keys(server.stats)) delete server.stats[path];
      const r = await runCase(ROOT, { ...spec, lingerMs: 500 }, { env: cacheDir(), timeoutMs: 20000, killAboveMB: 1500 });
      assert.ok(!r.killed && !r.ok, `${name}: ${JSON.stringify(r)}`);
      checkError(name, spec, r);
      assert.ok(r.ms < 5000, `${name}: ${r.ms} ms`);
      assert.ok(r.peakMB < limitMB, `${name}: peak ${r.peakMB} MB, over ${limitMB} MB`);
      checkClosed(name, server.stats, r);
      console.log(`# ${name}: ${r.ms} ms, peak ${r.peakMB} MB (bound ${limitMB} MB)`);
    }
  } finally {
    server.close();
  }
});

test('decompressed(): streamed within its bound, a declared size checked, a damaged stream an OperationError', async () => {
  const data = new Uint8Array(300000).map((_, i) => (i * 7919) % 251);
  assert.deepEqual(await decompressed(gzipSync(data), { codec: 'gzip', maxBytes: data.length, name: 'f' }), data);
  assert.deepEqual(await decompressed(new Blob([gzipSync(data)]).stream(), { codec: 'gzip', maxBytes: data.length, name: 'f' }), data);
  // unpackedBytes(): a Marian file's size, where a record declares it.
  assert.deepEqual(await unpackedBytes(gzipSync(data), { expectedBytes: data.length, name: 'vocab.spm.gz' }), data);
  await assert.rejects(unpackedBytes(gzipSync(data), { expectedBytes: 1000, name: 'vocab.spm.gz' }),
    /vocab\.spm\.gz is larger than its bound of 1000 bytes \(its declared gzip size; its trailer says more\): it has at least 300000 bytes/);
  const raw = deflateRawSync(data);
  assert.deepEqual(await decompressed(raw, { codec: 'deflate-raw', maxBytes: MAX_BYTES, expectedBytes: data.length, name: 'f' }), data);
  await assert.rejects(decompressed(raw, { codec: 'deflate-raw', maxBytes: MAX_BYTES, expectedBytes: 1000, name: 'f.npy' }),
    /f\.npy is larger than its bound of 1000 bytes \(its declared deflate-raw size\)/);
  await assert.rejects(decompressed(raw, { codec: 'deflate-raw', maxBytes: MAX_BYTES, expectedBytes: data.length + 1, name: 'f.npy' }),
    /f\.npy: 300000 bytes decompressed, 300001 declared/);
  await assert.rejects(decompressed(raw, { codec: 'deflate-raw', maxBytes: 1000, expectedBytes: data.length, name: 'f.npy' }),
    /f\.npy is larger than its bound of 1000 bytes \(its declared deflate-raw size\): it has 300000 bytes/);
  // A bomb's trailer gives it away before anything is inflated; one that lies is stopped as it inflates.
  for (const [codec, write] of Object.entries(bombs)) {
    for (const lying of [false, true]) {
      const path = join(tmp, `small-bomb-${lying}.${codec}`);
      await write(path, 64 * MB, lying);
      // a zstd frame header declaring its size is refused by the decoder before it inflates; one declaring
      // less than it holds is damaged at its first block
      const refusal = codec !== 'zstd' ? `bomb is larger than its bound of ${MB} bytes \\(decompressed gzip${lying ? '\\)' : ', as its trailer says\\): it has at least'}`
        : lying ? 'bomb: a damaged zstd stream \\(.*decodes to more' : `bomb is larger than its bound of ${MB} bytes \\(decompressed zstd\\)`;
      await assert.rejects(decompressed(new Uint8Array(readFileSync(path)), { codec, maxBytes: MB, name: 'bomb' }), new RegExp(refusal));
    }
  }
  const damaged = gzipSync(data);
  damaged.fill(0x55, 20, 60);
  await assert.rejects(decompressed(damaged, { codec: 'gzip', maxBytes: MAX_BYTES, name: 'model.bin.gz' }),
    (err) => err.name === 'OperationError' && /model\.bin\.gz: a damaged gzip stream/.test(err.message));
  await assert.rejects(decompressed(damaged, { codec: 'lzma', maxBytes: 1, name: 'f' }), TypeError);
});

// Python's zipfile (what numpy.savez_compressed writes with) writes a zip of
// `entries` ([name, path]), deflated.
function pythonZip(out, entries) {
  const script = `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for name, path in zip(sys.argv[2::2], sys.argv[3::2]):
        z.write(path, name)`;
  const r = spawnSync(PYTHON, ['-c', script, out, ...entries.flat()], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return new Uint8Array(readFileSync(out));
}

// A stored .npz's members, extracted by Python's zipfile: [name, path].
function npzMembers(stored, name) {
  writeFileSync(join(tmp, `${name}.npz`), stored);
  const r = spawnSync(PYTHON, ['-c', `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2])
print('\\n'.join(z.namelist()))`, join(tmp, `${name}.npz`), join(tmp, name)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map((n) => [n, join(tmp, name, n)]);
}

test('an .npz (deflated by Python\'s zipfile) inflates to the sizes its zip directory declares, within maxBytes', async () => {
  const stored = new Uint8Array(writeMarianNpz(marianModel));
  const members = npzMembers(stored, 'stored');
  const deflated = pythonZip(join(tmp, 'deflated.npz'), members);
  assert.ok(deflated.length < stored.length, 'the members are deflated');
  const [a, b] = [await readNpz(stored), await readNpz(deflated)];
  assert.deepEqual([...b.keys()], [...a.keys()]);
  for (const [name, item] of a) assert.deepEqual(b.get(name), item, name);
  await assert.rejects(readNpz(deflated, { maxBytes: 1000 }), /model\.npz is larger than its bound of 1000 bytes \(the sizes its zip directory declares\)/);
  // A member that inflates to more than its directory entry declares is stopped there.
  const zeros = join(tmp, 'zeros.npy');
  writeFileSync(zeros, Buffer.concat([readFileSync(members[0][1]).subarray(0, 128), Buffer.alloc(64 * MB)]));
  const bomb = pythonZip(join(tmp, 'bomb.npz'), [['a.npy', zeros]]);
  await assert.rejects(readNpz(bomb, { maxBytes: MB }), /the sizes its zip directory declares\): it has 67108992 bytes/);
  const view = new DataView(bomb.buffer, bomb.byteOffset);
  const central = bomb.findLastIndex((_, i) => i + 4 <= bomb.length && view.getUint32(i, true) === 0x02014b50);
  view.setUint32(central + 24, 4096, true); // the declared uncompressed size
  await assert.rejects(readNpz(bomb, { maxBytes: MB }), /model\.npz: a\.npy is larger than its bound of 4096 bytes \(its declared deflate-raw size\)/);
});

test('weightsBound: at least the weights of every model here, from its config.json', () => {
  const dirs = [join(ROOT, 'models/es-en'), ...readdirSync(join(ROOT, 'tests/fixtures/models')).map((d) => join(ROOT, 'tests/fixtures/models', d))];
  for (const dir of dirs.filter((d) => existsSync(join(d, 'config.json')) && existsSync(join(d, 'model.safetensors')))) {
    const bound = weightsBound(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')));
    const size = readFileSync(join(dir, 'model.safetensors')).length;
    assert.ok(bound >= size && bound < 16 * size, `${dir}: bound ${bound}, weights ${size}`);
  }
  assert.equal(weightsBound({ d_model: 256 }), null);
  assert.equal(weightsBound({ d_model: 256, ffn_dim: 1024, encoder_layers: 6, decoder_layers: 2, vocab_size: -1 }), null);
});

test('maxModelBytes must be a positive integer', async () => {
  const { createTranslator } = await import('../js/index.js');
  for (const bad of [0, -5, 1.5, '1000', 2 ** 53]) {
    await assert.rejects(createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', maxModelBytes: bad }),
      (err) => err instanceof RangeError && /maxModelBytes must be a positive integer/.test(err.message), String(bad));
  }
});

test('random mutations of real Marian files end in an error of ours in every JavaScript reader (never a hang, a crash or a foreign error)', async () => {
  const spm = readFileSync(join(ROOT, 'tests/fixtures/models/residual-text/spm.model'));
  const yml = spawnSync(PYTHON, ['-c', `import sys, yaml
pieces = [p for p in sys.stdin.read().split('\\n') if p]
sys.stdout.write(yaml.dump({p: i for i, p in enumerate(pieces)}, allow_unicode=True, sort_keys=False))`],
  { input: spmPieces(spm).join('\n'), encoding: 'utf8' });
  assert.equal(yml.status, 0, yml.stderr);
  const npz = pythonZip(join(tmp, 'fuzz.npz'), npzMembers(writeMarianNpz(marianModel), 'fuzz'));
  const workerFiles = {
    trainedBin: new Uint8Array(readFileSync(join(ROOT, 'tests/fixtures/marian-trained/attention/model.bin'))),
    bin: new Uint8Array(marian.model), npz, shortlist: new Uint8Array(marian.shortlist), spm: new Uint8Array(spm),
    yml: new TextEncoder().encode(yml.stdout),
  };
  const ms = 4000;
  const worker = new Worker(new URL('./lib/mutate-readers.js', import.meta.url), { workerData: { files: workerFiles, ms, seed: 42000 } });
  const result = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { worker.terminate(); reject(new Error('a reader hung: the worker did not finish')); }, ms + 20000);
    worker.once('message', (m) => { clearTimeout(timer); resolve(m); });
    worker.once('error', (err) => { clearTimeout(timer); reject(err); });
  });
  await worker.terminate();
  assert.deepEqual(result.failures, [], JSON.stringify(result.failures, null, 1));
  assert.ok(result.runs >= 50, `${result.runs} runs`);
  console.log(`# ${result.runs} mutated files read in ${ms} ms`);
});

test('Chromium: every hostile URL is refused within seconds, naming the file and its bound, the page\'s memory bounded', {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found` : false,
}, async () => {
  const { chromium } = await import('playwright-core');
  const server = await hostileServer({ files, dir: model, root: ROOT, pages: { '/bounds.html': boundsPage(),
    '/detector.html': boundsPage({ 'residual-mt-langid/': '/h/endless/' }) } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
  try {
    const load = chromiumLoader(browser, server.base, { timeoutMs: 20000, killAboveMB: 1500, lingerMs: 500 });
    const ok = [];
    for (const [name, spec] of Object.entries(loads(server.base))) {
      const r = await load(spec);
      assert.equal(r.ok, true, `${name}: ${JSON.stringify(r)}`);
      ok.push(r.peakMB);
    }
    const limitMB = Math.max(...ok) + MAX_BYTES / MB + 64;
    const urls = Object.entries(boundsCases(server.base, files, MAX_BYTES)).filter(([name]) => !/\((path|bytes)\)$/.test(name));
    for (const [name, spec] of urls) {
      for (const path of Object.keys(server.stats)) delete server.stats[path];
      const r = await load(spec);
      assert.ok(!r.ok && !r.killed, `${name}: ${JSON.stringify(r)}`);
      checkError(name, spec, r);
      assert.ok(r.ms < 5000, `${name}: ${r.ms} ms`);
      assert.ok(r.peakMB < limitMB, `${name}: peak ${r.peakMB} MB, over ${limitMB} MB`);
      checkClosed(name, server.stats, r);
      console.log(`# Chromium, ${name}: ${Math.round(r.ms)} ms, renderer's peak ${r.peakMB} MB (bound ${limitMB} MB)`);
    }
    // The language detector's model, where the page's import map puts its package: an endless answer.
    const r = await load({ page: 'detector.html', detector: true });
    assert.equal(r.name, 'OperationError', JSON.stringify(r));
    assert.match(r.message, /^residual-mt: the language detector model \(.*\/h\/endless\/model\.safetensors\) is larger than its bound of 16777216 bytes/);
    checkClosed('the language detector', server.stats, r);
  } finally {
    await browser.close();
    server.close();
  }
});
