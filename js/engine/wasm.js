// Instantiates the standalone dist/residual-mt.wasm (built without Emscripten's
// JS glue) and offers the few helpers the wrappers need: copying bytes and
// strings in and out of linear memory, and turning error returns into Errors.

import { defaultWasmUrl } from '../defaults.js';
import { canBlock, hasThreads, isNode, missingFeatures } from '../util/env.js';
import { unknownError } from '../util/errors.js';
import { memoryLimits } from './wasm-binary.js';

const WASI_ENOSYS = 52;
// Error codes of src/rmt.h that mean "out of range": RangeErrors in JS.
const RANGE_ERRORS = { [-4]: 'RMT_E_LIMIT', [-6]: 'RMT_E_SIZE' };

async function readSource(source, threads) {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) return source;
  const url = source ?? defaultWasmUrl(threads);
  const href = String(url);
  if (isNode() && (href.startsWith('file:') || !href.includes('://'))) {
    const { readFile } = await import('node:fs/promises');
    try {
      return await readFile(href.startsWith('file:') ? new URL(href) : href);
    } catch (err) {
      throw new Error(`residual-mt: cannot read the engine ${href}: ${err.message}` +
        (err.code === 'ENOENT' ? ' (run `npm run build` first)' : ''));
    }
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`residual-mt: fetching ${href} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export class Wasm {
  // memory: the threads build's, which it imports (the others export theirs).
  constructor(instance, memory = instance.exports.memory) {
    this.exports = instance.exports.__stack_pointer ? guardThreads(this, instance.exports) : instance.exports;
    this.memory = memory;
    this.threads = 1;
    this.decoder = new TextDecoder('utf-8');
    this.encoder = new TextEncoder();
  }

  get u8() { return new Uint8Array(this.memory.buffer); }
  get i32() { return new Int32Array(this.memory.buffer); }
  get f32() { return new Float32Array(this.memory.buffer); }

  malloc(size) {
    const ptr = this.exports.malloc(Math.max(1, size));
    if (!ptr) throw new Error(`residual-mt: out of memory allocating ${size} bytes in the engine`);
    return ptr;
  }

  free(ptr) { if (ptr) this.exports.free(ptr); }

  // Copies bytes into a new allocation; the caller frees it.
  copyIn(bytes) {
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const ptr = this.malloc(data.length);
    this.u8.set(data, ptr);
    return ptr;
  }

  // A NUL-terminated UTF-8 copy of `text`; returns [ptr, byteLength].
  copyString(text) {
    const bytes = typeof text === 'string' ? this.encoder.encode(text) : text;
    const ptr = this.malloc(bytes.length + 1);
    this.u8.set(bytes, ptr);
    this.u8[ptr + bytes.length] = 0;
    return [ptr, bytes.length];
  }

  copyInt32(values) {
    const ptr = this.malloc(values.length * 4);
    this.i32.set(values, ptr >> 2);
    return ptr;
  }

  readString(ptr, length) {
    const u8 = this.u8;
    let end = ptr;
    if (length === undefined) { while (u8[end]) end++; } else end = ptr + length;
    // Browsers' TextDecoder refuses views of shared memory (the threads build's): a copy then.
    return this.decoder.decode(this.memory.buffer instanceof ArrayBuffer ? u8.subarray(ptr, end) : u8.slice(ptr, end));
  }

  // Ends the engine's worker threads (the threads build): it then runs on one.
  dispose() {
    this.disposed = true; // threads still starting stop once they are in
    this.singleThread();
  }

  singleThread() {
    this.pool?.stop();
    this.pool = null;
    this.threads = 1;
  }

  // A worker of the pool was lost (src/threads.c): the engine goes on on one thread.
  threadLost(message) {
    if (this.threads === 1) return;
    console.warn(`residual-mt: ${message}; the engine runs on one thread from now on`);
    this.singleThread();
  }

  lastError() { return this.readString(this.exports.rmt_last_error()); }

  // The engine's last error as an Error to throw: a RangeError for a limit
  // (err.code 'RMT_E_LIMIT' or 'RMT_E_SIZE'), else an Error.
  error(context = '') {
    const code = RANGE_ERRORS[this.exports.rmt_last_error_code()];
    const err = new (code ? RangeError : Error)(`residual-mt: ${context}${this.lastError()}`);
    if (code) err.code = code;
    return err;
  }

  // Text from a C call with snprintf's convention: fill(ptr, cap) returns the
  // full length (negative on error), writing the text only when it fits.
  readText(fill, cap = 256) {
    for (;;) {
      const ptr = this.malloc(cap);
      try {
        const n = fill(ptr, cap);
        if (n < 0) throw this.error();
        if (n < cap) return this.readString(ptr, n);
        cap = n + 1;
      } finally {
        this.free(ptr);
      }
    }
  }
}

// The threads build's exports, each call guarded: a call that waits for a
// part of a job that a lost thread held leaves the engine by a trap
// (src/threads.c). Its stack pointer is then put back, the pool stopped, and
// the call throws an UnknownError that says so; the engine goes on on one thread.
function guardThreads(wasm, exports) {
  const guarded = {};
  for (const [name, value] of Object.entries(exports)) {
    guarded[name] = typeof value !== 'function' ? value : (...args) => {
      const stack = exports.__stack_pointer.value;
      try {
        return value(...args);
      } catch (err) {
        if (!(err instanceof WebAssembly.RuntimeError) || !exports.rmt_threads_lost()) throw err;
        exports.__stack_pointer.value = stack;
        const message = wasm.readString(exports.rmt_last_error());
        wasm.threadLost(message);
        throw unknownError(`residual-mt: ${message}: this call failed`);
      }
    };
  }
  return guarded;
}

// For tests of a lost thread where the engine runs out of their reach (a
// translator's worker): RMT_TEST_THREAD_FAULT="index:chunks:trap|hang:stallMs"
// in Node's environment makes worker `index` fail in its chunks-th chunk
// (src/threads.h rmt_threads_fail_after) and thread 0 wait stallMs for it.
function injectThreadFault(exports) {
  const fault = isNode() ? globalThis.process.env.RMT_TEST_THREAD_FAULT : undefined;
  if (!fault) return;
  const [index, chunks, how, stallMs] = fault.split(':');
  exports.rmt_threads_set_min_macs(0);
  exports.rmt_threads_set_stall_ms(Number(stallMs));
  exports.rmt_threads_fail_after(Number(index), Number(chunks), how === 'trap' ? 1 : 2);
}

// The imports of an instance of `module`: `memory` for the threads build
// (env.memory), and the few WASI and Emscripten functions its libc names.
export function makeImports(module, getWasm, memory) {
  const imports = { env: memory ? { memory } : {} };
  for (const { module: mod, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== 'function') continue;
    imports[mod] ??= {};
    let fn;
    if (name === 'emscripten_notify_memory_growth') fn = () => {};
    else if (name === 'rmt_now_ms') fn = () => performance.now();
    else if (name === 'proc_exit') fn = (code) => { throw new Error(`residual-mt: engine exited (${code})`); };
    else if (name === 'fd_write') {
      // stdio is not used by the library; if it ever is, show it instead of losing it.
      fn = (fd, iovs, iovsLen, nwrittenPtr) => {
        const wasm = getWasm();
        const view = new DataView(wasm.memory.buffer);
        let text = '', written = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = view.getUint32(iovs + 8 * i, true), len = view.getUint32(iovs + 8 * i + 4, true);
          text += wasm.readString(ptr, len);
          written += len;
        }
        view.setUint32(nwrittenPtr, written, true);
        console.error(text);
        return 0;
      };
    } else fn = () => WASI_ENOSYS;
    imports[mod][name] = fn;
  }
  return imports;
}

// Loads the engine. `source`: a compiled WebAssembly.Module, wasm bytes, a
// URL, or nothing for the default build for this many threads (defaults.js). threads: how many threads to
// run on (threadCount's answer, 1 by default); the threads build runs on
// them, any other build, or a runtime without shared memory, on one
// (wasm.threads says how many it has). waitForThreads: false resolves once
// the engine is instantiated, its threads still starting: wasm.threadsStarted
// resolves once they are in (or have failed: then it runs on one); nothing
// may run on the engine's threads (a translation) before.
export async function loadWasm(source, { threads = 1, waitForThreads = true } = {}) {
  const missing = missingFeatures();
  if (missing) throw new Error(`residual-mt: ${missing}`);
  let module = source instanceof WebAssembly.Module ? source : null;
  const bytes = module ? null : await readSource(source, threads);
  try {
    module ??= await WebAssembly.compile(bytes);
  } catch (err) {
    if (!(err instanceof WebAssembly.CompileError)) throw err;
    throw new Error(`residual-mt: the engine file is not valid WebAssembly: ${err.message}`);
  }
  const limits = memoryLimits(module, bytes);
  if (limits && !hasThreads()) {
    throw new Error('residual-mt: this engine is the threads build, which needs shared memory: ' +
      'a cross-origin isolated page (COOP and COEP headers), or use dist/residual-mt.wasm');
  }
  const memory = limits ? new WebAssembly.Memory(limits) : undefined;
  let wasm;
  const instance = await WebAssembly.instantiate(module, makeImports(module, () => wasm, memory));
  wasm = new Wasm(instance, memory);
  instance.exports._initialize?.();
  wasm.threadsStarted = limits && threads > 1 ? (async () => {
    // Workers that cannot start (a Content Security Policy, a runtime without
    // nested workers) leave the engine on one thread, not without an engine.
    try {
      // The pool is sized at once, before its workers are in (their module is
      // fetched first): what the engine posts to them meanwhile (the weights'
      // SHA-256 as the model loads) waits for them, or runs on this thread.
      if (instance.exports.rmt_threads_prepare(threads, canBlock() ? 1 : 0) < 0) throw wasm.error('cannot start the engine\'s threads: ');
      const { startThreads } = await import('./threads.js');
      const pool = await startThreads(wasm, module, threads, (message) => wasm.threadLost(message));
      if (wasm.disposed) pool.stop();
      else [wasm.pool, wasm.threads] = [pool, threads];
      injectThreadFault(instance.exports);
    } catch (err) {
      instance.exports.rmt_threads_stop(); // one thread again
      console.warn(`residual-mt: running on one thread: ${err.message}`);
    }
  })() : Promise.resolve();
  if (waitForThreads) await wasm.threadsStarted;
  return wasm;
}
