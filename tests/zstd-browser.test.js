// js/load/zstd/zstd.js in Debian's Chromium (playwright-core, no browser download):
// Mozilla's own .zst files fetched and decompressed as their bytes arrive
// (response.body through zstdDecompressStream), checked against the SHA-256
// of their decompressed bytes (tests/fixtures/firefox-esen/README.md); a cut
// and a damaged copy reject with the file's name, and the page has no error.
// Skipped only when /usr/bin/chromium is missing and CI is not set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withServer } from './lib/server.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const root = fileURLToPath(new URL('..', import.meta.url));
const skip = !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found (apt-get install chromium); CI is not set` : false;

test("Chromium: Mozilla's .zst files decompress as they download; cut and damaged ones reject with the file's name", { skip, timeout: 120_000 }, async () => {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const errors = [];
  try {
    const got = await withServer({ mounts: [{ prefix: '/', dir: root }], csp: null }, async (base) => {
      const page = await browser.newPage();
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}package.json`);
      return page.evaluate(async () => {
        const { zstdDecompressStream, zstdDecompress } = await import('/js/load/zstd/zstd.js');
        const hex = async (bytes) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
          .map((b) => b.toString(16).padStart(2, '0')).join('');
        const dir = '/tests/fixtures/firefox-esen/zst/';
        const out = {};
        for (const name of ['vocab.esen.spm.zst', 'lex.50.50.esen.s2t.bin.zst']) {
          const response = await fetch(`${dir}${name}`);
          const bytes = await new Response(response.body.pipeThrough(zstdDecompressStream({ name }))).arrayBuffer();
          out[name] = { size: bytes.byteLength, sha256: await hex(bytes) };
        }
        const zst = new Uint8Array(await (await fetch(`${dir}vocab.esen.spm.zst`)).arrayBuffer());
        const fail = (p) => p.then(() => 'no error', (err) => `${err.code}: ${err.message}`);
        // Read with a reader: new Response(stream).arrayBuffer() would reject
        // with Chromium's own TypeError ('Failed to fetch'), not the stream's error.
        const drain = async (stream) => {
          const reader = stream.getReader();
          while (!(await reader.read()).done);
        };
        out.cut = await fail(drain(new Blob([zst.subarray(0, 300000)]).stream()
          .pipeThrough(zstdDecompressStream({ name: 'cut.zst' }))));
        const damaged = zst.slice();
        damaged[200000] ^= 0x10;
        out.damaged = await fail(zstdDecompress(damaged, { name: 'damaged.zst' }));
        return out;
      });
    });
    assert.deepEqual(got['vocab.esen.spm.zst'], { size: 825463, sha256: '909b1eea1face0d7f90a474fe29a8c0fef8d104b6e41e65616f864c964ba8845' });
    assert.deepEqual(got['lex.50.50.esen.s2t.bin.zst'], { size: 3860888, sha256: 'f11a2c23ef85ab1fee1c412b908d69bc20d66fd59faa8f7da5a5f0347eddf969' });
    assert.match(got.cut, /^ZSTD_TRUNCATED: .*cut\.zst/);
    assert.match(got.damaged, /^ZSTD_(CHECKSUM|CORRUPT): .*damaged\.zst/);
  } finally {
    await browser.close();
  }
  assert.deepEqual(errors, []);
});
