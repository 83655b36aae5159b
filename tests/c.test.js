// Runs every native C test binary built by build.sh (build/native/test_*).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const binaries = readdirSync(`${root}build/native`).filter((f) => f.startsWith('test_')).sort();

test('native C tests were built', () => {
  assert.ok(binaries.includes('test_kernels') && binaries.includes('test_model'), `found: ${binaries.join(', ')}`);
});

for (const name of binaries) {
  test(`native ${name}`, () => {
    const run = spawnSync(`${root}build/native/${name}`, { cwd: root, encoding: 'utf8', timeout: 300_000 });
    process.stdout.write(run.stdout);
    assert.equal(run.status, 0, `${name} failed:\n${run.stderr}${run.stdout.slice(-2000)}`);
  });
}
