// Fetches the engine (dist/residual-mt*.wasm) for a load: compiled while it
// downloads where the browser can, and then once a page for each URL.

import { MAX_ENGINE_BYTES, defaultWasmUrl } from '../defaults.js';
import { isNode } from '../util/env.js';
import { describeFetchError, networkError, openTimed, operationError, readAll, toUrl } from './files.js';
import { untilAborted } from '../util/streams.js';
import { checkContent } from './verify.js';

// Whether the engine can be compiled while it downloads: in a browser, and
// served as application/wasm (which WebAssembly.compileStreaming requires).
// Chromium then also keeps the compiled code (its wasm code cache: a module of
// 128 KB or more, fetched by URL, from the HTTP cache or Cache Storage), so a
// later visit skips most of compiling.
function streamable(file) {
  return !isNode() && typeof WebAssembly.compileStreaming === 'function' && !!file.response &&
    /^application\/wasm\b/i.test(file.contentType ?? '');
}

async function compileStreaming(f) {
  try {
    return await WebAssembly.compileStreaming(f.file.response);
  } catch (err) {
    if (err instanceof WebAssembly.CompileError) {
      throw operationError(`residual-mt: ${f.name} (${f.url}) is not valid WebAssembly: ${err.message}`);
    }
    throw describeFetchError(err, f.url, f.what);
  }
}

// The engine as the loader gives it (a compiled WebAssembly.Module where the
// browser compiled it while it downloaded, else its bytes) and its size. In
// a browser each engine URL is compiled once a page: createTranslator starts
// it before the model is found (prepareEngine), and later loads of the same
// engine reuse the module. Bytes (which move to a worker) and failures are
// not kept: the next load fetches again.
const compiled = new Map(); // URL -> Promise<{ wasm, size }>

function engineFile(url) {
  return { key: 'wasm', name: 'residual-mt.wasm', what: 'the engine (residual-mt.wasm)', url };
}

function fetchEngine(f) {
  const keep = !isNode();
  let fetched = keep ? compiled.get(f.url.href) : undefined;
  if (fetched) return fetched;
  fetched = (async () => {
    await openTimed(f);
    if (f.file.error) throw f.file.error;
    if (f.file.missing) throw networkError(f.file.message);
    if (streamable(f.file)) {
      const wasm = await compileStreaming(f);
      f.fetched();
      return { wasm, size: f.file.size ?? 0 };
    }
    const bytes = await readAll(f.file, () => {}, f.file.size, { maxBytes: MAX_ENGINE_BYTES, name: `${f.name} (${f.url})`, why: 'MAX_ENGINE_BYTES' });
    f.fetched();
    checkContent(f.name, bytes, f.file.contentType, f.url);
    return { wasm: bytes, size: bytes.length };
  })();
  if (keep) {
    compiled.set(f.url.href, fetched);
    fetched.then(({ wasm }) => { if (!(wasm instanceof WebAssembly.Module)) compiled.delete(f.url.href); },
      () => compiled.delete(f.url.href));
  }
  return fetched;
}

// Starts fetching and compiling the engine at `url` (a browser's page: see fetchEngine).
export function prepareEngine(url) {
  if (!isNode()) fetchEngine(engineFile(url)).catch(() => {});
}

// The engine for a load: null where its bytes are given (givenEngine), else
// a promise of { wasm, size } (fetchEngine's), onEngine(wasm) called as soon
// as it is here, before the model's files may be.
export function startEngine(wasm, signal, onEngine) {
  if (wasm instanceof Uint8Array || wasm instanceof ArrayBuffer) return null;
  const url = wasm ? toUrl(wasm) : Promise.resolve(defaultWasmUrl());
  const engine = url.then((u) => untilAborted(fetchEngine(engineFile(u)), signal)).then((got) => {
    onEngine?.(got.wasm);
    return got;
  });
  engine.catch(() => {}); // awaited by the caller
  return engine;
}

// Engine bytes given by the caller, copied: they may be transferred.
export const givenEngine = (wasm) => new Uint8Array(wasm instanceof ArrayBuffer ? wasm.slice(0) : wasm);

