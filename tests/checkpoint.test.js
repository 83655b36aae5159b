// The checkpoint code that export.py builds a shipped model's weights with
// (models/residual_mt/checkpoint.py: the snapshots averaged, a fine-tuned
// run mixed back with its start): tests/torch/test_checkpoint.py. It needs
// Debian's python3-torch (.ci/run installs it); without it the test fails,
// it does not skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

test('checkpoint averaging and mixing (tests/torch/test_checkpoint.py)', () => {
  const r = spawnSync(python, ['tests/torch/test_checkpoint.py', '-v'], { cwd: root, encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, `needs python3-torch (apt-get install python3-torch, as .ci/run does)\n${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /Ran 6 tests/);
  assert.doesNotMatch(r.stderr, /skipped/);
});
