// Type declarations for residual-mt/polyfill: a side-effect import that
// installs globalThis.Translator (residual-mt's Translator class, see
// index.d.ts) where the runtime has none. Its type in a page is the DOM's
// own Translator where the DOM lib declares one; in Node, import
// { Translator } from 'residual-mt' for the type.
export {};
