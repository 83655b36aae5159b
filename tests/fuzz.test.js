// The libFuzzer targets (fuzz/, built by build.sh for i386 with ASan + UBSan,
// or where i386 runs under qemu, for i386 with UBSan and x86-64 with ASan +
// UBSan): each runs briefly from its committed seeds and kept regression
// inputs, so that they build, their seeds load, and no input once found
// crashes again, and each under AddressSanitizer in at least one build.
// Long runs: npm run fuzz -- SECONDS (fuzz/README.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const targets = readdirSync(`${root}fuzz`).filter((f) => /^fuzz_\w+\.c$/.test(f)).map((f) => f.slice(0, -2)).sort();

test('every fuzz target runs 3000 inputs with no finding', { timeout: 600_000 }, () => {
  assert.ok(targets.includes('fuzz_model') && targets.includes('fuzz_spm_load') && targets.includes('fuzz_spm_encode'), `${targets}`);
  const run = spawnSync('bash', ['fuzz/run.sh', '0', ...targets], {
    cwd: root, encoding: 'utf8', timeout: 600_000, env: { ...process.env, FUZZ_RUNS: '3000' },
  });
  process.stdout.write(run.stdout ?? '');
  assert.equal(run.status, 0, `${run.error?.message ?? ''}${run.stderr}`);
  for (const target of targets) {
    const runs = [...run.stdout.matchAll(new RegExp(`^${target} \\(([^)]*)\\): 3000 executions, no finding$`, 'gm'))];
    assert.ok(runs.length > 0, `${target} did not run 3000 inputs`);
    console.log(`# ${target}: ${runs.map((m) => m[1]).join('; ')}`);
    assert.ok(runs.some((m) => m[1].includes('ASan')), `${target} ran under no AddressSanitizer: ${runs.map((m) => m[1])}`);
  }
});
