// Rule of js/engine/: the worker side (one engine: the binding over the C
// API, its runner, the text pipeline, its threads). Imports text/, load/ (a
// kept file's bytes) and util/, never host/ or api/: the page side reaches
// it only through this protocol.
//
// What the page side asks of an engine and what comes back: every message
// between a backend (js/host/backends.js) and a Runner, named once here. The
// in-process backend calls dispatch() directly; the worker backend posts
// the same requests to js/worker.js, which calls dispatch() there. Each
// request carries { id, slot, type, ...payload } in a worker (slot: which
// of the worker's engines, one Runner each):
//   engine     { wasm, threads }            -> done once the engine is ready (before its model)
//   load       { wasm?, config, weights, spm, threads, returnWeights }
//                                            -> weights { weights }* (returnWeights: once they are in
//                                               the engine's memory, or their digest: binding.js
//                                               loadModel), then done with the Runner's info; without
//                                               wasm, on the engine of 'engine'; then steps { steps }
//                                               (no id) once its warm-up has run
//   translate  { texts, options, stream }   -> partial { text }* (stream), then done with the results
//   measure    { text, options }            -> done with a token count
//   detector   { model, wasm?, threads }    -> done with { languages, bytes } (a LanguageDetector's
//                                               model, on the engine of 'engine' or of wasm)
//   detect     { text }                     -> done with { features, probabilities }
// and two that are the worker's own (the in-process backend calls the
// Runner itself):
//   cancel     { target, message }          (no answer: the target job ends with an AbortError)
//   dispose    { close }                    -> done once that slot's engine is freed; with close (its
//                                               last engine) every engine is, and the worker closes
// A failure answers error { error: { name, message } } (errors.js
// serializeError). The worker says ready (no id) once it listens, then lock
// { lock } once it holds its life lock (worker.js holdLifeLock).

// The requests a Runner answers: run(runner, payload, hooks) with hooks
// { onWeights, onWarmedUp, cancelled, onPartial } (the sender's end of
// each), and the payload's buffers that move rather than copy.
export const REQUESTS = Object.freeze({
  engine: {
    run: (runner, { wasm, threads }) => runner.loadEngine({ wasm, threads }),
    moves: ({ wasm }) => [wasm],
  },
  load: {
    run: (runner, { wasm, config, weights, spm, threads }, { onWeights, onWarmedUp }) =>
      runner.load({ wasm, config, weights, spm, threads, onWeights, onWarmedUp }),
    moves: ({ wasm, weights, spm }) => [wasm, weights, spm],
  },
  translate: {
    run: (runner, { texts, options, stream }, { cancelled, onPartial }) =>
      runner.translate(texts, options, { cancelled, onPartial: stream ? onPartial : undefined }),
  },
  measure: { run: (runner, { text, options }) => runner.measure(text, options) },
  detector: {
    run: (runner, { model, wasm, threads }) => runner.loadDetector({ model, wasm, threads }),
    moves: ({ model, wasm }) => [model, wasm],
  },
  detect: { run: (runner, { text }) => runner.detect(text) },
});

// The requests that start an engine in a slot (any other needs one there).
export const STARTS_ENGINE = Object.freeze(['engine', 'load', 'detector']);

// Runs request `type` on `runner`; resolves with its answer.
export function dispatch(runner, type, payload, hooks = {}) {
  const request = REQUESTS[type];
  if (!request) throw new Error(`residual-mt: unknown engine request ${type}`);
  return request.run(runner, payload, hooks);
}

// The buffers of a request's payload that move to the worker (its bytes,
// never a compiled WebAssembly.Module, which is shared).
export function transferList(type, payload) {
  const moves = REQUESTS[type]?.moves?.(payload) ?? [];
  return moves.filter((a) => ArrayBuffer.isView(a)).map((a) => a.buffer);
}
