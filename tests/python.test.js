// Runs the stdlib-only Python tests (corpus cleaning rules, BLEU) under node:test,
// with a small corpus built first so that the built-corpus checks always run.
// They need no torch, so `npm test` works on any machine with python3.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

function run(args, env, timeout) {
  const r = spawnSync(python, args, { cwd: root, encoding: 'utf8', timeout, env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.log(r.stdout);
    console.log(r.stderr);
  }
  return r;
}

test('python unit tests (tests/python) on a freshly built small corpus', (t) => {
  const corpus = mkdtempSync(path.join(tmpdir(), 'rmt-corpus-'));
  t.after(() => rmSync(corpus, { recursive: true, force: true }));
  // every source, 3 gettext packages, the shipped tokenizer (spm_train is the slow part)
  const build = run(['models/data/build_corpus.py', '--install-deps', '--out', corpus, '--packages', '3',
    '--spm-model', 'models/es-en/spm.model'], {}, 600000);
  assert.equal(build.status, 0, `corpus build failed:\n${build.stderr}`);
  const r = run(['-m', 'unittest', 'discover', '-s', 'tests/python', '-v'],
    { RMT_CORPUS: corpus, RMT_REQUIRE_CORPUS: '1' }, 120000);
  assert.equal(r.status, 0, `python tests failed:\n${r.stderr}`);
  // unittest marks a skip as "... skipped 'why'" and counts them as "(skipped=N)"; a test's name may hold the word.
  assert.doesNotMatch(r.stderr, /\.\.\. skipped\b|\(skipped=\d+\)/, 'no Python test may skip under npm test');
});
