// Stream and signal helpers the runtime may lack.

// The chunks of a ReadableStream, read with its reader: leaving early (a
// bound passed, another file failed) cancels it, so a connection is closed
// rather than read to its end. onError(err): the error a failed read throws.
export async function* streamChunks(stream, onError = (err) => err) {
  const reader = stream.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) { finished = true; return; }
      yield value;
    }
  } catch (err) {
    finished = true;
    throw onError(err);
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock?.();
  }
}

// `for await (const chunk of stream)` where ReadableStream lacks it (Safari):
// leaving the loop early cancels the stream, as the standard iterator does.
export function asyncIterable(stream) {
  if (typeof stream[Symbol.asyncIterator] === 'function') return stream;
  stream[Symbol.asyncIterator] = () => streamChunks(stream);
  return stream;
}

// Calls callback(reason) when `signal` aborts; returns a function that takes
// the callback back. However many calls wait on one signal at once, it has
// one 'abort' listener, which calls theirs (one listener each would pile up:
// Node warns past 10 on one signal).
const waiting = new WeakMap(); // AbortSignal -> Set of callbacks
export function onAbort(signal, callback) {
  let callbacks = waiting.get(signal);
  if (!callbacks) {
    callbacks = new Set();
    waiting.set(signal, callbacks);
    signal.addEventListener('abort', () => {
      waiting.delete(signal);
      for (const fn of callbacks) fn(signal.reason);
    }, { once: true });
  }
  callbacks.add(callback);
  return () => { callbacks.delete(callback); };
}

// A task later: the API settles a create() in a task of its own, after the
// last progress event, so code that aborts on that event still sees it reject.
export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

// `promise`, or signal.reason once the signal aborts (work shared by several
// callers goes on for the others).
export function untilAborted(promise, signal) {
  if (!signal) return promise;
  let off = null;
  const aborted = new Promise((_, reject) => {
    signal.throwIfAborted();
    off = onAbort(signal, reject);
  });
  return Promise.race([promise, aborted]).finally(() => off?.());
}

export function anySignal(signals) {
  const list = signals.filter(Boolean);
  if (list.length <= 1) return list[0];
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(list);
  const controller = new AbortController();
  for (const s of list) {
    if (s.aborted) { controller.abort(s.reason); break; }
    onAbort(s, (reason) => controller.abort(reason));
  }
  return controller.signal;
}

// A ReadableStream (async-iterable) of what generate(signal) yields;
// cancelling the stream aborts `signal`, which ends the work in flight.
export function streamOf(generate) {
  const cancelled = new AbortController();
  let iterator;
  return asyncIterable(new ReadableStream({
    async pull(controller) {
      iterator ??= generate(cancelled.signal);
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      cancelled.abort(reason);
    },
  }));
}

// A call's signal: options.signal (which must be an AbortSignal) joined with
// `owner` (a translator's or detector's destruction); throws the reason when
// either has aborted already.
export function callSignal(owner, options) {
  if (options?.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new TypeError('residual-mt: options.signal must be an AbortSignal');
  }
  const signal = anySignal([owner, options?.signal]);
  signal.throwIfAborted();
  return signal;
}
