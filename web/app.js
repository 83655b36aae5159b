// The demo: loads the default model (with a progress bar), translates as you
// type, shows latency and tokens/s, swaps the direction, copies the result,
// says what the model was trained on, translates a sample page in place
// (links, lists, emphasis and a table kept; the original restorable), and
// works offline after the first visit (sw.js). The direction follows the
// language of what the visitor types (LanguageDetector, debounced) until the
// visitor picks one by hand. An error (a failed load, a failed translation) is shown
// until the next success; a failed load is tried again on the next action.
// Its languages: the default model's, and those of the models
// `residual-mt models pull --out models/pulled` wrote (PULLED_MODELS: npm start
// serves them), a pair no model has going through English.
// Query parameters for testing: ?model=URL (that model alone), ?beam=N, ?worker=0, ?sw=0.
import { LanguageDetector, createTranslator, modelInfo, translatePage as translateLive } from '../js/index.js';
import { findRoute, loadCatalog } from '../js/api/catalog.js';
import { CATALOG, PULLED_MODELS, packageUrl } from '../js/defaults.js';
import { missingFeatures } from '../js/util/env.js';

performance.mark('rmt-app'); // the modules are loaded (for tests/bench/load_bench.js)

const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'), progress: $('progress'), offline: $('offline'), direction: $('direction'), live: $('live'),
  stream: $('stream'), translate: $('translate'), swap: $('swap'), copy: $('copy'), source: $('source'),
  target: $('target'), stats: $('stats'), error: $('error'), trained: $('trained'), modelName: $('model-name'),
  textMode: $('text-mode'), pageMode: $('page-mode'), sample: $('sample'), translatePage: $('translate-page'),
  restorePage: $('restore-page'), samples: $('samples'), detected: $('detected'),
};
const params = new URLSearchParams(location.search);
const options = {
  model: params.get('model') ?? undefined,
  worker: params.get('worker') === '0' ? false : undefined,
  // cache: the default: the library keeps the weights in the browser's file
  // system, where its worker reads them fastest (the service worker keeps
  // its own copy of the model, with the page, for offline use).
};
const beam = params.has('beam') ? Number(params.get('beam')) : undefined;
const LANGUAGE_NAMES = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'language' }) : null;
const languageName = (code) => { try { return LANGUAGE_NAMES?.of(code) ?? code; } catch { return code; } };

// Sentences of the kinds the default model translates well (software
// messages, package descriptions, the Bible: models/es-en/CARD.md), offered as
// examples for its source language; other models get none.
const SAMPLES = {
  es: ['No se pudo conectar con el servidor.', '¿Desea guardar los cambios antes de cerrar?',
    'Seleccione una carpeta para guardar las imágenes.', 'Este paquete contiene la documentación del programa.'],
  en: ['The file could not be opened.', 'Do you want to save the changes before closing?',
    'Click the button to print the page.', 'In the beginning God created the heavens and the earth.'],
};

const translators = new Map(); // "src-tgt" -> Promise<Translator>
let current = null;            // AbortController of the translation in progress
let live = null;               // the sample article's live translation (translatePage's controller)
let debounce = 0;
let info = null;               // modelInfo() once it has been read
let ready = false;
let starting = null;           // the load in progress
let detector = null;           // Promise<LanguageDetector | null>, once asked for
let detectorReady = false;     // created: translations wait for the detection before them
let byHand = false;            // the visitor chose the direction: detection leaves it alone
let detection = Promise.resolve(); // the latest detection of the source's language
let detectTimer = 0;

function setStatus(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
}

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
}

function showProgress(e) {
  if (ready) return;
  ui.progress.hidden = false;
  ui.progress.value = e.loaded;
  if (e.loaded < 1) setStatus(`downloading… ${Math.floor(100 * e.loaded)}% of ${(e.bytesTotal / 1e6).toFixed(1)} MB`);
  else setStatus('starting the engine…');
}

// The service worker caches the app, the engine and the model for offline use.
function startServiceWorker(modelUrl) {
  if (!('serviceWorker' in navigator)) return null;
  const sw = navigator.serviceWorker;
  if (params.get('sw') === '0') {
    // Development: no offline cache (and remove one a previous visit installed).
    sw.getRegistrations().then((all) => all.forEach((r) => r.unregister())).catch(() => {});
    return null;
  }
  sw.addEventListener('message', (event) => {
    const msg = event.data ?? {};
    if (msg.type === 'precached') ui.offline.textContent = msg.ok ? 'available offline' : '';
    if (msg.type === 'updated') ui.offline.textContent = 'a new version was downloaded: reload to use it';
  });
  // Not awaited: the page loads the model itself meanwhile (with the progress bar).
  // The model the page uses travels in the URL (resolved by js/load/loader.js).
  return sw.register(`./sw.js?models=${encodeURIComponent(modelUrl)}`).catch((err) => {
    console.warn(`residual-mt demo: no offline support (${err.message})`);
    return null;
  });
}

function translatorFor([sourceLanguage, targetLanguage]) {
  const key = `${sourceLanguage}-${targetLanguage}`;
  if (!translators.has(key)) {
    const created = createTranslator({ ...options, sourceLanguage, targetLanguage, monitor: (m) => m.addEventListener('downloadprogress', showProgress) });
    translators.set(key, created);
    created.catch(() => translators.delete(key)); // tried again on the next action
  }
  return translators.get(key);
}

function selectedPair() {
  return ui.direction.value.split('-');
}

// What the model was trained on: its package's description, when it has one
// (read online only: it is not part of the offline copy).
async function showTraining(modelUrl) {
  if (!navigator.onLine) return;
  try {
    const response = await fetch(new URL('package.json', modelUrl));
    const pkg = response.ok ? await response.json() : null;
    if (!pkg?.description) return;
    ui.trained.textContent = `Model ${pkg.name}@${pkg.version}: ${pkg.description}`;
    ui.trained.hidden = false;
  } catch { /* no package.json: nothing to say */ }
}

// The catalogue of pulled models (its model URLs made absolute), or null:
// read from the server, else (offline) the copy kept from the last visit;
// the library's model cache keeps the models themselves.
const PULLED_KEY = 'residual-mt-demo:pulled-catalog';
async function pulledCatalog() {
  const url = packageUrl(`${PULLED_MODELS}${CATALOG}`);
  const data = navigator.onLine === false ? keptCatalog() : await readPulled(url).catch(keptCatalog);
  if (!Array.isArray(data?.models) || !data.models.length) return null;
  return { models: data.models.map((entry) => ({ ...entry, model: new URL(entry.model, url).href })) };
}

async function readPulled(url) {
  const response = await fetch(url, { cache: 'no-cache' });
  if (response.status === 404) keep(null); // none pulled (any more)
  if (!response.ok) throw new Error(`HTTP ${response.status}`); // offline, the service worker may answer so
  const data = await response.json();
  keep(data);
  return data;
}

function keep(data) {
  try {
    if (data) localStorage.setItem(PULLED_KEY, JSON.stringify(data));
    else localStorage.removeItem(PULLED_KEY);
  } catch { /* no storage here: nothing kept for offline visits */ }
}

function keptCatalog() {
  try {
    return JSON.parse(localStorage.getItem(PULLED_KEY) ?? 'null');
  } catch {
    return null; // no storage here
  }
}

// [source, target, through English?] of every pair the catalogue's models and the default model's reach.
async function reachablePairs(catalog, read) {
  const entries = [...await loadCatalog(catalog), { model: read.url, pairs: read.pairs }];
  const languages = [...new Set(entries.flatMap((e) => e.pairs.flat()))];
  return languages.flatMap((s) => languages.filter((t) => t !== s).map((t) => [s, t, findRoute(entries, s, t)]))
    .filter(([, , route]) => route).map(([s, t, route]) => [s, t, route.length === 2]);
}

// Reads the models' languages (once), then loads the selected direction.
// Rejects on failure; the next action calls it again.
async function start() {
  if (!info) {
    // The default model translates es → en, the direction shown first: it
    // starts loading while the models' languages are read.
    if (options.model === undefined) options.catalog = await pulledCatalog() ?? undefined;
    if (options.model === undefined) translatorFor(['es', 'en']).catch(() => {});
    const read = await modelInfo({ model: options.model });
    performance.mark('rmt-info');
    ui.modelName.textContent = read.url.replace(location.origin, '') + (options.catalog ? ` and ${options.catalog.models.length} pulled` : '');
    if (!read.pairs.length) throw new Error(`the model at ${read.url} names no languages`);
    const pairs = options.catalog ? await reachablePairs(options.catalog, read) : read.pairs.map(([s, t]) => [s, t, false]);
    for (const [s, t, pivot] of pairs) {
      ui.direction.append(new Option(`${languageName(s)} → ${languageName(t)}${pivot ? ' (through English)' : ''}`, `${s}-${t}`));
    }
    read.pairs = pairs.map(([s, t]) => [s, t]);
    const preferred = read.pairs.findIndex(([s, t]) => s === 'es' && t === 'en');
    ui.direction.selectedIndex = Math.max(0, preferred);
    info = read;
    showDirection();
    showTraining(info.url);
  }
  await translatorFor(selectedPair());
  if (ready) return;
  performance.mark('rmt-ready');
  ready = true;
  ui.progress.hidden = true;
  ui.direction.disabled = false;
  setStatus('ready');
  clearError();
  document.documentElement.dataset.ready = 'true';
  // Not awaited: a translation asked for now (it awaits load()) must not wait
  // for the language detector or the service worker, whose registration may
  // take seconds, or never end. The detector loads once the translator is
  // ready (not to slow its first load). On a first visit the service worker
  // starts after it, and then keeps the detector's model from the HTTP cache
  // (no second download); a later visit's worker has the model already.
  const detecting = detectorFor();
  if (navigator.serviceWorker?.controller) offerOffline(info.url);
  else detecting.then(() => offerOffline(info.url));
}

// The service worker starts once the page is ready, so that it does not
// compete with the first download; it then caches what the page has just
// downloaded (from the HTTP cache, no second download) for offline use, and
// on later visits looks for a newer version.
async function offerOffline(modelUrl) {
  if (!await startServiceWorker(modelUrl)) return;
  const { active } = await navigator.serviceWorker.ready;
  active.postMessage({ type: 'precache' });
}

function load() {
  starting ??= start().catch((err) => {
    setStatus('could not load the model', true);
    showError(`error: ${err.message} (tried again on your next action)`);
    throw err;
  }).finally(() => { starting = null; });
  return starting;
}

async function translateNow() {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const text = ui.source.value;
  const started = performance.now();
  try {
    await load();
    flushDetection(false);
    if (detectorReady) await detection;
    if (controller !== current) return; // the detection changed the direction and translated again
    const translator = await translatorFor(selectedPair());
    if (ui.stream.checked) {
      let first = 0;
      let output = '';
      ui.target.textContent = '';
      for await (const chunk of translator.translateStreaming(text, { signal: controller.signal, beam })) {
        if (!first) first = performance.now() - started;
        output += chunk;
        ui.target.textContent = output;
      }
      if (controller !== current) return;
      const ms = performance.now() - started;
      ui.stats.textContent = output ? `first words after ${first.toFixed(0)} ms · done in ${ms.toFixed(0)} ms` : '';
    } else {
      const result = await translator.translate(text, { signal: controller.signal, beam, details: true });
      if (controller !== current) return;
      ui.target.textContent = result.text;
      performance.measure('rmt:translate', { start: started }); // for tests/bench/load_bench.js
      const ms = performance.now() - started;
      ui.stats.textContent = result.outputTokens
        ? `${ms.toFixed(0)} ms · ${result.sentences} sentence${result.sentences === 1 ? '' : 's'} · ${result.outputTokens} tokens · ` +
          `${Math.round(result.outputTokens / Math.max(result.ms, 1e-3) * 1000)} tokens/s`
        : '';
    }
    clearError();
    ui.copy.disabled = !ui.target.textContent;
    ui.target.dataset.state = 'done';
  } catch (err) {
    if (err.name === 'AbortError' && controller !== current) return; // a newer request replaced this one
    if (controller === current && ready) showError(`error: ${err.message}`);
    ui.target.dataset.state = 'error';
  } finally {
    if (controller === current) current = null;
  }
}

// ---- the direction follows the language typed (until one is chosen by hand)

// A short text is often unsure (a word can be Spanish, Galician and
// Catalan at once), so the direction changes only when the text has some
// letters, and the detector puts one of the model's source languages well
// ahead of the others (which it need not put first: "Hola, mundo." may look
// like Interlingua too, but it is not English).
const DETECT_DELAY_MS = 250;   // after the last keystroke; under the translation's 300
const DETECT_MIN_LETTERS = 8;
const DETECT_MIN_CONFIDENCE = 0.1;
const DETECT_LEAD = 4;         // times the next source language's confidence
const primary = (tag) => tag.split('-')[0].toLowerCase();

// The detector, created once (its model ships with the library: nothing to
// download from elsewhere); null where it cannot load: the page works without.
function detectorFor() {
  detector ??= LanguageDetector.create({ worker: options.worker }).then((created) => {
    detectorReady = true;
    return created;
  }, (err) => {
    console.warn(`residual-mt demo: no language detection (${err.message})`);
    return null;
  });
  return detector;
}

function showDetected(text) {
  ui.detected.textContent = text;
}

// The model's source language the text is in, or null when unsure.
function sourceLanguageOf(results) {
  const sources = [...new Set(info.pairs.map(([s]) => s))];
  const confidence = (source) => results.find((r) => primary(r.detectedLanguage) === primary(source))?.confidence ?? 0;
  const ranked = sources.map((source) => [source, confidence(source)]).sort((a, b) => b[1] - a[1]);
  const [[best, top], [, next] = [null, 0]] = ranked;
  return top >= DETECT_MIN_CONFIDENCE && top >= DETECT_LEAD * next ? best : null;
}

// The direction from `source` that keeps the target where it can (else
// swaps, else the first the model has).
function directionFrom(source) {
  const [s, t] = selectedPair();
  const has = (pair) => info.pairs.some(([a, b]) => `${a}-${b}` === pair);
  return [`${source}-${t}`, `${source}-${s}`].find((pair) => primary(source) !== primary(pair.split('-')[1]) && has(pair))
    ?? info.pairs.filter(([a]) => a === source).map((pair) => pair.join('-'))[0];
}

// retranslate: whether a change of direction translates the text again (a
// translation that waits for this detection needs not).
async function followLanguage(retranslate) {
  const text = ui.source.value;
  if (byHand || !info || pageMode() || (text.match(/\p{L}/gu) ?? []).length < DETECT_MIN_LETTERS) return;
  const created = await detectorFor();
  if (!created || byHand) return;
  let results;
  ui.source.dataset.detections = Number(ui.source.dataset.detections ?? 0) + 1; // for tests/browser.test.js
  try {
    results = await created.detect(text);
  } catch (err) {
    console.warn(`residual-mt demo: language detection failed (${err.message})`);
    return;
  }
  const source = sourceLanguageOf(results);
  if (!source || byHand || text !== ui.source.value) return; // unsure, chosen meanwhile, or a newer text
  showDetected(`detected: ${languageName(source)}`);
  if (primary(selectedPair()[0]) === primary(source)) return;
  const pair = directionFrom(source);
  if (!pair) return;
  ui.direction.value = pair;
  ui.direction.dataset.detected = source;
  showDirection();
  // The translation already shown (or under way) was of the other direction.
  if (retranslate && (ui.live.checked || ui.target.textContent)) {
    clearTimeout(debounce);
    translateNow();
  }
}

function scheduleDetection() {
  clearTimeout(detectTimer);
  if (!ui.source.value) {
    // A new text: the next one's language chooses again.
    byHand = false;
    showDetected('');
    return;
  }
  detectTimer = setTimeout(() => detectNow(true), DETECT_DELAY_MS);
}

function detectNow(retranslate) {
  detectTimer = 0;
  detection = followLanguage(retranslate).catch((err) => console.warn(`residual-mt demo: ${err.message}`));
}

// A translation asked for before the detection was due: detect now.
function flushDetection(retranslate) {
  if (!detectTimer) return;
  clearTimeout(detectTimer);
  detectNow(retranslate);
}

function chosenByHand() {
  byHand = true;
  clearTimeout(detectTimer);
  detectTimer = 0;
  delete ui.direction.dataset.detected;
  showDetected('chosen by you');
}

// ---- a page: the sample article in the source language, translated in place

const pageMode = () => document.querySelector('input[name=mode]:checked').value === 'page';

function showSample() {
  const [source] = selectedPair();
  live?.stop();
  live = null;
  const sample = $(`sample-${source}`) ?? $('sample-es');
  ui.sample.replaceChildren(sample.content.cloneNode(true));
  ui.sample.lang = sample.id.slice('sample-'.length);
  ui.sample.dataset.state = 'original';
  ui.restorePage.disabled = true;
}

async function translatePage() {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const started = performance.now();
  try {
    await load();
    const translator = await translatorFor(selectedPair());
    ui.sample.dataset.state = 'pending';
    await live?.restore();
    live = translateLive(ui.sample, translator, { signal: controller.signal, beam });
    if (await live.done === null) throw live.stats.errors[0] ?? controller.signal.reason;
    if (live.stats.errors.length) throw live.stats.errors[0];
    const { words } = live.stats;
    const ms = performance.now() - started;
    ui.stats.textContent = `${words} words in ${ms.toFixed(0)} ms · ${Math.round(words / Math.max(ms, 1) * 1000)} words/s`;
    ui.sample.dataset.state = 'done';
    ui.restorePage.disabled = false;
    clearError();
  } catch (err) {
    if (err.name === 'AbortError' && controller !== current) return;
    if (controller === current && ready) showError(`error: ${err.message}`);
    ui.sample.dataset.state = 'error';
    ui.restorePage.disabled = false;
  } finally {
    if (controller === current) current = null;
  }
}

async function restorePage() {
  current?.abort();
  const restoring = live;
  live = null;
  await restoring?.restore();
  ui.sample.dataset.state = 'original';
  ui.restorePage.disabled = true;
  ui.stats.textContent = '';
}

function showMode() {
  const page = pageMode();
  ui.textMode.hidden = page;
  ui.pageMode.hidden = !page;
  ui.translate.hidden = page;
  if (page && !ui.sample.childElementCount) showSample();
}

function schedule() {
  clearTimeout(debounce);
  ui.target.dataset.state = 'pending';
  debounce = setTimeout(translateNow, 300);
}

function showDirection() {
  const [s, t] = selectedPair();
  $('source-title').textContent = languageName(s);
  $('target-title').textContent = languageName(t);
  ui.swap.disabled = ![...ui.direction.options].some((o) => o.value === `${t}-${s}`);
  const samples = options.model === undefined ? SAMPLES[s] ?? [] : [];
  ui.source.placeholder = samples.length ? `Type or paste ${languageName(s)} text, for example: ${samples[0]}` : 'Type or paste text to translate';
  ui.samples.replaceChildren(...samples.map((text) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = text;
    button.addEventListener('click', () => {
      ui.source.value = text;
      clearTimeout(debounce);
      translateNow();
    });
    return button;
  }));
}

// The other direction, with the translation as the new source.
function swap() {
  chosenByHand();
  const [s, t] = selectedPair();
  ui.direction.value = `${t}-${s}`;
  if (ui.target.textContent) ui.source.value = ui.target.textContent;
  ui.target.textContent = '';
  ui.copy.disabled = true;
  showDirection();
  if (pageMode()) showSample();
  else if (ui.source.value) {
    clearTimeout(debounce);
    translateNow();
  }
}

async function main() {
  const missing = missingFeatures();
  if (missing) {
    setStatus(`unsupported: ${missing}`, true);
    return;
  }
  setStatus('loading…');
  ui.translate.addEventListener('click', () => { clearTimeout(debounce); translateNow(); });
  ui.source.addEventListener('input', () => {
    scheduleDetection();
    if (ui.live.checked) schedule();
  });
  ui.direction.addEventListener('change', () => {
    chosenByHand();
    showDirection();
    if (pageMode()) showSample();
    else if (ui.source.value) schedule();
  });
  for (const radio of document.querySelectorAll('input[name=mode]')) radio.addEventListener('change', showMode);
  ui.translatePage.addEventListener('click', translatePage);
  ui.restorePage.addEventListener('click', restorePage);
  ui.translatePage.disabled = false;
  showMode();
  ui.swap.addEventListener('click', swap);
  ui.copy.addEventListener('click', () => navigator.clipboard.writeText(ui.target.textContent).then(
    () => { ui.stats.textContent = 'copied'; }, (err) => showError(`could not copy: ${err.message}`)));
  ui.translate.disabled = false;
  await load().catch(() => {});
  if (ui.source.value) schedule();
}

main().catch((err) => {
  setStatus(`error: ${err.message}`, true);
  console.error(err);
});
