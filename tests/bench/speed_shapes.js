// The inputs of the engine's speed measurements (tests/bench/profile.js,
// tests/bench/engine_ab.js): random-weight models of OPUS-MT's base shape
// (float32 and int8) and Firefox's base-memory student (intgemm8 with a
// shortlist, converted from Marian's format), and translations of random
// sentences, one a call or BATCH a call sorted by length, greedy, every
// output forced to OUT_LEN tokens where the search allows it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { randomModel, randomSentences } from './random.js';
import { MARIAN_SHAPES, convertMarian, loadConverted, quantiseMarian, randomMarianModel, randomShortlist, writeMarianBin } from '../lib/marian.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const SENTENCES = 32, BATCH = 16, OUT_LEN = 20;

const OPUS_MT = {
  format: 'residual-mt/1', style: 'post', activation: 'swish', positions: 'marian', d_model: 512, ffn_dim: 2048,
  n_heads: 8, encoder_layers: 6, decoder_layers: 6, vocab_size: 8000, max_positions: 256,
};

// Each model of the measurements, made in folder `work`: { label, int8, vocab, load(engine) -> model }.
export function speedVariants(work) {
  const opus = (int8) => ({
    label: `OPUS-MT base (d 512, FFN 2048, 6 + 6, swish, 8,000 words), ${int8 ? 'int8' : 'float32'}`,
    int8, vocab: OPUS_MT.vocab_size, load: (engine) => engine.loadModel(randomModel(OPUS_MT, 3, { int8 })),
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
    int8: true, vocab: 4000, load: (engine) => loadConverted(engine, join(work, 'out')),
  };
  return [opus(false), opus(true), baseMemory];
}

// The random sentences (8-32 tokens) model variant v translates.
export const sentencesOf = (v) => randomSentences(SENTENCES, v.vocab, 11);

// The sentences in calls: one a call, or BATCH a call sorted by length.
export function calls(sentences, batched) {
  if (!batched) return sentences.map((s) => [s]);
  const sorted = [...sentences].sort((a, b) => a.length - b.length), out = [];
  for (let i = 0; i < sorted.length; i += BATCH) out.push(sorted.slice(i, i + BATCH));
  return out;
}

const SEARCH = { maxLenA: 0, maxLenB: OUT_LEN, minLen: OUT_LEN };

// Translates the calls (greedy, or at `beam`); { ms, tokens, ids } (tokens: output tokens with </s>; ids: each output's).
export function run(model, groups, beam = 1) {
  let tokens = 0;
  const ids = [];
  const t0 = performance.now();
  for (const group of groups) {
    for (const hyps of model.translateIds(group, { ...SEARCH, beam, batch: group.length })) {
      tokens += hyps[0].ids.length + 1;
      ids.push(hyps[0].ids);
    }
  }
  return { ms: performance.now() - t0, tokens, ids };
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
