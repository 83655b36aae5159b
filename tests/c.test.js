// Runs every native C test binary built by build.sh: one per tests/c/test_*.c,
// each in three builds, and fails when one is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const names = readdirSync(`${root}tests/c`).filter((f) => /^test_\w+\.c$/.test(f)).map((f) => f.slice(0, -2)).sort();

// native: optimised; sanitize: ASan + UBSan; native32: i386 under ASan + UBSan,
// where size_t has the 32 bits it has in WASM (UBSan under qemu-i386 where the
// kernel runs no i386 programs: build.sh writes how in build/i386-runner).
// Each build says in build/DIR/sanitizers what checks it; the names show it.
const i386Runner = existsSync(`${root}build/i386-runner`) ? readFileSync(`${root}build/i386-runner`, 'utf8').trim() : '';
const checks = (dir) => existsSync(`${root}build/${dir}/sanitizers`) ? readFileSync(`${root}build/${dir}/sanitizers`, 'utf8').trim() : 'unknown';

test('the C tests run under AddressSanitizer and UBSan in at least one build', () => {
  const builds = ['sanitize', 'native32'].map((dir) => `${dir}: ${checks(dir)}`);
  console.log(`# ${builds.join('; ')}`);
  assert.ok(builds.some((b) => b.includes('ASan + UBSan')), builds.join('; '));
});

for (const dir of ['native', 'sanitize', 'native32']) {
  test(`${dir} (${checks(dir)}): every C test was built`, () => {
    const missing = names.filter((name) => !existsSync(`${root}build/${dir}/${name}`));
    assert.deepEqual(missing, [], `not built in build/${dir} (run bash build.sh all)`);
  });

  for (const name of names) {
    test(`${dir} ${name}`, () => {
      const program = `${root}build/${dir}/${name}`;
      const [command, args] = dir === 'native32' && i386Runner ? [i386Runner, [program]] : [program, []];
      const run = spawnSync(command, args, {
        cwd: root, encoding: 'utf8', timeout: 600_000, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      });
      process.stdout.write(run.stdout ?? '');
      assert.equal(run.status, 0, `${name} failed:\n${run.error?.message ?? ''}${(run.stderr ?? '').slice(-4000)}${(run.stdout ?? '').slice(-2000)}`);
    });
  }
}
