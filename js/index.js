// residual-mt: on-device translation that behaves like the web platform's
// Translator API (webmachinelearning/translation-api).
//
//   import { createTranslator } from 'residual-mt';
//   const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
//   console.log(await translator.translate('Hola, mundo.'));
//
// The modules, by concern: translator.js (the Translator, create,
// availability), host.js (models shared by translators), backends.js (worker
// or in-process engine), queue.js (one job at a time), languages.js (BCP 47
// tags), events.js (download progress), loader.js (a model's files: read by
// files.js, checked by verify.js, kept by cache.js, found by discover.js),
// runner.js (the engine's jobs) over pipeline.js (the one text pipeline:
// sentences, batches, streaming, alignment spans) and engine.js (the binding),
// detector.js (the LanguageDetector) over langid.js (the engine's identifier), html.js
// and html-tree.js (markup kept: format 'html'), page.js (a page in place).

export { Translator, availability, createTranslator, modelInfo } from './translator.js';
export { LanguageDetector, createLanguageDetector, detectorAvailability } from './detector.js';
export { DownloadProgressEvent } from './events.js';
export { languagePairs } from './languages.js';
export { DEFAULT_MODEL, DEFAULT_THREADS_CAP, DETECTOR_INPUT_QUOTA, DETECTOR_MODEL, INPUT_QUOTA, MAX_MODEL_BYTES, MAX_THREADS } from './defaults.js';
export { resolveDefaultModel } from './loader.js';
export { segmentText, splitSentences } from './segment.js';
export { translateElement, restoreElement } from './page.js';
export { translatePage } from './live.js';
