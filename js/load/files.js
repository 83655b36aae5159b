// Reads a file by its URL: with fetch over HTTP, with the file system in Node
// for file: URLs (and paths), in chunks as they come; whole, with progress
// in bytes; a JSON file within a bound. A file that cannot be had is a
// NetworkError (HTTP status, offline), one that is not what was asked for
// an OperationError.

import { boundedChunks, concat, tooLarge as overBound } from './bounded.js';
import { MAX_JSON_BYTES } from '../defaults.js';
import { isNode, timeStep } from '../util/env.js';
import { makeError } from '../util/errors.js';
import { streamChunks } from '../util/streams.js';

export const networkError = (message) => makeError('NetworkError', message);
export const operationError = (message) => makeError('OperationError', message);

// A file location as a URL: strings are paths in Node, URLs relative to the page in browsers.
export async function toUrl(source) {
  if (source instanceof URL) return new URL(source.href);
  if (typeof source !== 'string') throw new TypeError('residual-mt: expected a URL or a path');
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source);
  if (isNode()) {
    const { pathToFileURL } = await import('node:url');
    return pathToFileURL(source);
  }
  return new URL(source, globalThis.document?.baseURI ?? globalThis.location?.href);
}

// A model location as a URL; strings are paths in Node, URLs relative to the
// page in browsers. Directory URLs end in "/".
export async function toLocation(model) {
  if (!(model instanceof URL) && typeof model !== 'string') throw new TypeError('residual-mt: model must be a URL or a directory path');
  const url = await toUrl(model);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function isFileUrl(url) {
  return url.protocol === 'file:';
}

export function describeFetchError(err, url, what) {
  return networkError(`residual-mt: cannot download ${what} from ${url}: ${err.message}` +
    ' (network error: offline, server down or blocked by CORS)');
}

// Opens a file for reading: { size (or null), contentType, chunks: async
// iterator of Uint8Array, and over HTTP the response }.
export async function open(url, what, signal) {
  if (isFileUrl(url)) {
    const fs = await import('node:fs');
    let size;
    try {
      size = (await fs.promises.stat(url)).size;
    } catch (err) {
      if (err.code === 'ENOENT') return { missing: true, message: `residual-mt: ${what} not found: ${decodeURIComponent(url.pathname)}` };
      throw networkError(`residual-mt: cannot read ${what} ${decodeURIComponent(url.pathname)}: ${err.message}`);
    }
    return {
      size,
      contentType: null,
      async *chunks() {
        for await (const chunk of fs.createReadStream(url, { highWaterMark: 1 << 20, signal })) yield chunk;
      },
    };
  }
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw describeFetchError(err, url, what);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    const message = `residual-mt: downloading ${what} from ${url} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    return response.status === 404 ? { missing: true, message } : { error: networkError(message) };
  }
  const length = Number(response.headers.get('content-length'));
  const encoded = response.headers.get('content-encoding');
  return {
    response,
    cancel: () => response.body?.cancel().catch(() => {}),
    size: Number.isFinite(length) && length > 0 && !encoded ? length : null,
    contentType: response.headers.get('content-type'),
    async *chunks() {
      if (!response.body) {
        yield new Uint8Array(await response.arrayBuffer());
        return;
      }
      yield* streamChunks(response.body, (err) => (signal?.aborted ? signal.reason : describeFetchError(err, url, what)));
    },
  };
}

// Reads a whole file into one exactly-sized ArrayBuffer (transferable to a
// worker); onBytes(n) after each chunk. `size`, when known, saves a copy.
// limit ({ maxBytes, name, why }: bounded.js boundedChunks) refuses a file
// whose size is known to be over limit.maxBytes before reading it, else as
// soon as more comes; the download is cancelled either way.
export async function readAll(file, onBytes, size = file.size, limit = null) {
  const announced = Math.max(file.size ?? 0, size ?? 0);
  if (limit && announced > limit.maxBytes) {
    file.cancel?.();
    throw overBound(limit.name, limit.maxBytes, announced, limit.why);
  }
  const parts = [];
  let length = 0;
  let out = size > 0 ? new Uint8Array(size) : null;
  for await (const chunk of limit ? boundedChunks(file.chunks(), limit, announced) : file.chunks()) {
    const bytes = chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);
    if (out && length + bytes.length <= out.length) out.set(bytes, length);
    else {
      if (out) parts.push(out.subarray(0, length)); // longer than announced
      out = null;
      parts.push(bytes);
    }
    length += bytes.length;
    onBytes(bytes.length);
  }
  if (out && length === out.length) return out;
  if (out) return out.slice(0, length); // shorter than announced
  return concat(parts);
}

// Reads a JSON file whole (onBytes as readAll's), refusing one larger than
// MAX_JSON_BYTES before reading it where its size is known, else as soon as
// more comes: a file that size is not a model's (an OperationError).
export async function readJson(file, url, onBytes = () => {}) {
  const tooLarge = (size) => {
    file.cancel?.();
    return operationError(`residual-mt: ${url} has ${size} bytes, more than a model's JSON file may have ` +
      `(${MAX_JSON_BYTES}): not a model's file`);
  };
  if (file.size > MAX_JSON_BYTES) throw tooLarge(file.size);
  let length = 0;
  const bounded = {
    size: file.size,
    async *chunks() {
      for await (const chunk of file.chunks()) {
        length += chunk.length;
        if (length > MAX_JSON_BYTES) throw tooLarge(`more than ${length}`);
        yield chunk;
      }
    },
  };
  return readAll(bounded, onBytes);
}

// A JSON file that is not one of a model's (a catalogue: catalog.js), read
// whole within the same bound and parsed.
export async function readJsonFile(url, what, signal) {
  const file = await open(url, what, signal);
  if (file.missing) throw networkError(file.message);
  if (file.error) throw file.error;
  return JSON.parse(new TextDecoder().decode(await readJson(file, url)));
}

const textDecoder = new TextDecoder();

export function looksLikeHtml(bytes, contentType) {
  if (contentType && /^text\/html/i.test(contentType)) return true;
  const head = textDecoder.decode(bytes.subarray(0, 64)).trimStart().toLowerCase();
  return head.startsWith('<!doctype') || head.startsWith('<html');
}

// Opens a wanted file (f.file), timing it from the request to its last byte
// (the reader calls f.fetched() then). f.entry may be set meanwhile.
export async function openTimed(f, signal) {
  f.fetched = timeStep(`fetch ${f.name}`);
  f.file = await open(f.url, f.what, signal);
  return f;
}

// A file at a URL, for loads other than a model directory's (marian-load.js):
// { size (or null), cancel(), read(onBytes) → its bytes (within limit: readAll's) }; a NetworkError
// when it cannot be had, an OperationError when an HTML page comes instead.
export async function openUrl(url, what, signal, limit = null) {
  const file = await open(url, what, signal);
  if (file.error) throw file.error;
  if (file.missing) throw networkError(file.message);
  return {
    size: file.size,
    cancel: () => file.cancel?.(),
    read: async (onBytes) => {
      const bytes = await readAll(file, onBytes, file.size, limit);
      if (looksLikeHtml(bytes, file.contentType)) {
        throw operationError(`residual-mt: ${what} (${url}) is an HTML page, not the file: wrong URL, or a server that answers every path with its index page`);
      }
      return bytes;
    },
  };
}

