// A count of the work an in-process translator's engine does, free of
// timing: its decoding steps (js/engine.js Translation.step: one token of
// every unfinished sentence of a batch) and the batches that ran to the end
// (a step that left no sentence unfinished). The test and the translator
// share js/engine.js's module, so the spy sees every step of a translator
// made in this process (not one in a worker).
import { Translation } from '../../js/engine.js';

// Counts while it is on: { steps, finished, on(), off() }; on() again restarts the count.
export function stepCounter() {
  const original = Translation.prototype.step;
  const counter = {
    steps: 0,
    finished: 0,
    on() {
      counter.steps = 0;
      counter.finished = 0;
      Translation.prototype.step = function countedStep() {
        const left = original.call(this);
        counter.steps++;
        if (left === 0) counter.finished++;
        return left;
      };
      return counter;
    },
    off() {
      Translation.prototype.step = original;
      return counter;
    },
  };
  return counter;
}
