// The worker side of the engines (a Web Worker in browsers, a worker_thread
// in Node): a translation model's and the language detector's, each a Runner
// of its own, named by the `slot` of every message (host/backends.js shares
// one worker between them). The messages are js/engine/protocol.js's: each
// request goes to the slot's Runner through its dispatch(), as in-process.

import { abortError, serializeError } from './util/errors.js';
import { connect } from './util/port.js';
import { Runner } from './engine/runner.js';
import { STARTS_ENGINE, dispatch } from './engine/protocol.js';
// Named here too so that all modules are fetched at once, not one level at a time.
import './engine/binding.js';
import './util/env.js';
import './engine/wasm.js';
import './text/segment.js';

// Browsers tell a page nothing when its worker dies (closed, crashed): the
// page learns it from this lock, which is released with the worker. Resolves
// with the lock's name once held (null where there are no Web Locks: Node,
// whose worker_threads report an exit themselves).
async function holdLifeLock() {
  const locks = typeof WorkerGlobalScope !== 'undefined' ? globalThis.navigator?.locks : undefined;
  if (!locks) return null;
  const name = `residual-mt-worker-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await new Promise((held) => { locks.request(name, () => { held(); return new Promise(() => {}); }); });
  return name;
}

const port = await connect();
const runners = new Map(); // slot -> Runner
const disposals = new Set(); // the engines being freed
const cancels = new Map(); // job id -> reason once cancelled

// The slot's Runner: made by the messages that load an engine, a model or a
// detector; any other message needs one there.
function runnerOf({ slot, type }) {
  let runner = runners.get(slot);
  if (!runner && STARTS_ENGINE.includes(type)) runners.set(slot, runner = new Runner());
  if (!runner) throw new Error(`residual-mt: no engine in the worker's slot ${slot} (freed?)`);
  return runner;
}

// Frees the slot's engine once its jobs have run; resolves then.
function dispose(slot) {
  const runner = runners.get(slot);
  if (!runner) return Promise.resolve();
  runners.delete(slot);
  const done = runner.exclusive(() => runner.dispose());
  disposals.add(done);
  done.finally(() => disposals.delete(done)).catch(() => {});
  return done;
}

async function handle(msg) {
  const { id, type } = msg;
  if (type === 'dispose') {
    const freed = [dispose(msg.slot)];
    // The last engine: the others too (a dispose sent without waiting), before the worker closes.
    if (msg.close) freed.push(...[...runners.keys()].map(dispose), ...disposals);
    await Promise.allSettled(freed);
    return true;
  }
  // The sender's end of the request's hooks: its messages back.
  const hooks = {
    onWeights: msg.returnWeights ? (weights) => port.post({ id, type: 'weights', weights }, weights.buffer ? [weights.buffer] : []) : undefined,
    onWarmedUp: (steps) => port.post({ type: 'steps', steps }),
    onPartial: (text) => port.post({ id, type: 'partial', text }),
    cancelled: () => cancels.get(id),
  };
  cancels.set(id, null);
  try {
    return await dispatch(runnerOf(msg), type, msg, hooks);
  } finally {
    cancels.delete(id);
  }
}

port.listen(async (msg) => {
  if (msg.type === 'cancel') {
    if (cancels.has(msg.target)) cancels.set(msg.target, abortError(msg.message));
    return;
  }
  try {
    const value = await handle(msg);
    port.post({ id: msg.id, type: 'done', value });
  } catch (err) {
    port.post({ id: msg.id, type: 'error', error: serializeError(err) });
  }
  if (msg.type === 'dispose' && msg.close) port.close();
});
port.post({ type: 'ready' });
const lock = await holdLifeLock();
if (lock) port.post({ type: 'lock', lock });
