// residual-mt: on-device translation that behaves like the web platform's
// Translator API (webmachinelearning/translation-api).
//
//   import { createTranslator } from 'residual-mt';
//   const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
//   console.log(await translator.translate('Hola, mundo.'));
//
// Rule of js/ itself: the package's entry points (what package.json
// "exports" and "bin" name, and the modules a worker starts: worker.js,
// pool-worker.js) and defaults.js, the one place for names, paths and
// limits. Everything else is in a folder by side and job: api/ (the
// Translator and LanguageDetector APIs), text/ (sentences, HTML, pages),
// host/ (the page side of the engines), engine/ (the worker side), load/
// (a model's files), marian/ (Marian models converted), util/. The README's
// layout has a table per folder.

export { Translator, availability, createTranslator, modelInfo } from './api/translator.js';
export { LanguageDetector, createLanguageDetector, detectorAvailability } from './api/detector.js';
export { DownloadProgressEvent } from './api/events.js';
export { languagePairs } from './util/languages.js';
export { DEFAULT_MODEL, DEFAULT_THREADS_CAP, DETECTOR_INPUT_QUOTA, DETECTOR_MODEL, INPUT_QUOTA, MAX_MODEL_BYTES, MAX_THREADS } from './defaults.js';
export { resolveDefaultModel } from './load/loader.js';
export { segmentText, splitSentences } from './text/segment.js';
export { translateElement, restoreElement } from './text/page.js';
export { translatePage } from './text/live.js';
