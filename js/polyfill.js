// import 'residual-mt/polyfill': installs globalThis.Translator and
// globalThis.LanguageDetector where the runtime has none, so that pages
// written for the browser's built-in Translator and Language Detector APIs
// work in every browser (and in Node). As the built-in API does, a
// translator's create() then asks for a user gesture (transient activation)
// when the model has still to be downloaded, and rejects with a
// NotAllowedError without one. (The detector's model ships in the package:
// it is always 'available', and needs no gesture.)
// A built-in that exists but cannot serve: residual-mt/polyfill/replace.

import { install } from './api/install.js';

install({ replace: false });
