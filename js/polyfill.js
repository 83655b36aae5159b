// import 'residual-mt/polyfill': installs globalThis.Translator where the
// runtime has none, so that pages written for the browser's built-in
// Translator API work in every browser (and in Node). As the built-in API
// does, create() then asks for a user gesture (transient activation) when the
// model has still to be downloaded, and rejects with a NotAllowedError
// without one.

import { Translator, requireUserActivation } from './translator.js';

if (typeof globalThis.Translator === 'undefined') {
  requireUserActivation();
  Object.defineProperty(globalThis, 'Translator', { value: Translator, writable: true, configurable: true });
}
