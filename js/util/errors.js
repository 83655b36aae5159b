// Errors as the Translator API names them (DOMException where there is one),
// and their passage through a worker's messages.

export function makeError(name, message) {
  if (typeof DOMException === 'function') return new DOMException(message, name);
  const err = new Error(message);
  err.name = name;
  return err;
}

export function abortError(message = 'The operation was aborted') {
  return makeError('AbortError', message);
}

export function notSupported(message) {
  return makeError('NotSupportedError', `residual-mt: ${message}`);
}

// A translation that failed for a reason the caller cannot fix (the model
// gave no translation, the engine's worker died): the API's UnknownError.
export function unknownError(message) {
  return makeError('UnknownError', message);
}

// Output withheld because it could do harm: the Translator API names this
// NotReadableError ("the output was filtered by the user agent").
export function notReadable(message) {
  return makeError('NotReadableError', `residual-mt: ${message}`);
}

// The input is larger than the translator's inputQuota: a QuotaExceededError
// (the newer Web IDL class where the browser has it) with requested and quota.
export function quotaExceeded(requested, quota) {
  const message = `residual-mt: the input needs ${requested} tokens, over the translator's inputQuota of ${quota}`;
  if (typeof globalThis.QuotaExceededError === 'function') return new globalThis.QuotaExceededError(message, { requested, quota });
  const err = makeError('QuotaExceededError', message);
  Object.defineProperties(err, { requested: { value: requested, enumerable: true }, quota: { value: quota, enumerable: true } });
  return err;
}

// Errors cross a worker boundary as plain data.
export function serializeError(err) {
  const data = { name: err?.name ?? 'Error', message: err?.message ?? String(err) };
  for (const key of ['translations', 'code', 'requested', 'quota']) if (err?.[key] !== undefined) data[key] = err[key];
  return data;
}

const DOM_NAMES = new Set(['AbortError', 'NotSupportedError', 'InvalidStateError', 'NetworkError', 'OperationError',
  'NotAllowedError', 'UnknownError']);

export function reviveError(data) {
  if (data.name === 'QuotaExceededError') return quotaExceeded(data.requested, data.quota);
  let err;
  if (DOM_NAMES.has(data.name)) err = makeError(data.name, data.message);
  else {
    const Ctor = { TypeError, RangeError }[data.name] ?? Error;
    err = new Ctor(data.message);
    if (!(data.name in { TypeError: 1, RangeError: 1, Error: 1 })) err.name = data.name;
  }
  if (data.translations) err.translations = data.translations;
  // Our codes are strings ('RMT_E_SIZE'); a DOMException's own code is a number it has already.
  if (typeof data.code === 'string' && !DOM_NAMES.has(data.name)) err.code = data.code;
  return err;
}
