// Runs the stdlib-only Python tests (corpus cleaning rules, BLEU) under node:test.
// They need no torch, so `npm test` works on any machine with python3.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

test('python unit tests (tests/python)', () => {
  const r = spawnSync(python, ['-m', 'unittest', 'discover', '-s', 'tests/python', '-v'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120000,
  });
  if (r.status !== 0) {
    console.log(r.stdout);
    console.log(r.stderr);
  }
  assert.equal(r.status, 0, `python tests failed:\n${r.stderr}`);
});
