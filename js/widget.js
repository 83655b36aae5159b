// A translation menu any site can drop in, with no build step:
//
//   <script type="module" src="https://cdn.jsdelivr.net/npm/residual-mt/js/widget.js"></script>
//
// adds a small language menu in a corner of the page (its own shadow root,
// translate="no"): the page's language detected by the LanguageDetector, the
// languages the model (or the catalogue: pivots through English included)
// translates it to, and the page translated in place, live (live.js). The
// choice is remembered for the site (localStorage) and made again on the next
// visit; the model is kept on the device (cache.js), so it works offline once
// downloaded. Options, as the script URL's query (widget.js?catalog=...) or
// as attributes of a <residual-mt-translate> element placed by the page
// (then no menu is added in the corner): model, catalog (URLs), source (the
// page's language, not detected), root (a CSS selector: what to translate).

import { createLanguageDetector } from './api/detector.js';
import { catalogEntries, createTranslator, modelInfo } from './api/translator.js';
import { findRoute } from './api/catalog.js';
import { canonicalTag, sameLanguage } from './util/languages.js';
import { translatePage } from './text/live.js';
import { WIDGET_MODEL_KEY, WIDGET_STORAGE_KEY, WIDGET_TAG } from './defaults.js';

const OPTIONS = ['model', 'catalog', 'source', 'root'];
// The text the detector reads: enough for a sure answer, little work.
const DETECT_CHARS = 4000;

const STYLE = `
:host { all: initial; font: 13px/1.3 system-ui, sans-serif; color-scheme: light dark; }
:host([floating]) { position: fixed; right: 12px; bottom: 12px; z-index: 2147483647; }
div { display: inline-flex; gap: 6px; align-items: center; padding: 4px 6px; border-radius: 6px;
  background: Canvas; color: CanvasText; border: 1px solid color-mix(in srgb, CanvasText 25%, transparent);
  box-shadow: 0 1px 4px rgb(0 0 0 / 15%); opacity: .92; }
select { font: inherit; color: inherit; background: transparent; border: 0; max-width: 16em; }
span:empty { display: none; }
`;

function languageName(tag, locale) {
  try {
    return new Intl.DisplayNames([locale, 'en'], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}

// The page's language: the detector's answer on its text, else its lang attribute.
async function pageLanguage(root) {
  const text = (root.innerText ?? root.textContent ?? '').slice(0, DETECT_CHARS);
  try {
    const detector = await createLanguageDetector();
    try {
      const [best] = await detector.detect(text);
      if (best && best.detectedLanguage !== 'und') return best.detectedLanguage;
    } finally {
      detector.destroy();
    }
  } catch (err) {
    console.warn(`residual-mt widget: no language detection (${err.message})`);
  }
  return root.closest?.('[lang]')?.getAttribute('lang') || document.documentElement.lang || null;
}

// The model's { url, pairs }: the `model` option's, else the default model,
// found once and then remembered for the site, so that a visit with no
// network loads it from the device (cache.js keeps its files by URL).
async function modelOf(model) {
  if (model) return modelInfo({ model });
  const kept = localStorage.getItem(WIDGET_MODEL_KEY);
  if (kept) {
    try {
      return await modelInfo({ model: kept });
    } catch {
      localStorage.removeItem(WIDGET_MODEL_KEY);
    }
  }
  const info = await modelInfo();
  localStorage.setItem(WIDGET_MODEL_KEY, info.url);
  return info;
}

// The languages source translates to: the model's pairs, or the catalogue's
// (a pair through English where no model has it).
function targetsOf(source, entries) {
  const languages = [...new Set(entries.flatMap((entry) => entry.pairs.flat()))];
  return languages.filter((target) => !sameLanguage(source, target) && findRoute(entries, source, target));
}

// (In Node, where there is no DOM, the module loads and defines nothing.)
export class TranslateWidget extends (globalThis.HTMLElement ?? Object) {
  #live = null;
  #translators = new Map();
  #select;
  #status;
  #source = null;
  #model = undefined;

  connectedCallback() {
    if (this.shadowRoot) return;
    this.setAttribute('translate', 'no');
    this.classList.add('notranslate');
    const shadow = this.attachShadow({ mode: 'open' });
    shadow.innerHTML = `<style>${STYLE}</style><div><select aria-label="Translate this page" disabled>` +
      '<option value="">…</option></select><span role="status"></span></div>';
    this.#select = shadow.querySelector('select');
    this.#status = shadow.querySelector('span');
    this.#select.addEventListener('change', () => this.#choose(this.#select.value));
    this.#start().catch((err) => this.#show(`not available: ${err.message}`, 'error'));
  }

  #option(name) {
    return this.getAttribute(name) || undefined;
  }

  #root() {
    return this.#option('root') ? document.querySelector(this.#option('root')) : document;
  }

  #show(text, state) {
    this.#status.textContent = text;
    if (state) this.dataset.state = state;
  }

  async #start() {
    const root = this.#root();
    const source = this.#option('source') ?? await pageLanguage(root.body ?? root);
    if (!source) throw new Error('the page\'s language is not known');
    this.#source = canonicalTag(source, 'sourceLanguage');
    this.dataset.source = this.#source;
    const catalog = this.#option('catalog');
    let entries;
    if (catalog) entries = await catalogEntries({ catalog });
    else {
      const { url, pairs } = await modelOf(this.#option('model'));
      this.#model = url;
      entries = [{ model: url, pairs }];
    }
    const targets = targetsOf(this.#source, entries);
    const locale = navigator.language;
    this.#select.replaceChildren(new Option(`${languageName(this.#source, locale)} (original)`, ''),
      ...targets.map((tag) => new Option(languageName(tag, locale), tag)));
    this.#select.disabled = false;
    this.#show('', 'ready');
    const kept = localStorage.getItem(WIDGET_STORAGE_KEY);
    if (kept && targets.includes(kept)) {
      this.#select.value = kept;
      await this.#choose(kept);
    }
  }

  async #choose(target) {
    const previous = this.#live;
    this.#live = null;
    await previous?.restore();
    if (!target) {
      localStorage.removeItem(WIDGET_STORAGE_KEY);
      this.#show('', 'original');
      return;
    }
    localStorage.setItem(WIDGET_STORAGE_KEY, target);
    try {
      const translator = await this.#translator(target);
      if (this.#select.value !== target) return;  // chosen again meanwhile
      this.#live = translatePage(this.#root(), translator);
      this.#show('', 'translating');
      await this.#live.done;
      if (this.#select.value === target) this.#show('', 'translated');
    } catch (err) {
      this.#show(err.message, 'error');
    }
  }

  #translator(target) {
    if (!this.#translators.has(target)) {
      const monitor = (m) => m.addEventListener('downloadprogress', (e) => this.#show(`${Math.round(100 * e.loaded)}%`));
      const created = createTranslator({ sourceLanguage: this.#source, targetLanguage: target, model: this.#model,
        catalog: this.#option('catalog'), monitor });
      created.catch(() => this.#translators.delete(target));
      this.#translators.set(target, created);
    }
    return this.#translators.get(target);
  }
}

// The script's own URL query: the options of the menu it adds.
function addFloating() {
  if (document.querySelector(WIDGET_TAG)) return;
  const query = new URL(import.meta.url).searchParams;
  const widget = document.createElement(WIDGET_TAG);
  widget.setAttribute('floating', '');
  for (const name of OPTIONS) if (query.has(name)) widget.setAttribute(name, query.get(name));
  document.body.append(widget);
}

if (typeof customElements === 'object' && !customElements.get(WIDGET_TAG)) {
  customElements.define(WIDGET_TAG, TranslateWidget);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', addFloating, { once: true });
  else addFloating();
}
