// Firefox's real es->en shortlist (lex.50.50.esen.s2t.bin, tests/fixtures/firefox-esen/)
// decompressed from Mozilla's own .zst (js/load/zstd/zstd.js) and .gz (gunzip) bytes and
// read by js/marian/files.js's readShortlist; its header and entries checked
// against shortlist.json, an independent reading of the same file by
// tests/fixtures/make_firefox_esen.py (Python's struct, from the layout Marian
// writes). The vocabulary's tokenizer parity is in tests/spm.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { readShortlist } from '../js/marian/files.js';
import { zstdDecompress } from '../js/load/zstd/zstd.js';

const DIR = new URL('./fixtures/firefox-esen/', import.meta.url);
const VOCAB = 32000;

test("Firefox's 50/50 shortlist from Mozilla's .zst and .gz: both read alike, entries as Python reads them", async () => {
  const ref = JSON.parse(readFileSync(new URL('shortlist.json', DIR), 'utf8'));
  const fromGz = gunzipSync(readFileSync(new URL('lex.50.50.esen.s2t.bin.gz', DIR)));
  const zst = new Uint8Array(readFileSync(new URL('zst/lex.50.50.esen.s2t.bin.zst', DIR)));
  const fromZst = await zstdDecompress(zst, { name: 'lex.50.50.esen.s2t.bin.zst', expectedBytes: fromGz.length });
  assert.ok(fromGz.equals(fromZst));
  for (const bytes of [fromGz, fromZst]) {
    const { first, offsets, targets } = readShortlist(bytes, VOCAB);
    assert.equal(first, ref.firstNum);
    assert.equal(offsets.length, ref.offsets);
    assert.equal(targets.length, ref.targets);
    const picked = Object.keys(ref.entries);
    assert.ok(picked.length >= 60);
    for (const s of picked) {
      const got = Array.from(targets.subarray(offsets[Number(s)], offsets[Number(s) + 1]));
      assert.deepEqual(got, ref.entries[s], `source id ${s}`);
    }
  }
});
