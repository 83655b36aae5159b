// Our engine against Bergamot's WASM build on the same random-weight Marian
// models, side by side in one process: a Firefox-Translations-"tiny"-shaped
// student (SSRU decoder), without and with a 50/50 lexical shortlist, and a
// small transformer, float32 in both, greedy and beam 4, one sentence per call
// (Bergamot's latency setting); and Bergamot in int8 on intgemm8 weights. Both engines run
// single-threaded; the outputs are checked equal, then the time per sentence
// is reported with the ratio (Bergamot's time / ours: above 1, ours is faster).
//
//   node tests/bench/marian_bench.js [--quick]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Engine } from '../../js/engine.js';
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
const MODELS = [
  ['tiny student (d256, ffn 1536, 6 enc, 2 SSRU dec)', TINY],
  ['tiny student, shortlist 50/50', { ...TINY, shortlist: true }],
  // As Firefox runs it: intgemm8 weights, Bergamot in int8 (int8shiftAll), ours
  // in float32 on the dequantised weights (outputs may differ: marian_int8.js).
  ['tiny student, shortlist 50/50, intgemm8 (Bergamot in int8)', { ...TINY, shortlist: true, int8: true }],
  ['transformer (d256, ffn 1024, 3+3, swish)', { dim: 256, ffn: 1024, heads: 4, encDepth: 3, decDepth: 3, activation: 'swish' }],
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
    for (const beam of [1, 4]) {
      const options = { 'beam-size': beam, 'max-length-factor': 1, 'gemm-precision': shape.int8 ? 'int8shiftAll' : 'float32' };
      // Per sentence, the fastest of ROUNDS runs of each engine, the two
      // alternating: the machine is shared, and the minimum is what each can
      // do when nothing interferes. Bergamot's first sentence of a run also
      // prepares the model: left out.
      const best = (a, b) => (a ? a.map((t, i) => Math.min(t, b[i])) : b);
      let bergamotTimes = null, oursTimes = null, theirs, ours;
      for (let round = 0; round < ROUNDS; round++) {
        const times = [];
        theirs = (await bergamotTranslate({ model: bin, vocab, shortlist, options }, [corpus[0], ...corpus], times)).slice(1);
        bergamotTimes = best(bergamotTimes, times.slice(1));
        model.translateTexts(corpus.slice(0, 1), { beam, ...LEN });
        const ourTimes = [];
        ours = corpus.map((text) => {
          const t0 = performance.now();
          const out = model.translateTexts([text], { beam, ...LEN })[0][0].text;
          ourTimes.push(performance.now() - t0);
          return out;
        });
        oursTimes = best(oursTimes, ourTimes);
      }
      const sum = (a) => a.reduce((x, y) => x + y, 0), bergamotMs = sum(bergamotTimes), oursMs = sum(oursTimes);
      const same = ours.filter((t, i) => t === theirs[i]).length;
      console.log(`${name}, beam ${beam}: ours ${(oursMs / corpus.length).toFixed(1)} ms/sentence, Bergamot ` +
        `${(bergamotMs / corpus.length).toFixed(1)} ms/sentence, ratio ${(bergamotMs / oursMs).toFixed(2)}; ` +
        `${same}/${corpus.length} outputs identical`);
    }
    model.dispose();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
