// The JavaScript Marian converter (js/marian/convert.js) against the Python one
// (models/convert_marian.py): one mapping, so both must write the same model
// directory to the byte (config.json, model.safetensors, spm.model) for
// random-weight models of every real shape (tests/lib/marian.js
// MARIAN_SHAPES), float32 and intgemm8, with and without a shortlist, and
// must read every form of special:model.yml in tests/fixtures/marian-yml the
// same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { architecture, convertMarian, parseYml } from '../js/marian/convert.js';
import { MARIAN_SHAPES, PYTHON, convertMarian as convertPython, quantiseMarian, randomMarianModel, randomShortlist, spmPieces,
  writeMarianBin, writeMarianNpz } from './lib/marian.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VOCAB = join(ROOT, 'tests/fixtures/models/residual-text/spm.model');
const TARGET_SPM = join(ROOT, 'tests/fixtures/spm/bpe_unused.model');
const YML = join(ROOT, 'tests/fixtures/marian-yml');
const work = mkdtempSync(join(tmpdir(), 'rmt-marian-js-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

test('every form of special:model.yml in the fixtures maps to the same architecture in Python and JavaScript', async () => {
  const expected = JSON.parse(readFileSync(join(YML, 'expected.json'), 'utf8'));
  const files = readdirSync(YML).filter((f) => f.endsWith('.yml')).sort();
  assert.deepEqual(files, Object.keys(expected).sort());
  const script = `import json, sys
sys.path.insert(0, ${JSON.stringify(join(ROOT, 'models'))})
from residual_mt import marian as c
out = {}
for f in sys.argv[1:]:
    try:
        out[f] = c.architecture(c.parse_yml(open(${JSON.stringify(YML)} + "/" + f, encoding="utf-8").read()))
    except c.ConversionError as e:
        out[f] = {"refused": str(e)}
print(json.dumps(out))`;
  const r = spawnSync(PYTHON, ['-c', script, ...files], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), expected, 'Python');
  for (const f of files) {
    let got;
    try {
      got = architecture(await parseYml(readFileSync(join(YML, f), 'utf8')));
    } catch (err) {
      got = { refused: err.message.replace(/^residual-mt: /, '') };
    }
    assert.deepEqual(got, expected[f], `JavaScript, ${f}`);
  }
  // The three tiny-student texts say one thing.
  assert.deepEqual(expected['yaml-cpp-flow.yml'], expected['yaml-cpp-block.yml']);
  assert.deepEqual(expected['pyyaml.yml'], expected['yaml-cpp-block.yml']);
  assert.match(expected['tied-layers.yml'].refused, /transformer-tied-layers is \[1, 1\]/);
});

// Converts one model both ways and compares the three files.
async function sameBothWays(name, { model, format = 'bin', vocab = VOCAB, shortlist = null, spms = null }) {
  const modelPath = join(work, `${name}.${format}`), out = join(work, name);
  writeFileSync(modelPath, model);
  const extra = ['--source-language', 'es', '--target-language', 'en'];
  if (shortlist) {
    writeFileSync(join(work, `${name}.lex.bin`), shortlist);
    extra.push('--shortlist', join(work, `${name}.lex.bin`));
  }
  if (spms) extra.push('--source-spm', spms[0], '--target-spm', spms[1]);
  let t = performance.now();
  const r = convertPython(modelPath, vocab, out, extra);
  assert.equal(r.status, 0, r.stderr);
  const pythonMs = performance.now() - t;
  t = performance.now();
  const js = await convertMarian({
    model, vocab: readFileSync(vocab), shortlist, sourceSpm: spms && readFileSync(spms[0]), targetSpm: spms && readFileSync(spms[1]),
  }, { file: `${name}.${format}`, sourceLanguage: 'es', targetLanguage: 'en' });
  const jsMs = performance.now() - t;
  assert.equal(js.config, readFileSync(join(out, 'config.json'), 'utf8'), `${name}: config.json`);
  assert.ok(Buffer.from(js.spm).equals(readFileSync(join(out, 'spm.model'))), `${name}: spm.model`);
  const weights = readFileSync(join(out, 'model.safetensors'));
  assert.ok(Buffer.from(js.weights).equals(weights), `${name}: model.safetensors`);
  console.log(`# ${name}: identical (${(weights.length / 1e6).toFixed(1)} MB); Python ${(pythonMs / 1000).toFixed(1)} s, JavaScript ${(jsMs / 1000).toFixed(1)} s`);
  return JSON.parse(js.config);
}

const STUDENT_FORMS = { tiny: 'flow', base: 'yaml-cpp', 'base-memory': 'pyyaml' };

for (const [shape, form] of Object.entries(STUDENT_FORMS)) {
  test(`a ${shape} student (model.yml in ${form} form): the same model directory from Python and JavaScript, float32 and intgemm8, with and without a shortlist`, async () => {
    const marian = randomMarianModel({ ...MARIAN_SHAPES[shape], seed: 71, yml: form });
    const shortlist = randomShortlist({ vocab: 150, first: 10, best: 6, seed: 72 });
    const f32 = await sameBothWays(`${shape}-f32`, { model: writeMarianBin(marian), shortlist });
    const s = MARIAN_SHAPES[shape];
    assert.deepEqual([f32.d_model, f32.ffn_dim, f32.encoder_layers, f32.decoder_layers, f32.n_heads, f32.decoder_self],
      [s.dim, s.ffn, s.encDepth, s.decDepth, s.heads, 'ssru']);
    assert.equal(f32.shortlist_first, 10);
    const int8 = await sameBothWays(`${shape}-int8`, { model: writeMarianBin(quantiseMarian(marian)) });
    assert.equal(int8.shortlist_first, null);
  });
}

test('an OPUS-MT Transformer-base (.npz, vocab.yml, separate source and target spm): the same model directory from Python and JavaScript', async () => {
  // Target-only pieces (a target spm of its own) become UNUSED pieces of the one spm.model.
  const pieces = spmPieces(readFileSync(VOCAB));
  const extra = spmPieces(readFileSync(TARGET_SPM)).filter((p) => !pieces.includes(p)).slice(0, 50);
  const quote = (p) => JSON.stringify(p).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const ymlPath = join(work, 'opus.vocab.yml');
  writeFileSync(ymlPath, [...pieces, ...extra].map((p, id) => `${quote(p)}: ${id}\n`).join(''));
  const marian = randomMarianModel({ ...MARIAN_SHAPES['opus-mt'], seed: 73, vocab: pieces.length + extra.length });
  const config = await sameBothWays('opus-mt', { model: writeMarianNpz(marian), format: 'npz', vocab: ymlPath, spms: [VOCAB, TARGET_SPM] });
  assert.deepEqual([config.d_model, config.ffn_dim, config.encoder_layers, config.decoder_layers, config.decoder_self, config.activation],
    [512, 2048, 6, 6, 'attention', 'swish']);
});
