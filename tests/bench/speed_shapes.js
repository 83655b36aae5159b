// The inputs of the engine's speed measurements (tests/bench/profile.js,
// tests/bench/engine_ab.js): random-weight models of OPUS-MT's base shape
// (float32 and int8) and Firefox's base-memory student (intgemm8 with a
// shortlist, converted from Marian's format); the translations they run are
// speed_runs.js's, which a Chromium page imports too.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { randomModel } from './random.js';
import { MARIAN_SHAPES, convertMarian, convertedFiles, quantiseMarian, randomMarianModel, randomShortlist, writeMarianBin } from '../lib/marian.js';

export { BATCH, OUT_LEN, SENTENCES, calls, median, run, sentencesOf } from './speed_runs.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

const OPUS_MT = {
  format: 'residual-mt/1', style: 'post', activation: 'swish', positions: 'marian', d_model: 512, ffn_dim: 2048,
  n_heads: 8, encoder_layers: 6, decoder_layers: 6, vocab_size: 8000, max_positions: 256,
};

// Each model of the measurements, made in folder `work`: { label, int8, vocab,
// files() -> what Engine.loadModel takes, load(engine) -> model }.
export function speedVariants(work) {
  const opus = (int8) => ({
    label: `OPUS-MT base (d 512, FFN 2048, 6 + 6, swish, 8,000 words), ${int8 ? 'int8' : 'float32'}`,
    int8, vocab: OPUS_MT.vocab_size, files: () => randomModel(OPUS_MT, 3, { int8 }),
  });
  // Firefox's base-memory student as marian_bench.js builds it (the bench's 4,000-piece vocabulary).
  const marian = randomMarianModel({ ...MARIAN_SHAPES['base-memory'], vocab: 4000, seed: 7 });
  writeFileSync(join(work, 'model.bin'), writeMarianBin(quantiseMarian(marian)));
  writeFileSync(join(work, 'lex.bin'), randomShortlist({ vocab: 4000, first: 50, best: 50, seed: 8 }));
  const r = convertMarian(join(work, 'model.bin'), join(root, 'tests/fixtures/spm/bpe_unused.model'), join(work, 'out'),
    ['--shortlist', join(work, 'lex.bin')]);
  if (r.status !== 0) throw new Error(r.stderr);
  const baseMemory = {
    label: 'Firefox base-memory student (d 384, FFN 1536, 6 + 4 SSRU, ReLU), intgemm8, shortlist 50/50',
    int8: true, vocab: 4000, files: () => convertedFiles(join(work, 'out')),
  };
  return [opus(false), opus(true), baseMemory].map((v) => ({ ...v, load: (engine) => engine.loadModel(v.files()) }));
}
