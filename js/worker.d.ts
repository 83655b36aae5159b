// Type declarations for residual-mt/worker: the engine's worker script
// (js/worker.js), started by createTranslator({ worker: true }); it exports nothing.
export {};
