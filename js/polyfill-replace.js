// import 'residual-mt/polyfill/replace': installs residual-mt's Translator and
// LanguageDetector on globalThis whether or not the browser has its own, for
// pages that prefer this engine where a built-in exists but cannot serve
// (Chromium without Google's model downloads: its Translator.create() never
// settles; docs/API.md has the measurement). The built-in stays reachable as
// Translator.builtin / LanguageDetector.builtin. Import it before any code
// that reads those globals.

import { install } from './api/install.js';

install({ replace: true });
