// Type declarations for residual-mt/polyfill (and residual-mt/polyfill/replace):
// side-effect imports that install globalThis.Translator and
// globalThis.LanguageDetector (residual-mt's classes, see index.d.ts) where
// the runtime has none (replace: in the built-ins' place). Its type in a page is the DOM's
// own Translator where the DOM lib declares one; in Node, import
// { Translator, LanguageDetector } from 'residual-mt' for the types.
export {};
