// The translations of the engine's speed measurements, with no Node module,
// so that a Chromium page runs them as Node does (tests/bench/engine_ab.js
// --chromium): random sentences, one a call or BATCH a call sorted by
// length, greedy or a beam, every output forced to OUT_LEN tokens where the
// search allows it; and two models in alternating rounds.
import { randomSentences } from './random.js';

export const SENTENCES = 32, BATCH = 16, OUT_LEN = 20;

// The random sentences (8-32 tokens) a model of `vocab` words translates.
export const sentencesOf = ({ vocab }) => randomSentences(SENTENCES, vocab, 11);

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

// Models A and B on the same calls after a warm-up, rounds alternating (A B,
// then B A, ...) so that both see the same minutes of a shared machine: one
// line with each one's median ms per output token, A's over B's, and how
// many outputs are identical.
export function alternate(label, models, groups, rounds, beam) {
  models.forEach((m) => run(m, groups.slice(0, 2), beam));
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
  return `${label}: A ${a.toFixed(3)} ms/token, B ${b.toFixed(3)}, ratio ${(a / b).toFixed(3)} ` +
    `(rounds: ${ms[0].map((x, i) => (x / ms[1][i]).toFixed(2)).join(' ')}); ${same}/${outputs[0].length} outputs identical`;
}
