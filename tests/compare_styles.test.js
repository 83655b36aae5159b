// models/compare_styles.py on a tiny configuration (d 16, 2+2 layers, 6
// updates) over a synthetic word-for-word corpus written to a temp folder, so
// the style comparison keeps working.  It needs Debian's python3-torch and
// python3-matplotlib (.ci/run installs them); without them it fails, it does
// not skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const STYLES = ['post', 'pre', 'residual'];

function py(args, timeout = 120000) {
  return spawnSync(python, args, { cwd: root, encoding: 'utf8', timeout });
}

function requireTorch() {
  const r = py(['-c', 'import torch, matplotlib']);
  assert.equal(r.status, 0, 'models/compare_styles.py needs torch and matplotlib for ' + python +
    ': apt-get install python3-torch python3-matplotlib (as .ci/run does)\n' + r.stderr);
}

// Corpus: 20 "es" words a0..a19 and their "en" words b0..b19; a sentence is
// 3-7 random words and its translation the same words' partners.  Pieces are
// whole words, so the text files are the decoded id files.
function writeCorpus(dir) {
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const specials = ['<s>', '<pad>', '</s>', '<unk>', '<2en>', '<2es>'];
  const words = { es: [], en: [] };
  for (let i = 0; i < 20; i++) {
    words.es.push('a' + i);
    words.en.push('b' + i);
  }
  const vocab = [...specials, ...words.es.map((w) => '\u2581' + w), ...words.en.map((w) => '\u2581' + w)];
  writeFileSync(path.join(dir, 'spm.vocab'), vocab.map((p) => p + '\t0\n').join(''));
  const idOf = { es: (k) => 6 + k, en: (k) => 26 + k };
  const counts = {};
  for (const [split, n] of [['train', 120], ['valid', 6], ['test', 8]]) {
    const lines = { es: [], en: [], esIds: [], enIds: [], src: [] };
    for (let s = 0; s < n; s++) {
      const sentence = Array.from({ length: 3 + rand(5) }, () => rand(20));
      for (const lang of ['es', 'en']) {
        lines[lang].push(sentence.map((k) => words[lang][k]).join(' '));
        lines[lang + 'Ids'].push(sentence.map(idOf[lang]).join(' '));
      }
      // every fourth training pair comes from another corpus, which the comparison leaves out
      lines.src.push(split === 'train' && s % 4 === 3 ? 'other' : 'bible');
    }
    for (const lang of ['es', 'en']) {
      writeFileSync(path.join(dir, `${split}.${lang}`), lines[lang].join('\n') + '\n');
      writeFileSync(path.join(dir, `${split}.${lang}.ids`), lines[lang + 'Ids'].join('\n') + '\n');
    }
    writeFileSync(path.join(dir, `${split}.src`), lines.src.join('\n') + '\n');
    counts[split] = lines.src.filter((t) => t === 'bible').length;
  }
  return counts;
}

const isPng = (file) => readFileSync(file).subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));

test('compare_styles.py: three styles, equal budget, BLEU, divergence flag, table, plots, analysis', (t) => {
  requireTorch();
  const tmp = mkdtempSync(path.join(tmpdir(), 'rmt-compare-'));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const data = path.join(tmp, 'data');
  const out = path.join(tmp, 'out');
  mkdirSync(data);
  const counts = writeCorpus(data);
  const args = ['models/compare_styles.py', '--data', data, '--out', out, '--work', path.join(tmp, 'work'),
    '--depths', '2', '--d-model', '16', '--ffn', '32', '--heads', '2', '--updates', '6', '--eval-every', '3',
    '--max-tokens', '120', '--warmup', '2', '--divergence-window', '2', '--measure-tokens', '120',
    '--measure-batches', '1', '--valid-limit', '0', '--test-limit', '0'];
  const r = py(args);
  assert.equal(r.status, 0, `compare_styles.py failed:\n${r.stdout}\n${r.stderr}`);

  const { meta, runs } = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
  assert.equal(meta.examples, 2 * counts.train, 'only the bible pairs, in both directions');
  assert.deepEqual(Object.keys(runs).sort(), STYLES.map((s) => s + '-2'));
  const first = runs['post-2'];
  for (const style of STYLES) {
    const run = runs[style + '-2'];
    assert.equal(run.diverged, false, `${style}: ${run.divergence}`);
    assert.equal(run.updates, 6);
    assert.equal(run.losses.length, 6);
    assert.ok(run.losses.every(Number.isFinite));
    // everything but the style is equal: the same initial weights and the same batches
    assert.deepEqual(run.init_fingerprint, first.init_fingerprint, `${style} starts from other weights`);
    assert.equal(run.target_tokens, first.target_tokens);
    assert.deepEqual(run.curve.map((p) => p.update), [3, 6]);
    assert.ok(run.curve.every((p) => Number.isFinite(p.valid_nll) && p.valid_nll > 0));
    for (const split of ['valid', 'test']) {
      const b = run.bleu_beam[split];
      for (const dir of ['es-en', 'en-es']) assert.ok(b[dir] >= 0 && b[dir] <= 100, `${split} ${dir}: ${b[dir]}`);
      assert.ok(Math.abs(b.mean - (b['es-en'] + b['en-es']) / 2) < 1e-9);
    }
  }
  assert.notDeepEqual(runs['pre-2'].losses, runs['residual-2'].losses, 'the styles must differ');

  const table = readFileSync(path.join(out, 'table.md'), 'utf8');
  for (const name of ['Post-LN', 'Pre-LN', 'ResiDual']) assert.match(table, new RegExp(`\\| E2D2 \\| ${name} \\| no \\|`));
  for (const png of ['bleu_curve.png', 'grad_norms.png', 'cosine.png']) assert.ok(isPng(path.join(out, png)), png);

  const measured = JSON.parse(readFileSync(path.join(out, 'analysis.json'), 'utf8')).results;
  for (const style of STYLES) {
    for (const phase of ['init', 'trained']) {
      const m = measured[style + '-2'][phase];
      assert.equal(m.grad.enc.length, 2);
      assert.equal(m.grad.dec.length, 2);
      assert.equal(m.cos.enc.length, 1);
      assert.ok(m.grad.enc.every((g) => g > 0 && Number.isFinite(g)));
    }
  }
  assert.match(readFileSync(path.join(out, 'analysis.md'), 'utf8'), /\| ResiDual \| 2 \| trained \|/);

  // a second invocation with the same settings reuses the finished runs
  const again = py(args);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.stdout.match(/reusing/g)?.length, 3, again.stdout);
  assert.deepEqual(JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')).runs, runs);
});

test('compare_styles.divergence: non-finite loss, or the loss rising above its start', () => {
  requireTorch();
  const r = py(['-c', `
import sys
sys.path.insert(0, "models")
from residual_mt.compare_styles import divergence as d
nan, inf = float("nan"), float("inf")
print(repr([d([9, 8, 7, 6], 2, 1.0), d([9, 8, nan, 6], 2, 1.0), d([9, 8, 7, inf], 2, 1.0),
            d([9, 9, 10.5, 10.5], 2, 1.0), d([9, 9, 9.9, 9.9], 2, 1.0), d([9, 9, 12], 2, 1.0)]))
`]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "[None, 'non-finite loss at update 3', 'non-finite loss at update 4', " +
    "'loss rose from 9.00 to 10.50 nats by update 4', None, None]");
});
