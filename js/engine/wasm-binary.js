// What the engine's WebAssembly binary says about the memory it needs, read
// from its bytes: the threads build imports a shared memory, which the page
// creates (wasm.js); the other builds define their own.

// Reads an unsigned LEB128 at bytes[at.pos], advancing at.pos.
function leb(bytes, at) {
  let value = 0, scale = 1, byte;
  do {
    byte = bytes[at.pos++];
    value += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte & 0x80);
  return value;
}

// The limits of the memory a module imports ({ initial, maximum, shared }
// in 64 KiB pages), or null when it defines its own: only the threads build
// imports one (shared, so that every thread's instance uses it).
export function importedMemory(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const at = { pos: 8 };
  while (at.pos < u8.length) {
    const id = u8[at.pos++], size = leb(u8, at), end = at.pos + size;
    if (id !== 2) {
      at.pos = end;
      continue;
    }
    for (let n = leb(u8, at); n > 0; n--) {
      for (let name = 0; name < 2; name++) { // module and field names
        const length = leb(u8, at);
        at.pos += length;
      }
      const kind = u8[at.pos++];
      if (kind === 2) {
        const flags = u8[at.pos++], initial = leb(u8, at);
        return { initial, maximum: flags & 1 ? leb(u8, at) : undefined, shared: (flags & 2) !== 0 };
      }
      if (kind === 0) leb(u8, at);                        // function: type index
      else if (kind === 1) { at.pos++; if (u8[at.pos++] & 1) leb(u8, at); leb(u8, at); } // table
      else if (kind === 3) at.pos += 2;                   // global: type, mutability
      else if (kind === 4) { at.pos++; leb(u8, at); }     // tag
    }
    return null;
  }
  return null;
}

// The same for a module compiled elsewhere (the loader compiles while it
// downloads), whose bytes are gone: WebAssembly.Module.imports names an
// imported memory but not its limits, which are then the threads build's
// (build.sh: --initial-memory 16 MiB, --max-memory 4 GiB).
export const THREADS_BUILD_MEMORY = { initial: 256, maximum: 65536, shared: true };
function compiledModuleMemory(module) {
  return WebAssembly.Module.imports(module).some((i) => i.kind === 'memory') ? THREADS_BUILD_MEMORY : null;
}


// The memory `module` imports (importedMemory's answer from its bytes when
// they are here, else compiledModuleMemory's), or null when it defines its own.
export function memoryLimits(module, bytes) {
  return bytes ? importedMemory(bytes) : compiledModuleMemory(module);
}
