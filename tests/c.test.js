// Runs every native C test binary built by build.sh (build/native/test_*).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// build/native: optimised; build/sanitize: the same tests under ASan + UBSan.
for (const dir of ['native', 'sanitize']) {
  const binaries = readdirSync(`${root}build/${dir}`).filter((f) => f.startsWith('test_')).sort();

  test(`${dir} C tests were built`, () => {
    assert.ok(binaries.includes('test_kernels') && binaries.includes('test_model'), `found: ${binaries.join(', ')}`);
  });

  for (const name of binaries) {
    test(`${dir} ${name}`, () => {
      const run = spawnSync(`${root}build/${dir}/${name}`, {
        cwd: root, encoding: 'utf8', timeout: 600_000, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      });
      process.stdout.write(run.stdout);
      assert.equal(run.status, 0, `${name} failed:\n${run.stderr.slice(-4000)}${run.stdout.slice(-2000)}`);
    });
  }
}
