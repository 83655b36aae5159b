// Two builds of the engine side by side in one Node process, one thread each,
// on tests/bench/speed_shapes.js's models and translations (OPUS-MT's base
// shape in float32 and int8, Firefox's base-memory student): the rounds
// alternate (A B, then B A, ...) so that both see the same minutes of a shared
// machine, and each figure is the median of its rounds. Prints ms per output
// token of each, A's time / B's (above 1: B is faster), and whether the two
// gave the same output ids.
//
//   node tests/bench/engine_ab.js A.wasm B.wasm [--rounds N] [--only TEXT] [--beam N]   (rounds: 5; TEXT: in the models' labels;
//                                                                  beam: 1, greedy)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Engine } from '../../js/engine/binding.js';
import { calls, median, run, sentencesOf, speedVariants } from './speed_shapes.js';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const rounds = Number(option('--rounds', 5)), only = option('--only', ''), beam = Number(option('--beam', 1));
const wasms = args.filter((a, i) => !a.startsWith('--') && !['--rounds', '--only', '--beam'].includes(args[i - 1]));
if (wasms.length !== 2 || !(rounds >= 1)) {
  console.error('usage: node tests/bench/engine_ab.js A.wasm B.wasm [--rounds N] [--only TEXT] [--beam N]');
  process.exit(2);
}
const engines = await Promise.all(wasms.map((w) => Engine.load(w, { threads: 1 })));
const work = mkdtempSync(join(tmpdir(), 'rmt-engine-ab-'));
console.log(`A: ${wasms[0]}\nB: ${wasms[1]}\n${rounds} rounds, medians; ratio = A's time / B's`);
try {
  for (const v of speedVariants(work).filter((v) => v.label.includes(only))) {
    const models = engines.map((e) => v.load(e));
    for (const batched of [false, true]) {
      const groups = calls(sentencesOf(v), batched);
      models.forEach((m) => run(m, groups.slice(0, 2), beam));  // warm-up
      const ms = [[], []], outputs = [];
      for (let r = 0; r < rounds; r++) {
        for (const i of r % 2 ? [1, 0] : [0, 1]) {
          const res = run(models[i], groups, beam);
          ms[i].push(res.ms / res.tokens);
          outputs[i] = res.ids;
        }
      }
      const [a, b] = ms.map(median);
      const same = outputs[0].filter((ids, i) => ids.join() === outputs[1][i].join()).length;
      console.log(`${v.label}, beam ${beam}, ${batched ? 'batched' : 'one a call'}: A ${a.toFixed(3)} ms/token, B ${b.toFixed(3)}, ` +
        `ratio ${(a / b).toFixed(3)} (rounds: ${ms[0].map((x, i) => (x / ms[1][i]).toFixed(2)).join(' ')}); ` +
        `${same}/${outputs[0].length} outputs identical`);
    }
    models.forEach((m) => m.dispose());
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  engines.forEach((e) => e.dispose());
}
