// SentencePiece tokenizer, WASM build: exact parity with spm_encode /
// spm_decode (sentencepiece 0.1.97) on every model in tests/fixtures/spm/
// (made by tests/fixtures/make_spm_fixtures.py), invalid UTF-8, corrupt
// models, and a bounded random-bytes fuzz; Firefox's real es->en vocabulary
// (tests/fixtures/firefox-esen/, decompressed from Mozilla's .zst and .gz)
// against spm_encode on a corpus of our own (made by
// tests/fixtures/make_firefox_esen.py). RMT_WASM=path tests another build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { loadWasm } from '../js/engine/wasm.js';
import { zstdDecompress } from '../js/load/zstd/zstd.js';

const DIR = new URL('./fixtures/spm/', import.meta.url);
const wasm = await loadWasm(process.env.RMT_WASM || undefined);
const ex = wasm.exports;

function splitLines(buf) {
  const lines = [];
  let start = 0;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, start)) {
    lines.push(buf.subarray(start, i));
    start = i + 1;
  }
  return lines;
}

// A tokenizer in the engine, with input/output buffers reused across calls.
class Spm {
  constructor(bytes) {
    const ptr = wasm.copyIn(bytes);
    this.ptr = ex.rmt_spm_load(ptr, bytes.length);
    wasm.free(ptr);
    this.textCap = 0;
    this.idsCap = 0;
  }

  ensureText(n) {
    if (n <= this.textCap) return;
    wasm.free(this.text);
    this.textCap = Math.max(n, 2 * this.textCap, 4096);
    this.text = wasm.malloc(this.textCap);
  }

  ensureIds(n) {
    if (n <= this.idsCap) return;
    wasm.free(this.ids);
    this.idsCap = Math.max(n, 2 * this.idsCap, 1024);
    this.ids = wasm.malloc(4 * this.idsCap);
  }

  encode(bytes) {
    this.ensureText(bytes.length);
    this.ensureIds(16);
    wasm.u8.set(bytes, this.text);
    let n = ex.rmt_spm_encode(this.ptr, this.text, bytes.length, this.ids, this.idsCap);
    if (n > this.idsCap) {
      this.ensureIds(n);
      n = ex.rmt_spm_encode(this.ptr, this.text, bytes.length, this.ids, this.idsCap);
    }
    if (n < 0) throw new Error(wasm.lastError());
    return wasm.i32.slice(this.ids >> 2, (this.ids >> 2) + n);
  }

  // Decoded bytes, or null when the engine reports an error.
  decode(ids) {
    this.ensureIds(ids.length);
    wasm.i32.set(ids, this.ids >> 2);
    this.ensureText(16);
    let n = ex.rmt_spm_decode(this.ptr, this.ids, ids.length, this.text, this.textCap);
    if (n >= this.textCap) {
      this.ensureText(n + 1);
      n = ex.rmt_spm_decode(this.ptr, this.ids, ids.length, this.text, this.textCap);
    }
    if (n < 0) return null;
    return Buffer.from(wasm.u8.slice(this.text, this.text + n));
  }

  normalize(bytes) {
    this.ensureText(bytes.length * 4 + 16);
    const input = wasm.copyIn(bytes);
    const n = ex.rmt_spm_normalize(this.ptr, input, bytes.length, this.text, this.textCap);
    wasm.free(input);
    return Buffer.from(wasm.u8.slice(this.text, this.text + n)).toString('utf8');
  }

  free() {
    ex.rmt_spm_free(this.ptr);
    wasm.free(this.text);
    wasm.free(this.ids);
  }
}

const corpus = splitLines(readFileSync(new URL('corpus.txt', DIR)));
const models = readdirSync(DIR).filter((f) => f.endsWith('.model')).map((f) => f.slice(0, -6)).sort();

test('fixtures: at least 4 models and 5000 corpus lines', () => {
  assert.ok(models.length >= 4, `models: ${models}`);
  assert.ok(corpus.length >= 5000, `corpus lines: ${corpus.length}`);
});

for (const name of models) {
  test(`${name}: encode and decode parity with spm_encode/spm_decode`, () => {
    const spm = new Spm(readFileSync(new URL(`${name}.model`, DIR)));
    assert.ok(spm.ptr, `load: ${wasm.lastError()}`);
    const packed = readFileSync(new URL(`${name}.ids16`, DIR));
    const u16 = new Uint16Array(packed.buffer, packed.byteOffset, packed.length / 2);
    const decoded = splitLines(readFileSync(new URL(`${name}.decoded`, DIR)));
    assert.equal(decoded.length, corpus.length);
    let pos = 0, encOk = 0, decOk = 0;
    const bad = [];
    for (let line = 0; line < corpus.length; line++) {
      const end = u16.indexOf(0xffff, pos);
      const want = Int32Array.from(u16.subarray(pos, end));
      pos = end + 1;
      const got = spm.encode(corpus[line]);
      if (got.length === want.length && got.every((v, i) => v === want[i])) encOk++;
      else if (bad.length < 3) bad.push(`line ${line + 1}: ${corpus[line].toString().slice(0, 80)}\n  spm: ${want.join(' ')}\n  rmt: ${got.join(' ')}`);
      const d = decoded[line];
      const wantText = d[0] === 0x3d ? corpus[line] : d.subarray(1);
      const gotText = spm.decode(want);
      if (gotText && gotText.equals(wantText)) decOk++;
      else if (bad.length < 6) bad.push(`decode line ${line + 1}:\n  spm: ${wantText}\n  rmt: ${gotText}`);
    }
    assert.equal(pos, u16.length);
    assert.equal(encOk, corpus.length, `encode parity ${encOk}/${corpus.length}\n${bad.join('\n')}`);
    assert.equal(decOk, corpus.length, `decode parity ${decOk}/${corpus.length}\n${bad.join('\n')}`);

    const randIds = splitLines(readFileSync(new URL(`${name}.rand.ids`, DIR)));
    const randDec = splitLines(readFileSync(new URL(`${name}.rand.decoded`, DIR)));
    assert.equal(randIds.length, randDec.length);
    randIds.forEach((line, i) => {
      const ids = line.toString().split(' ').filter(Boolean).map(Number);
      assert.deepEqual(spm.decode(ids), randDec[i], `random ids line ${i + 1}: ${line}`);
    });

    const vocab = ex.rmt_spm_vocab_size(spm.ptr);
    assert.equal(spm.decode([0, vocab]), null, 'an id out of range is an error');
    assert.match(wasm.lastError(), /invalid id/);
    spm.free();
  });
}

// Firefox's vocab.esen.spm (32,000 pieces): the corpus covers every script
// and symbol class we could think of (make_firefox_esen.py lists them).
test("Firefox's es-en vocabulary, from Mozilla's .zst and .gz: ids identical to spm_encode's on 1,400 lines of every script", async () => {
  const FIREFOX = new URL('./fixtures/firefox-esen/', import.meta.url);
  const fromGz = gunzipSync(readFileSync(new URL('vocab.esen.spm.gz', FIREFOX)));
  const fromZst = await zstdDecompress(new Uint8Array(readFileSync(new URL('zst/vocab.esen.spm.zst', FIREFOX))), { name: 'vocab.esen.spm.zst' });
  assert.ok(fromGz.equals(fromZst), 'the .zst and the .gz hold the same vocabulary');
  const spm = new Spm(fromZst);
  assert.ok(spm.ptr, `load: ${wasm.lastError()}`);
  assert.equal(ex.rmt_spm_vocab_size(spm.ptr), 32000);
  const lines = splitLines(readFileSync(new URL('corpus.txt', FIREFOX)));
  const want = readFileSync(new URL('corpus.ids', FIREFOX), 'utf8').split('\n').slice(0, -1);
  assert.ok(lines.length >= 1000 && lines.length === want.length, `${lines.length} lines, ${want.length} id lines`);
  let same = 0;
  const bad = [];
  lines.forEach((line, i) => {
    const got = Array.from(spm.encode(line)).join(' ');
    if (got === want[i]) same++;
    else if (bad.length < 5) bad.push(`line ${i + 1}: ${line.toString().slice(0, 80)}\n  spm: ${want[i]}\n  rmt: ${got}`);
  });
  spm.free();
  console.log(`Firefox es-en vocabulary: ${same} of ${lines.length} lines tokenized as spm_encode does`);
  assert.equal(same, lines.length, bad.join('\n'));
});

test('invalid UTF-8 becomes U+FFFD one byte at a time, as in SentencePiece', () => {
  const spm = new Spm(readFileSync(new URL('uni_nfkc.model', DIR)));
  const cases = [
    [[0x80], '▁\ufffd'], [[0xc0, 0xaf], '▁\ufffd\ufffd'], [[0xed, 0xa0, 0x80], '▁\ufffd\ufffd\ufffd'],
    [[0xe2, 0x82], '▁\ufffd\ufffd'], [[0x61, 0xf0, 0x9f, 0x98], '▁a\ufffd\ufffd\ufffd'],
    [[0xef, 0xbf, 0xbd], ''],  // a literal U+FFFD is valid, and nmt_nfkc deletes it
    [[0xf4, 0x90, 0x80, 0x80], '▁\ufffd\ufffd\ufffd\ufffd'],
  ];
  for (const [bytes, want] of cases) assert.equal(spm.normalize(Buffer.from(bytes)), want, `${bytes}`);
  spm.free();
  // With byte fallback, the U+FFFD that stands for the bad byte is spelled in bytes.
  const bytes = new Spm(readFileSync(new URL('uni_bytes.model', DIR)));
  const id = (piece) => ex.rmt_spm_piece_to_id(bytes.ptr, wasm.copyString(piece)[0]);
  const ids = [...bytes.encode(Buffer.from([0x80]))];
  assert.deepEqual(ids.slice(-3), [id('<0xEF>'), id('<0xBF>'), id('<0xBD>')]);
  assert.equal(bytes.decode(ids).toString(), '\ufffd');
  bytes.free();
});

test('language tokens and special ids', () => {
  const spm = new Spm(readFileSync(new URL('uni_nfkc.model', DIR)));
  const en = ex.rmt_spm_piece_to_id(spm.ptr, wasm.copyString('<2en>')[0]);
  assert.ok(en > 0);
  assert.equal(ex.rmt_spm_piece_type(spm.ptr, en), 3);  // control
  assert.equal(wasm.readString(ex.rmt_spm_id_to_piece(spm.ptr, en)), '<2en>');
  assert.equal(ex.rmt_spm_piece_to_id(spm.ptr, wasm.copyString('no such piece')[0]), -1);
  assert.deepEqual([0, 1, 2, 3].map((k) => ex.rmt_spm_special_id(spm.ptr, k)), [0, 1, 2, -1]);
  assert.equal(spm.decode([en]).toString(), '', 'control pieces decode to nothing');
  spm.free();
  const cf = new Spm(readFileSync(new URL('bpe_bytes_cf.model', DIR)));  // trained with --pad_id=3
  assert.deepEqual([0, 1, 2, 3].map((k) => ex.rmt_spm_special_id(cf.ptr, k)), [0, 1, 2, 3]);
  cf.free();
});

test('corrupt and truncated models fail with a clear error', () => {
  const model = readFileSync(new URL('uni_bytes.model', DIR));
  const load = (bytes) => {
    const ptr = wasm.copyIn(bytes);
    const spm = ex.rmt_spm_load(ptr, bytes.length);
    wasm.free(ptr);
    return spm;
  };
  assert.equal(load(Buffer.from('not a model\n')), 0);
  assert.match(wasm.lastError(), /^spm: /);
  for (const cut of [1, 2, 10, 100, 1000, model.length >> 1, model.length - 1]) {
    const spm = load(model.subarray(0, cut));
    if (spm === 0) assert.match(wasm.lastError(), /^spm: /, `cut at ${cut}`);
    else ex.rmt_spm_free(spm);
  }
});

// The BPE encoder's working memory is 108 bytes per normalized byte: for 80 MB
// that is 8.6 GB, which wrapped to 50 MB in WASM's 32-bit sizes (then written
// far past its end). Now a clear error; the tokenizer goes on working.
test('a text whose BPE working memory overflows 32 bits is refused, not written past', () => {
  const bpe = new Spm(readFileSync(new URL('bpe_nfkc.model', DIR)));
  const before = Array.from(bpe.encode(Buffer.from('hello world')));
  assert.throws(() => bpe.encode(Buffer.alloc(40_000_000, 'a ')), /spm: text too long \(\d+ bytes normalized\)/);
  assert.deepEqual(Array.from(bpe.encode(Buffer.from('hello world'))), before);
  bpe.free();
});

// Bounded fuzz: damaged models and random input bytes never crash the engine.
test('fuzz: random bytes into the model parser and the encoder', () => {
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  const model = readFileSync(new URL('bpe_bytes_cf.model', DIR));
  for (let iter = 0; iter < 100; iter++) {
    const copy = Buffer.from(model);
    for (let k = 0; k < 1 + rnd() % 8; k++) copy[rnd() % copy.length] ^= 1 << (rnd() % 8);
    const spm = new Spm(copy);
    if (spm.ptr) spm.encode(Buffer.from('fuzz ¿qué? \xff', 'latin1'));
    if (spm.ptr) spm.free();
  }
  for (let iter = 0; iter < 300; iter++) {
    const bytes = Buffer.alloc(1 + rnd() % 300, 0).map(() => rnd() & 0xff);
    const spm = new Spm(bytes);
    if (spm.ptr) spm.free();
  }
  for (const name of models) {
    const spm = new Spm(readFileSync(new URL(`${name}.model`, DIR)));
    const vocab = ex.rmt_spm_vocab_size(spm.ptr);
    for (let iter = 0; iter < 300; iter++) {
      const bytes = Buffer.alloc(rnd() % 200, 0).map(() => (iter % 2 ? rnd() : 0x20 + rnd() % 95) & 0xff);
      const ids = spm.encode(bytes);
      assert.ok(ids.every((id) => id >= 0 && id < vocab));
      assert.notEqual(spm.decode(ids), null);
    }
    spm.free();
  }
});
