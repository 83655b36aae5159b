// Our engine against Bergamot's WASM build on the same random-weight Marian
// models, side by side in one process, both on one thread: the shapes of
// Firefox Translations' students as Firefox runs them (intgemm8 weights and a
// 50/50 lexical shortlist; Bergamot in int8, int8shiftAll; ours in int8 too,
// the weights kept as they are stored) — tiny (d256, FFN 1536, 6 encoder and
// 2 SSRU decoder layers) and base-memory (d384, FFN 1536, 6 and 4) — and,
// float32 in both, the tiny student and a small transformer. Greedy and beam
// 4, one sentence per call (Bergamot's latency setting) and the sentences in
// one call (batched); the time per sentence with the ratio (Bergamot's time /
// ours: above 1, ours is faster), how many outputs are identical, and each
// model's memory after load.
//
//   node tests/bench/marian_bench.js [--quick]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../../js/engine/binding.js';
import { bergamotTranslate, convertMarian, loadConverted, quantiseMarian, randomMarianModel, randomShortlist, writeMarianBin } from '../lib/marian.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 1 : 3;
const VOCAB = join(root, 'tests/fixtures/spm/bpe_unused.model');  // 4000 pieces
const vocab = readFileSync(VOCAB);
const corpus = readFileSync(join(root, 'tests/fixtures/spm/corpus.txt'), 'utf8').split('\n')
  .filter((line) => line.length > 20 && line.length < 120 && /^[A-Za-z][ -~]*$/.test(line) && !/  |[.!?:;] ./.test(line))
  .slice(0, quick ? 8 : 24);  // one plain ASCII sentence each: Bergamot splits sentences, and the corpus
                              // also holds tokenizer torture lines

const TINY = { dim: 256, ffn: 1536, heads: 8, encDepth: 6, decDepth: 2, decoder: 'ssru', activation: 'relu' };
const BASE_MEMORY = { dim: 384, ffn: 1536, heads: 8, encDepth: 6, decDepth: 4, decoder: 'ssru', activation: 'relu' };
const MODELS = [
  ['tiny student, intgemm8, shortlist 50/50 (both in int8)', { ...TINY, shortlist: true, int8: true }],
  ['base-memory student, intgemm8, shortlist 50/50 (both in int8)', { ...BASE_MEMORY, shortlist: true, int8: true }],
  ['tiny student, float32', TINY],
  ['transformer (d256, ffn 1024, 3+3, swish), float32', { dim: 256, ffn: 1024, heads: 4, encDepth: 3, decDepth: 3, activation: 'swish' }],
];

const work = mkdtempSync(join(tmpdir(), 'rmt-marian-bench-'));
const engine = await Engine.load(undefined, { threads: 1 });  // Bergamot runs on one thread too
// Short outputs like a real model's: factor 1 (Bergamot's worker uses 2).
const LEN = { maxLenA: 1, maxLenB: 0, minLen: 0, lenpen: 1 };
try {
  for (const [name, shape] of MODELS) {
    const marian = randomMarianModel({ ...shape, vocab: 4000, seed: 7 });
    const bin = writeMarianBin(shape.int8 ? quantiseMarian(marian) : marian);
    writeFileSync(join(work, 'model.bin'), bin);
    const shortlist = shape.shortlist ? randomShortlist({ vocab: 4000, first: 50, best: 50, seed: 8 }) : null;
    if (shortlist) writeFileSync(join(work, 'lex.bin'), shortlist);
    const r = convertMarian(join(work, 'model.bin'), VOCAB, join(work, 'out'), shortlist ? ['--shortlist', join(work, 'lex.bin')] : []);
    if (r.status !== 0) throw new Error(r.stderr);
    const model = loadConverted(engine, join(work, 'out'));
    console.log(`${name}: ours ${(model.bytes / 2 ** 20).toFixed(1)} MB of weights in memory after load`);
    for (const [beam, batch] of [[1, false], [4, false], [1, true], [4, true]]) {
      const options = { 'beam-size': beam, 'max-length-factor': 1, 'gemm-precision': shape.int8 ? 'int8shiftAll' : 'float32' };
      // The fastest of ROUNDS runs of each engine (per sentence, or of the
      // whole batch), the two alternating: the machine is shared, and the
      // minimum is what each can do when nothing interferes. Bergamot's first
      // call of a run also prepares the model: a call of its own, left out.
      const best = (a, b) => (a ? a.map((t, i) => Math.min(t, b[i])) : b);
      let bergamotTimes = null, oursTimes = null, theirs, ours;
      for (let round = 0; round < ROUNDS; round++) {
        const times = [];
        await bergamotTranslate({ model: bin, vocab, shortlist, options }, corpus.slice(0, 1));
        theirs = await bergamotTranslate({ model: bin, vocab, shortlist, options, batch }, corpus, times);
        bergamotTimes = best(bergamotTimes, times);
        model.translateTexts(corpus.slice(0, 1), { beam, ...LEN });
        const ourTimes = [];
        ours = [];
        for (const group of batch ? [corpus] : corpus.map((text) => [text])) {
          const t0 = performance.now();
          const hyps = model.translateTexts(group, { beam, ...LEN });
          ourTimes.push(performance.now() - t0);
          ours.push(...hyps.map((h) => model.detokenize(h[0].ids)));
        }
        oursTimes = best(oursTimes, ourTimes);
      }
      const sum = (a) => a.reduce((x, y) => x + y, 0), bergamotMs = sum(bergamotTimes), oursMs = sum(oursTimes);
      const same = ours.filter((t, i) => t === theirs[i]).length;
      console.log(`${name}, beam ${beam}, ${batch ? 'batched' : 'one a call'}: ours ${(oursMs / corpus.length).toFixed(2)} ms/sentence, Bergamot ` +
        `${(bergamotMs / corpus.length).toFixed(2)} ms/sentence, ratio ${(bergamotMs / oursMs).toFixed(2)}; ` +
        `${same}/${corpus.length} outputs identical`);
    }
    model.dispose();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
