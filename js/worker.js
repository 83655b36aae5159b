// The worker side of a translator (a Web Worker in browsers, a
// worker_thread in Node). Messages from the page:
//   { id, type: 'engine', wasm, threads }              -> done once the engine is ready (before its model)
//   { id, type: 'load', wasm, config, weights, spm, threads, returnWeights }
//                                                      -> { id, type: 'weights', weights } (returnWeights: once
//                                                         they are in the engine's memory, or their digest:
//                                                         engine.js loadModel), then done with info;
//                                                         without wasm, on the engine of 'engine'; then
//                                                         { type: 'steps', steps } once its warm-up has run
//   { id, type: 'translate', texts, options, stream }  -> { id, type: 'partial', text }* then done
//   { id, type: 'measure', text, options }             -> done with a token count
//   { id, type: 'detector', model, wasm?, threads }     -> done with { languages, bytes } (a LanguageDetector's
//                                                         model, on the engine of 'engine' or of wasm)
//   { id, type: 'detect', text }                       -> done with { features, probabilities }
//   { id, type: 'cancel', target }                     (no answer: the target job ends with an AbortError)
//   { id, type: 'dispose' }                            -> done; the worker then closes
// Failures answer { id, type: 'error', error: { name, message } }. At start the
// worker posts { type: 'ready' }, then { type: 'lock', lock } once it holds
// its lock (see holdLifeLock): the page need not wait for that to send work.

import { abortError, serializeError } from './errors.js';
import { connect } from './port.js';
import { Runner } from './runner.js';
// Named here too so that all modules are fetched at once, not one level at a time.
import './engine.js';
import './env.js';
import './wasm.js';
import './segment.js';

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
const runner = new Runner();
const cancels = new Map(); // job id -> reason once cancelled

async function handle(msg) {
  const { id, type } = msg;
  switch (type) {
    case 'engine':
      await runner.loadEngine(msg);
      return true;
    case 'load':
      return runner.load({ ...msg, onWeights: msg.returnWeights ? (weights) => port.post({ id, type: 'weights', weights }, weights.buffer ? [weights.buffer] : []) : undefined,
        onWarmedUp: (steps) => port.post({ type: 'steps', steps }) });
    case 'translate':
      cancels.set(id, null);
      try {
        return await runner.translate(msg.texts, msg.options, {
          cancelled: () => cancels.get(id),
          onPartial: msg.stream ? (text) => port.post({ id, type: 'partial', text }) : undefined,
        });
      } finally {
        cancels.delete(id);
      }
    case 'measure':
      return runner.measure(msg.text, msg.options);
    case 'detector':
      return runner.loadDetector(msg);
    case 'detect':
      return runner.detect(msg.text);
    case 'dispose':
      await runner.exclusive(() => runner.dispose());
      return true;
    default:
      throw new Error(`residual-mt: unknown worker message ${type}`);
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
  if (msg.type === 'dispose') port.close();
});
port.post({ type: 'ready' });
const lock = await holdLifeLock();
if (lock) port.post({ type: 'lock', lock });
