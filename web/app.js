// The demo: loads the default model (with a progress bar), translates as you
// type, shows latency and tokens/s, and works offline after the first visit
// (sw.js). Query parameters for testing: ?model=URL, ?beam=N, ?worker=0, ?sw=0.
import { DEFAULT_MODELS, createTranslator, modelInfo } from '../js/index.js';
import { missingFeatures } from '../js/loader.js';

const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'), progress: $('progress'), offline: $('offline'), direction: $('direction'), live: $('live'),
  stream: $('stream'), translate: $('translate'), source: $('source'), target: $('target'), stats: $('stats'),
  modelName: $('model-name'),
};
const params = new URLSearchParams(location.search);
const options = {
  model: params.get('model') ?? undefined,
  worker: params.get('worker') === '0' ? false : undefined,
};
const beam = params.has('beam') ? Number(params.get('beam')) : undefined;
const LANGUAGE_NAMES = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'language' }) : null;
const languageName = (code) => { try { return LANGUAGE_NAMES?.of(code) ?? code; } catch { return code; } };

const translators = new Map(); // "src-tgt" -> Promise<Translator>
let current = null;            // AbortController of the translation in progress
let debounce = 0;

function setStatus(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
}

let ready = false;

function showProgress(e) {
  if (!e.total || ready) return;
  ui.progress.hidden = false;
  ui.progress.value = e.loaded / e.total;
  if (e.loaded < e.total) setStatus(`downloading… ${Math.floor((100 * e.loaded) / e.total)}% of ${(e.total / 1e6).toFixed(1)} MB`);
  else setStatus('starting the engine…');
}

// The service worker caches the app, the engine and the model for offline use.
function startServiceWorker() {
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
  // The default-model list travels in the URL (the one config point is js/defaults.js).
  return sw.register(`./sw.js?models=${DEFAULT_MODELS.map(encodeURIComponent).join(',')}`).catch((err) => {
    console.warn(`residual-mt demo: no offline support (${err.message})`);
    return null;
  });
}

function translatorFor(pair) {
  const key = pair.join('-');
  if (!translators.has(key)) {
    const [sourceLanguage, targetLanguage] = pair[0] === '?' ? [undefined, undefined] : pair;
    translators.set(key, createTranslator({ ...options, sourceLanguage, targetLanguage, monitor: (m) => m.addEventListener('downloadprogress', showProgress) }));
  }
  return translators.get(key);
}

function selectedPair() {
  return ui.direction.value.split('-');
}

async function translateNow() {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const text = ui.source.value;
  const translator = await translatorFor(selectedPair());
  const started = performance.now();
  try {
    if (ui.stream.checked) {
      let first = 0;
      let output = '';
      for await (const chunk of translator.translateStreaming(text, { signal: controller.signal, beam })) {
        if (!first) first = performance.now() - started;
        output = chunk;
        ui.target.textContent = chunk;
      }
      if (controller !== current) return;
      const ms = performance.now() - started;
      ui.stats.textContent = output ? `first tokens after ${first.toFixed(0)} ms · done in ${ms.toFixed(0)} ms` : '';
    } else {
      const result = await translator.translate(text, { signal: controller.signal, beam, details: true });
      if (controller !== current) return;
      ui.target.textContent = result.text;
      const ms = performance.now() - started;
      ui.stats.textContent = result.outputTokens
        ? `${ms.toFixed(0)} ms · ${result.sentences} sentence${result.sentences === 1 ? '' : 's'} · ${result.outputTokens} tokens · ` +
          `${Math.round(result.outputTokens / Math.max(result.ms, 1e-3) * 1000)} tokens/s`
        : '';
    }
    ui.target.dataset.state = 'done';
  } catch (err) {
    if (err.name === 'AbortError') return; // a newer request replaced this one
    ui.stats.textContent = `error: ${err.message}`;
    ui.stats.classList.add('error');
  } finally {
    if (controller === current) current = null;
  }
}

function schedule() {
  clearTimeout(debounce);
  ui.target.dataset.state = 'pending';
  debounce = setTimeout(translateNow, 300);
}

async function main() {
  const missing = missingFeatures();
  if (missing) {
    setStatus(`unsupported: ${missing}`, true);
    return;
  }
  setStatus('loading…');
  const info = await modelInfo({ model: options.model });
  performance.mark('rmt-info');
  ui.modelName.textContent = info.url.replace(location.origin, '');
  const pairs = info.pairs.length ? info.pairs : [['?', '?']];
  for (const [s, t] of pairs) {
    ui.direction.append(new Option(s === '?' ? 'model default' : `${languageName(s)} → ${languageName(t)}`, `${s}-${t}`));
  }
  const preferred = pairs.findIndex(([s, t]) => s === 'es' && t === 'en');
  ui.direction.selectedIndex = Math.max(0, preferred);
  await translatorFor(selectedPair());
  performance.mark('rmt-ready');
  ui.progress.hidden = true;
  ui.direction.disabled = false;
  ui.translate.disabled = false;
  ready = true;
  setStatus('ready');
  document.documentElement.dataset.ready = 'true';

  ui.translate.addEventListener('click', () => { clearTimeout(debounce); translateNow(); });
  ui.source.addEventListener('input', () => { if (ui.live.checked) schedule(); });
  ui.direction.addEventListener('change', () => {
    const [s, t] = selectedPair();
    $('source-title').textContent = s === '?' ? 'Source' : languageName(s);
    $('target-title').textContent = t === '?' ? 'Translation' : languageName(t);
    if (ui.source.value) schedule();
  });
  ui.direction.dispatchEvent(new Event('change'));
  if (ui.source.value) schedule();

  // The service worker starts once the page is ready, so that it does not
  // compete with the first download; it then caches what the page has just
  // downloaded (from the HTTP cache, no second download) for offline use, and
  // on later visits looks for a newer version.
  if (await startServiceWorker()) {
    const { active } = await navigator.serviceWorker.ready;
    active.postMessage({ type: 'precache' });
  }
}

main().catch((err) => {
  setStatus(`error: ${err.message}`, true);
  console.error(err);
});

