// js/load/zstd/zstd.js, our zstd decoder, on files written by Debian's real zstd tool:
// tests/fixtures/zstd/ (tests/fixtures/make_zstd.sh: levels 1, 3 and 19,
// --long=27, 1 KiB and 128 KiB windows, with and without the checksum, from a
// file and from a pipe, several frames, skippable frames, empty input, random
// bytes, zeros) against SHA256SUMS, what `zstd -dc` gave; Mozilla's own .zst
// files against their .gz twins; a 17 MB model-like file compressed at test
// time (when zstd is installed; in CI it must be); then truncated, corrupted,
// oversized and mis-sized input, each a clear error naming the file, and a
// truncated stream that rejects when its input ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { zstdDecompress, zstdDecompressStream } from '../js/load/zstd/zstd.js';
import { ZSTD_MAX_WINDOW } from '../js/defaults.js';
import { modelLike } from './lib/model-like.js';

const DIR = new URL('./fixtures/zstd/', import.meta.url);
const FIREFOX = new URL('./fixtures/firefox-esen/', import.meta.url);
const SUMS = readFileSync(new URL('SHA256SUMS', DIR), 'utf8').trim().split('\n').map((line) => {
  const [sha256, size, file] = line.split(' ');
  return { sha256, size: Number(size), file };
});
const haveZstd = spawnSync('zstd', ['--version']).status === 0;
const skipBig = !haveZstd && !process.env.CI ? 'zstd not installed (apt-get install zstd); CI is not set' : false;

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const fixture = (file) => new Uint8Array(readFileSync(new URL(file, DIR)));

// The stream's output for `bytes` fed in pieces of `piece` bytes.
async function throughStream(bytes, piece, options = {}) {
  const source = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += piece) controller.enqueue(bytes.slice(i, i + piece));
      controller.close();
    },
  });
  const chunks = [];
  for await (const chunk of source.pipeThrough(zstdDecompressStream(options))) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// Rejects with an Error whose code is `code` and whose message names `name`.
async function rejectsWith(promise, code, name) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, err.message);
    assert.ok(err.message.includes(name), err.message);
    return true;
  });
}

test('every fixture the zstd tool wrote decodes to what zstd -dc gives, whole and streamed in pieces', async () => {
  assert.ok(SUMS.length >= 13);
  for (const { sha256: want, size, file } of SUMS) {
    const bytes = fixture(file);
    const whole = await zstdDecompress(bytes, { name: file, expectedBytes: size });
    assert.equal(whole.length, size, file);
    assert.equal(sha256(whole), want, file);
    for (const piece of [1000, 65536]) {
      const streamed = await throughStream(bytes, piece, { name: file, maxOutputBytes: size });
      assert.equal(sha256(streamed), want, `${file} in pieces of ${piece}`);
    }
  }
  const small = fixture('text.19.zst');
  assert.equal(sha256(await throughStream(small, 1)), SUMS.find((s) => s.file === 'text.19.zst').sha256, 'byte by byte');
});

test("Mozilla's .zst files decode to what gunzip gives for their .gz twins", async () => {
  for (const [name, want] of [
    ['vocab.esen.spm', '909b1eea1face0d7f90a474fe29a8c0fef8d104b6e41e65616f864c964ba8845'],
    ['lex.50.50.esen.s2t.bin', 'f11a2c23ef85ab1fee1c412b908d69bc20d66fd59faa8f7da5a5f0347eddf969'],
  ]) {
    const gunzipped = gunzipSync(readFileSync(new URL(`${name}.gz`, FIREFOX)));
    assert.equal(sha256(gunzipped), want);
    const zst = new Uint8Array(readFileSync(new URL(`zst/${name}.zst`, FIREFOX)));
    const whole = await zstdDecompress(zst, { name, expectedBytes: gunzipped.length });
    assert.ok(Buffer.from(whole).equals(gunzipped), name);
    assert.ok((await throughStream(zst, 65536, { name })).equals(gunzipped), `${name} streamed`);
  }
});

test('a 16.5 MB model-like file: zstd -3, -1 --long=27 from a pipe, a 4 KiB window from a pipe, and -19 on its first 4 MB', { skip: skipBig, timeout: 300_000 }, async () => {
  const model = modelLike();
  const dir = mkdtempSync(join(tmpdir(), 'rmt-zstd-'));
  try {
    const file = join(dir, 'model.bin');
    writeFileSync(file, model);
    const head = model.subarray(0, 4 << 20);
    for (const [args, input] of [[['-3', file], null], [['-1', '--long=27'], model], [['-3', '--zstd=wlog=12'], model], [['-19'], head]]) {
      const zst = execFileSync('zstd', ['-q', '-c', '-T1', ...args], { input, maxBuffer: 64 << 20 });
      const want = input === head ? head : model;
      const got = await zstdDecompress(new Uint8Array(zst), { name: args.join(' ') });
      assert.equal(got.length, want.length, args.join(' '));
      assert.ok(Buffer.from(got.buffer, got.byteOffset, got.length).equals(want), args.join(' '));
      if (args[0] === '-3' && args.length === 2) {
        assert.ok((await throughStream(zst, 65536)).equals(want), 'streamed');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('empty input, bytes that are not zstd, and a frame that needs a dictionary are clear errors', async () => {
  await rejectsWith(zstdDecompress(new Uint8Array(0), { name: 'empty.bin' }), 'ZSTD_TRUNCATED', 'empty.bin');
  const gz = new Uint8Array(readFileSync(new URL('vocab.esen.spm.gz', FIREFOX)));
  await rejectsWith(zstdDecompress(gz, { name: 'vocab.esen.spm.gz' }), 'ZSTD_CORRUPT', 'vocab.esen.spm.gz');
  // Frame header: magic, descriptor 0x01 (a 1-byte dictionary ID), window byte, ID 7.
  const dict = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x00, 0x07, 0x01, 0x00, 0x00]);
  await rejectsWith(zstdDecompress(dict, { name: 'dict.zst' }), 'ZSTD_CORRUPT', 'dictionary');
  const after = Buffer.concat([fixture('text.3.zst'), Buffer.from('trailing junk')]);
  await rejectsWith(zstdDecompress(after, { name: 'junk.zst' }), 'ZSTD_CORRUPT', 'junk.zst');
});

test('input cut anywhere inside a frame is ZSTD_TRUNCATED, whole or streamed, and the stream rejects when its input ends', async () => {
  for (const file of ['text.19.zst', 'text.wlog10.zst', 'random.zst', 'text.long27.zst']) {
    const bytes = fixture(file);
    const cuts = new Set();
    for (let i = 1; i < 40; i++) { cuts.add(i); cuts.add(bytes.length - i); }
    for (let i = 0; i < 100; i++) cuts.add(Math.floor((i * bytes.length) / 100));
    for (const cut of cuts) {
      if (cut <= 0) continue;
      await rejectsWith(zstdDecompress(bytes.subarray(0, cut), { name: file }), 'ZSTD_TRUNCATED', file);
    }
    await rejectsWith(throughStream(bytes.subarray(0, bytes.length >> 1), 512, { name: file }), 'ZSTD_TRUNCATED', file);
  }
  const frames = fixture('frames.zst');
  await rejectsWith(zstdDecompress(frames.subarray(0, frames.length - 5), { name: 'frames.zst' }), 'ZSTD_TRUNCATED', 'frames.zst');
  const skippable = fixture('skippable.zst');
  await rejectsWith(zstdDecompress(skippable.subarray(0, 10), { name: 's.zst' }), 'ZSTD_TRUNCATED', 's.zst');
});

test('a changed byte anywhere gives an error or, where the format ignores the bits, the same bytes: never other output', async () => {
  const want = SUMS.find((s) => s.file === 'text.19.zst').sha256;
  const bytes = fixture('text.19.zst');
  let seed = 12345;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const codes = new Map();
  for (let i = 0; i < 400; i++) {
    const broken = bytes.slice();
    const at = i < 100 ? i : Math.floor(random() * bytes.length);
    broken[at] ^= 1 << Math.floor(random() * 8);
    try {
      assert.equal(sha256(await zstdDecompress(broken, { name: 'text.19.zst' })), want, `byte ${at} changed, no error`);
      codes.set('same', (codes.get('same') ?? 0) + 1);
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      assert.match(err.code, /^ZSTD_(CORRUPT|CHECKSUM|TRUNCATED)$/, err.stack);
      assert.ok(err.message.includes('text.19.zst'), err.message);
      codes.set(err.code, (codes.get(err.code) ?? 0) + 1);
    }
  }
  console.log('400 one-bit changes:', Object.fromEntries(codes));
  assert.ok(codes.get('ZSTD_CHECKSUM') > 0 && codes.get('ZSTD_CORRUPT') > 0);
  const badSum = bytes.slice();
  badSum[badSum.length - 1] ^= 0x80;
  await rejectsWith(zstdDecompress(badSum, { name: 'sum.zst' }), 'ZSTD_CHECKSUM', 'sum.zst');
});

test('maxOutputBytes and expectedBytes: over or different is an error naming the file', async () => {
  const { size } = SUMS.find((s) => s.file === 'text60.wlog17.zst');
  const bytes = fixture('text60.wlog17.zst'); // no content size in its header: caught as it decodes
  await rejectsWith(zstdDecompress(bytes, { name: 'a.zst', maxOutputBytes: size - 1 }), 'ZSTD_TOO_LARGE', 'a.zst');
  await rejectsWith(throughStream(bytes, 4096, { name: 'b.zst', maxOutputBytes: 100000 }), 'ZSTD_TOO_LARGE', 'b.zst');
  await rejectsWith(zstdDecompress(bytes, { name: 'c.zst', expectedBytes: size + 1 }), 'ZSTD_SIZE', 'c.zst');
  await rejectsWith(zstdDecompress(bytes, { name: 'd.zst', expectedBytes: size - 1 }), 'ZSTD_SIZE', 'd.zst');
  assert.equal((await zstdDecompress(bytes, { maxOutputBytes: size, expectedBytes: size })).length, size);
  // A header that says more than allowed fails before anything is decoded.
  await rejectsWith(zstdDecompress(fixture('zeros.zst'), { name: 'z.zst', maxOutputBytes: 999999 }), 'ZSTD_TOO_LARGE', 'z.zst');
  // A window over ZSTD_MAX_WINDOW (128 MiB): descriptor 0x00, window byte 0x90 (256 MiB).
  const huge = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x90, 0x01, 0x00, 0x00]);
  assert.equal(ZSTD_MAX_WINDOW, 2 ** 27);
  await rejectsWith(zstdDecompress(huge, { name: 'w.zst' }), 'ZSTD_TOO_LARGE', 'w.zst');
  assert.equal((await zstdDecompress(huge, { maxOutputBytes: 1000 })).length, 0, 'a window bounded by maxOutputBytes');
  for (const bad of [-1, 1.5, 'x', 2 ** 60]) {
    assert.throws(() => zstdDecompressStream({ maxOutputBytes: bad }), RangeError);
    await assert.rejects(zstdDecompress(bytes, { expectedBytes: bad }), RangeError);
  }
  await assert.rejects(zstdDecompress('not bytes'), TypeError);
});

test('3,000 inputs with random bytes changed or cut: each decodes or fails with a ZSTD_ error, nothing else', async () => {
  const files = SUMS.map(({ file }) => fixture(file));
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const codes = {};
  for (let i = 0; i < 3000; i++) {
    const source = files[i % files.length];
    const bytes = source.slice(0, Math.max(1, Math.floor(source.length * (random() < 0.2 ? random() : 1))));
    for (let k = 1 + Math.floor(random() * 8); k > 0; k--) {
      const at = Math.floor(random() * (random() < 0.5 ? Math.min(64, bytes.length) : bytes.length));
      bytes[at] = Math.floor(random() * 256);
    }
    const code = await zstdDecompress(bytes, { name: 'fuzz.zst' }).then(() => 'decoded', (err) => err.code ?? err.stack);
    assert.match(code, /^(decoded|ZSTD_[A-Z_]+)$/);
    codes[code] = (codes[code] ?? 0) + 1;
  }
  console.log('3,000 changed inputs:', codes);
});

test("the stream's chunks are views of one buffer while a frame of known size decodes: transferring one is a TypeError, not wrong bytes", async () => {
  const bytes = fixture('text60.wlog17.zst'); // no content size: its chunks are copies, free to transfer
  const copies = [];
  for await (const chunk of new Blob([bytes]).stream().pipeThrough(zstdDecompressStream())) {
    copies.push(structuredClone(chunk, { transfer: [chunk.buffer] }));
  }
  assert.equal(sha256(Buffer.concat(copies)), SUMS.find((s) => s.file === 'text60.wlog17.zst').sha256);
  const known = new Uint8Array(readFileSync(new URL('zst/lex.50.50.esen.s2t.bin.zst', FIREFOX)));
  let at = 0;
  const source = new ReadableStream({ // 64 KiB a read, so the frame is still decoding after the first chunk
    pull(controller) {
      if (at >= known.length) controller.close();
      else controller.enqueue(known.slice(at, at += 65536));
    },
  }, { highWaterMark: 0 });
  await assert.rejects((async () => {
    let first = true;
    for await (const chunk of source.pipeThrough(zstdDecompressStream())) {
      if (first) structuredClone(chunk, { transfer: [chunk.buffer] });
      first = false;
    }
  })(), (err) => err instanceof TypeError && /transferred/.test(err.message));
});
