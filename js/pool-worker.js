// One of the engine's worker threads (js/engine/threads.js starts it). Its one
// message: { module, memory, index, stackTop }. It instantiates the threads
// build over the engine's shared memory (the module's start function does not
// initialize memory twice), moves its stack pointer to the stack thread 0
// allocated for it, says { type: 'ready' } (or { type: 'error', message }),
// and then works in rmt_thread_run until the engine stops the pool, or until
// its instance traps: it then tells the pool and says { type: 'lost', message }.

import { connect } from './util/port.js';
import { Wasm, makeImports } from './engine/wasm.js';

const port = await connect();
port.listen(({ module, memory, index, stackTop }) => {
  let instance;
  try {
    let wasm;
    instance = new WebAssembly.Instance(module, makeImports(module, () => wasm, memory));
    wasm = new Wasm(instance, memory);
    // Before any call: the instance starts with thread 0's stack pointer.
    instance.exports.__stack_pointer.value = stackTop;
  } catch (err) {
    port.post({ type: 'error', message: err.message });
    return;
  }
  port.post({ type: 'ready' });
  try {
    instance.exports.rmt_thread_run(index); // returns when the pool stops
  } catch (err) {
    // Its instance trapped, perhaps holding a part of a job: thread 0 must
    // not wait for it (rmt_thread_lost, a leaf call on a stack put back).
    instance.exports.__stack_pointer.value = stackTop;
    instance.exports.rmt_thread_lost(index);
    port.post({ type: 'lost', message: err.message });
  }
});
