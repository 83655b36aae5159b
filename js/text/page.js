// Translating a page in place: translateElement(element, translator)
// translates the text of a DOM subtree where it is, keeping its markup (the
// same element nodes, so links, listeners and styles stay), the text in view
// first, a batch of runs at a time; restoreElement(element) puts the original
// back. The work per run is html.js's.

import { applyRun, collectRuns, undoRun } from './html.js';
import { textGroups } from './groups.js';
import { domTree } from './html-tree.js';
import { abortError } from '../util/errors.js';
import { anySignal } from '../util/streams.js';

// element -> { controller, records, lang }: what restoreElement() undoes.
const translated = new WeakMap();

// Whether the run's element is (partly) in the viewport.
function inView(run) {
  const el = run.container.nodeType === 1 ? run.container : run.container.parentElement;
  const box = el?.getBoundingClientRect?.();
  const view = globalThis.window;
  if (!box || !view) return false;
  return box.bottom > 0 && box.right > 0 && box.top < view.innerHeight && box.left < view.innerWidth;
}

// Translates element's subtree in place. options: signal, and the
// translator's options (beam, ...). An element translated before is restored
// first. Resolves to { runs, words, ms }; rejects (keeping what was done)
// when aborted, by its signal or by restoreElement().
export async function translateElement(element, translator, options = {}) {
  if (!element || typeof element.nodeType !== 'number' || !element.ownerDocument) {
    throw new TypeError('residual-mt: translateElement() takes a DOM element');
  }
  if (typeof translator?.translate !== 'function') throw new TypeError('residual-mt: translateElement() needs a translator');
  restoreElement(element);
  const tree = domTree(element.ownerDocument);
  const state = { controller: new AbortController(), records: [], lang: element.getAttribute('lang') };
  translated.set(element, state);
  const signal = anySignal([options.signal, state.controller.signal]);
  const started = performance.now();
  const runs = collectRuns(element, tree);
  // The text in view first, then the rest in document order.
  const order = [...runs.filter(inView), ...runs.filter((run) => !inView(run))];
  let words = 0;
  for (const { start, end, words: batchWords } of textGroups(order.map((run) => run.text))) {
    const batch = order.slice(start, end);
    const results = await translator.translate(batch.map((run) => run.text), { ...options, signal, details: true, format: 'plain-text' });
    signal.throwIfAborted();
    batch.forEach((run, i) => {
      // A run the page changed meanwhile is left as it is now, and so is one
      // the translator did not translate (a same-language translator).
      if (!results[i].alignment || !run.nodes.every((node) => node.parentNode === run.container)) return;
      state.records.push(applyRun(run, results[i], tree));
    });
    words += batchWords;
  }
  element.setAttribute('lang', translator.targetLanguage);
  return { runs: runs.length, words, ms: performance.now() - started };
}

// Puts back the original content of an element translated by
// translateElement() (stopping a translation still running). Returns whether
// there was anything to restore.
export function restoreElement(element) {
  const state = translated.get(element);
  if (!state) return false;
  translated.delete(element);
  state.controller.abort(abortError('residual-mt: the element was restored'));
  const tree = domTree(element.ownerDocument);
  for (const record of state.records.reverse()) undoRun(record, tree);
  if (state.lang === null) element.removeAttribute('lang');
  else element.setAttribute('lang', state.lang);
  return true;
}
