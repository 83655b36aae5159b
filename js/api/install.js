// What the polyfills install: residual-mt's Translator and LanguageDetector
// on globalThis, in the built-ins' place (replace: true, with the built-in
// kept as .builtin) or only where there is none.

import { LanguageDetector } from './detector.js';
import { Translator, requireUserActivation } from './translator.js';

export function install({ replace }) {
  const ours = { Translator, LanguageDetector };
  for (const [name, value] of Object.entries(ours)) {
    const builtin = globalThis[name];
    if (builtin !== undefined && !replace) continue;
    if (name === 'Translator') requireUserActivation();
    if (builtin !== undefined && builtin !== value) Object.defineProperty(value, 'builtin', { value: builtin, configurable: true });
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
}
