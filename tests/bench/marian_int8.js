// How far our float32 run of an intgemm8 Marian model is from Bergamot's int8
// run of it. The converter dequantises the weights exactly as Marian reads
// them (tests/marian.test.js checks this to the bit); Bergamot then also
// quantises every activation matrix to int8 (int8shiftAll: per product, one
// scale, shifted to uint8), which we do not, so the two disagree wherever that
// rounding changes a choice. Random-weight models are the worst case (nearly
// flat output distributions): the figures bound the effect, not estimate it
// for a trained model. Greedy, one sentence a call, max-length-factor 1.
//
//   node tests/bench/marian_int8.js
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../../js/engine/binding.js';
import { bergamotTranslate, convertMarian, loadConverted, quantiseMarian, randomMarianModel, writeMarianBin } from '../lib/marian.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const VOCAB = join(root, 'tests/fixtures/spm/bpe_unused.model');  // 4000 pieces: intgemm wants multiples of 8
const vocab = readFileSync(VOCAB);
const TEXTS = readFileSync(join(root, 'tests/fixtures/spm/corpus.txt'), 'utf8').split('\n')
  .filter((line) => line.length > 20 && line.length < 120 && /^[A-Za-z][ -~]*$/.test(line) && !/  |[.!?:;] ./.test(line))
  .slice(0, 24);

const work = mkdtempSync(join(tmpdir(), 'rmt-marian-int8-'));
const engine = await Engine.load(undefined, { threads: 1 });  // Bergamot runs on one thread too
try {
  for (const [name, shape] of [['transformer relu', { seed: 11 }], ['transformer swish', { seed: 12, activation: 'swish' }],
    ['SSRU decoder', { seed: 13, decoder: 'ssru' }]]) {
    const bin = writeMarianBin(quantiseMarian(randomMarianModel({ ...shape, vocab: 4000, dim: 64, ffn: 256 })));
    writeFileSync(join(work, 'model.bin'), bin);
    const r = convertMarian(join(work, 'model.bin'), VOCAB, join(work, 'out'));
    if (r.status !== 0) throw new Error(r.stderr);
    const model = loadConverted(engine, join(work, 'out'));
    const theirs = await bergamotTranslate({ model: bin, vocab, options: { 'gemm-precision': 'int8shiftAll', 'max-length-factor': 1 } }, TEXTS);
    const ours = model.translateTexts(TEXTS, { beam: 1, maxLenA: 1, maxLenB: 0, minLen: 0, lenpen: 1 }).map((h) => h[0].text);
    let same = 0, prefix = 0, total = 0;
    TEXTS.forEach((_, i) => {
      same += ours[i] === theirs[i];
      const a = model.tokenize(ours[i]), b = model.tokenize(theirs[i]);
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      prefix += k;
      total += Math.max(a.length, b.length);
    });
    console.log(`${name} (d64, 2+2, random weights), greedy: ${same}/${TEXTS.length} outputs identical, ` +
      `common prefixes ${prefix}/${total} tokens`);
    model.dispose();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
