// A count of the work an in-process translator's engine does, free of
// timing: its decoding steps (js/engine/binding.js Translation.step: one token of
// every unfinished sentence of a batch) and the batches that ran to the end
// (a step that left no sentence unfinished). The test and the translator
// share js/engine/binding.js's module, so the spy sees every step of a translator
// made in this process (not one in a worker).
import { Translation } from '../../js/engine/binding.js';

// Counts while it is on: { steps, finished, on(), off(), when(n, fn) }; on()
// again restarts the count. when(n, fn): fn() runs inside the engine's work,
// right after its n-th step (to cancel at a known point of a translation).
export function stepCounter() {
  const original = Translation.prototype.step;
  let hooks = [];
  const counter = {
    steps: 0,
    finished: 0,
    on() {
      counter.steps = 0;
      counter.finished = 0;
      hooks = [];
      Translation.prototype.step = function countedStep() {
        const left = original.call(this);
        counter.steps++;
        if (left === 0) counter.finished++;
        for (const hook of hooks.filter((h) => h.n === counter.steps)) hook.fn();
        return left;
      };
      return counter;
    },
    when(n, fn) {
      hooks.push({ n, fn });
    },
    off() {
      Translation.prototype.step = original;
      return counter;
    },
  };
  return counter;
}
