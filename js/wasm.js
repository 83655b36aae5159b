// Instantiates the standalone dist/residual-mt.wasm (built without Emscripten's
// JS glue) and offers the few helpers the wrappers need: copying bytes and
// strings in and out of linear memory, and turning error returns into Errors.

import { defaultWasmUrl } from './defaults.js';
import { isNode, missingFeatures } from './env.js';

const WASI_ENOSYS = 52;
// Error codes of src/rmt.h that mean "out of range": RangeErrors in JS.
const RANGE_ERRORS = { [-4]: 'RMT_E_LIMIT', [-6]: 'RMT_E_SIZE' };

async function readSource(source) {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) return source;
  const url = source ?? defaultWasmUrl();
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
  constructor(instance) {
    this.exports = instance.exports;
    this.memory = instance.exports.memory;
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
    return this.decoder.decode(u8.subarray(ptr, end));
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

function makeImports(module, getWasm) {
  const imports = {};
  for (const { module: mod, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== 'function') continue;
    imports[mod] ??= {};
    let fn;
    if (name === 'emscripten_notify_memory_growth') fn = () => {};
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
// URL, or nothing for the default build (dist/residual-mt-relaxed.wasm where
// relaxed SIMD works, else dist/residual-mt.wasm: defaults.js).
export async function loadWasm(source) {
  const missing = missingFeatures();
  if (missing) throw new Error(`residual-mt: ${missing}`);
  let module = source instanceof WebAssembly.Module ? source : null;
  try {
    module ??= await WebAssembly.compile(await readSource(source));
  } catch (err) {
    if (!(err instanceof WebAssembly.CompileError)) throw err;
    throw new Error(`residual-mt: the engine file is not valid WebAssembly: ${err.message}`);
  }
  let wasm;
  const instance = await WebAssembly.instantiate(module, makeImports(module, () => wasm));
  wasm = new Wasm(instance);
  instance.exports._initialize?.();
  return wasm;
}
