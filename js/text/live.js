// A page translated live: translatePage(root, translator, options) translates
// the text of root's subtree in place (html.js's runs, as translateElement
// does), what is in view first (IntersectionObserver), the rest when the page
// is idle, and from then on what the page adds or changes (MutationObserver:
// added nodes, changed text, changed attributes) as it appears; the
// attributes readers see (ATTRIBUTES) and <option> text too, and open shadow
// roots. Left alone: what html.js keeps (translate="no", .notranslate, code,
// ...) and editable regions. Returns a controller: stop() leaves the page as
// it is, restore() puts back the original (what the page changed since
// included: a text the page rewrote is left as the page wrote it).
//
// Our own writes are told from the page's by draining the observer's records
// around each write (takeRecords): a write of ours is never seen as a change
// to translate. A page script that answers our write with one of its own is
// bounded by LIVE_REWRITES. The main thread works in slices of LIVE_SLICE_MS;
// the engine runs in the translator's worker.

import { INLINE, applyRun, collectRuns, kept, undoRun } from './html.js';
import { countWords, textGroups } from './groups.js';
import { hasTranslatable } from './segment.js';
import { domTree } from './html-tree.js';
import { abortError } from '../util/errors.js';
import { LIVE_CACHE, LIVE_ECHO_MS, LIVE_IDLE_MS, LIVE_REWRITES, LIVE_SLICE_MS } from '../defaults.js';

// Attributes shown to readers, each with the elements that show it.
const ATTRIBUTES = {
  title: '[title]:not(link, style)',
  alt: '[alt]',
  placeholder: '[placeholder]',
  'aria-label': '[aria-label]',
  'aria-description': '[aria-description]',
  value: 'input[type=submit i][value], input[type=button i][value], input[type=reset i][value]',
  content: 'meta[name=description i][content]',
};
const SCAN = `${Object.values(ATTRIBUTES).join(', ')}, option`;
const OBSERVE = { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: Object.keys(ATTRIBUTES) };

// contenteditable's values: editable or not ('false' stops an ancestor's).
const EDITABLE = { '': true, true: true, 'plaintext-only': true, false: false };
const declined = (el) => Boolean(el.closest?.('[translate="no" i], .notranslate'));
const now = () => performance.now();

// Yields to the event loop: a task of its own after those waiting, so that
// input and rendering run in between (scheduler.yield() would come back
// before them, and delay the IntersectionObserver's reports).
const yieldTask = () => new Promise((resolve) => setTimeout(resolve, 0));

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function whenIdle(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const id = globalThis.requestIdleCallback ? requestIdleCallback(resolve, { timeout: LIVE_IDLE_MS }) : setTimeout(resolve, LIVE_IDLE_MS);
    signal.addEventListener('abort', () => (globalThis.cancelIdleCallback ?? clearTimeout)(id), { once: true });
    signal.addEventListener('abort', resolve, { once: true });
  });
}

function textNodes(nodes, out = []) {
  for (const node of nodes) {
    if (node.nodeType === 3) out.push(node);
    else if (node.nodeType === 1) textNodes(node.childNodes, out);
  }
  return out;
}

// Whether el's box meets the viewport. Read only until the
// IntersectionObserver's first report (it comes after a frame is drawn) and
// before our first write, while the layout is clean and reading it costs
// nothing: the text in view goes to the engine at once.
function inViewport(el) {
  const box = el.getBoundingClientRect();
  const view = el.ownerDocument.defaultView;
  return box.bottom > 0 && box.right > 0 && box.top < view.innerHeight && box.left < view.innerWidth && (box.width > 0 || box.height > 0);
}

// The element an item is seen through (IntersectionObserver takes elements).
function viewTarget(node) {
  if (node.nodeType === 11) return node.host ?? null;
  return node.closest?.('select') ?? node;
}

class LivePage {
  constructor(root, translator, options) {
    const { signal, ...translateOptions } = options;
    this.root = root.nodeType === 9 ? root.documentElement : root;
    this.langElement = this.root.nodeType === 1 ? this.root : null;  // a shadow root has no lang
    this.translator = translator;
    this.options = translateOptions;
    this.tree = domTree(this.root.ownerDocument);
    this.inFlight = new Set();  // items sent, not yet put in
    this.sending = new Map();   // text -> the engine call translating it
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.queue = [];            // items waiting: { kind, text, container | el+name, target }
    this.stack = [];            // containers still to walk
    this.records = new Map();   // container -> applyRun records, in the order applied
    this.attrs = new Map();     // element -> Map(name -> { original, written })
    this.ours = new WeakMap();  // text node we wrote -> its record
    this.echoes = new WeakMap(); // container or element -> Map(name -> { at, count })
    this.visible = new Set();
    this.observed = new Set();
    this.unseen = new Set();    // observed, not yet reported by the IntersectionObserver
    this.lastObserved = 0;
    this.cache = new Map();
    this.stats = { longestTask: null, runs: 0, attributes: 0, words: 0, batches: 0, engineTexts: 0, longestTaskMs: 0, firstScreenMs: null, doneMs: null, givenUp: 0, errors: [] };
    this.waiters = [];
    this.viewWaiters = [];
    this.firstScreen = new Promise((resolve) => { this.firstScreenReached = resolve; });
    this.done = new Promise((resolve) => { this.doneReached = resolve; });
  }

  start() {
    if (this.signal.aborted) return;
    this.started = now();
    this.lang = this.langElement?.getAttribute('lang') ?? null;  // now: a previous live translation restored
    this.mutations = new MutationObserver((records) => this.slice('changes', () => this.changed(records)));
    this.intersections = new IntersectionObserver((entries) => this.slice('view', () => this.seen(entries)));
    this.slice('start', () => {
      this.addScope(this.root);
      this.mutations.takeRecords();
    });
    this.walker().catch((err) => this.stats.errors.push(err));
    this.pump().catch((err) => this.stats.errors.push(err));
  }

  // Runs fn as one slice of our main-thread work, timed; stats name the
  // longest and its kind (start, walk, view, changes, apply, restore).
  slice(kind, fn) {
    return this.signal.aborted ? undefined : this.timed(kind, fn);
  }

  timed(kind, fn) {
    const started = now();
    try {
      return fn();
    } finally {
      const ms = now() - started;
      if (ms > this.stats.longestTaskMs) Object.assign(this.stats, { longestTaskMs: ms, longestTask: kind });
    }
  }

  // ------------------------------------------------------------ finding text

  addScope(scope) {
    this.mutations.observe(scope, OBSERVE);
    this.stack.push(scope);
    this.scan(scope);
  }

  // The attributes and <option>s in node's subtree.
  scan(node) {
    const els = node.querySelectorAll ? [...node.querySelectorAll(SCAN)] : [];
    if (node.nodeType === 1 && node.matches(SCAN)) els.unshift(node);
    for (const el of els) {
      if (declined(el)) continue;
      if (el.localName === 'option') this.addRuns(el);
      for (const [name, selector] of Object.entries(ATTRIBUTES)) if (el.matches(selector)) this.addAttribute(el, name);
    }
  }

  // Walks the containers on the stack until the slice's time is up.
  walk() {
    const end = now() + LIVE_SLICE_MS;
    while (this.stack.length && now() < end) {
      const container = this.stack.pop();
      if (!container.isConnected || this.leftAlone(container)) continue;
      const blocks = this.addRuns(container);
      for (let i = blocks.length; i--;) {
        if (blocks[i].shadowRoot) this.addScope(blocks[i].shadowRoot);
        this.stack.push(blocks[i]);
      }
    }
  }

  // Queues container's own runs (not those of its blocks: returned).
  addRuns(container) {
    const blocks = [];
    for (const run of collectRuns(container, this.tree, blocks)) {
      const texts = textNodes(run.nodes);
      if (texts.length && texts.every((node) => this.ours.has(node))) continue;  // our own output
      this.enqueue({ kind: 'run', run, container, text: run.text, target: viewTarget(container) });
    }
    return blocks;
  }

  addAttribute(el, name) {
    const value = el.getAttribute(name);
    if (value === null || !hasTranslatable(value) || this.attrs.get(el)?.get(name)?.written === value) return;
    this.enqueue({ kind: 'attribute', el, name, source: value, text: value.trim().replace(/\s+/gu, ' '), target: viewTarget(el) });
  }

  enqueue(item) {
    this.queue.push(item);
    if (item.target && !this.reported && !this.records.size && inViewport(item.target)) this.visible.add(item.target);
    if (item.target && !this.observed.has(item.target)) {
      this.observed.add(item.target);
      this.unseen.add(item.target);
      this.lastObserved = now();
      this.intersections.observe(item.target);
    }
    this.wake();
  }

  // Text under a kept element or in an editable region (an <option>'s
  // text is translated though its <select> is kept). Editable is read from
  // the attributes (the nearest contenteditable decides): isContentEditable
  // would make the browser compute styles after each of our writes.
  leftAlone(container) {
    if (container.nodeType !== 1) return false;
    if (this.root.ownerDocument.designMode === 'on') return true;
    const option = container.localName === 'option';
    let editable = null;
    for (let at = container; at?.nodeType === 1; at = at.parentNode) {
      if (option && at.localName === 'select') continue;
      if (kept(this.tree, at)) return true;
      editable ??= EDITABLE[at.getAttribute('contenteditable')?.toLowerCase()] ?? null;
    }
    return editable === true;
  }

  nextView() {
    return new Promise((resolve) => this.viewWaiters.push(resolve));
  }

  seen(entries) {
    this.reported = true;
    for (const resolve of this.viewWaiters.splice(0)) resolve();
    for (const entry of entries) {
      this.unseen.delete(entry.target);
      if (entry.isIntersecting) this.visible.add(entry.target);
      else this.visible.delete(entry.target);
    }
    this.wake();
  }

  // Whether the IntersectionObserver has reported what we observed (or
  // was given its time).
  viewKnown() {
    return !this.unseen.size || now() - this.lastObserved > 200;
  }

  // ------------------------------------------------------------ the page's changes

  changed(records) {
    for (const record of records) {
      if (record.type === 'attributes') this.attributeChanged(record.target, record.attributeName);
      else if (record.type === 'characterData') this.textChanged(record.target);
      else this.childrenChanged(record);
    }
    this.mutations.takeRecords();  // our undos' records
  }

  attributeChanged(el, name) {
    if (this.gaveUp(el, name)) return;
    const state = this.attrs.get(el)?.get(name);
    if (state && el.getAttribute(name) === state.written) return;
    if (state) {
      this.attrs.get(el).delete(name);  // the page's value now: restore() leaves it
      if (this.answered(el, name)) return;
    }
    this.queue = this.queue.filter((item) => !(item.el === el && item.name === name));
    if (el.matches(ATTRIBUTES[name]) && !declined(el)) this.addAttribute(el, name);
  }

  textChanged(node) {
    const record = this.ours.get(node);
    if (record) {
      record.stale = true;  // the page wrote into our text: it is the page's now
      this.ours.delete(node);
    }
    this.dirty(this.containerOf(node.parentNode));
  }

  childrenChanged({ target, addedNodes, removedNodes }) {
    let inline = false;
    for (const node of removedNodes) inline ||= node.nodeType !== 1 || INLINE.has(node.localName);
    for (const node of addedNodes) {
      if (node.nodeType !== 1) {
        inline ||= node.nodeType === 3;
        continue;
      }
      this.scan(node);
      if (INLINE.has(node.localName)) inline = true;
      else if (!this.leftAlone(node)) {
        if (node.shadowRoot) this.addScope(node.shadowRoot);
        this.stack.push(node);
      }
    }
    if (inline) this.dirty(this.containerOf(target));
    this.wake();
  }

  // The element whose runs hold node's text: its nearest ancestor (or
  // itself) that is not inline.
  containerOf(node) {
    let at = node;
    while (at?.nodeType === 1 && INLINE.has(at.localName) && at !== this.root) at = at.parentNode;
    return at;
  }

  // The runs of container changed: what we wrote there is undone where it
  // is intact, and its runs are queued again.
  dirty(container) {
    if (!container || (container.nodeType === 1 && this.leftAlone(container)) || this.gaveUp(container, '#text')) return;
    this.queue = this.queue.filter((item) => item.container !== container);
    for (const item of this.inFlight) if (item.container === container) item.stale = true;
    const records = this.records.get(container);
    if (records) {
      this.records.delete(container);
      for (const record of records.reverse()) if (this.intact(record)) undoRun(record, this.tree);
      if (this.answered(container, '#text')) return;  // left as the page made it
    }
    this.addRuns(container);
  }

  // Whether a change the page made right after our write to (key, name) is
  // one too many: then it is left as the page wrote it.
  answered(key, name) {
    const echo = this.echoes.get(key)?.get(name);
    if (!echo || now() - echo.at > LIVE_ECHO_MS) {
      if (echo) echo.count = 0;
      return false;
    }
    if (++echo.count < LIVE_REWRITES) return false;
    this.stats.givenUp++;
    echo.at = Infinity;  // never translated again
    return true;
  }

  gaveUp(key, name) {
    return this.echoes.get(key)?.get(name)?.at === Infinity;
  }

  wrote(key, name) {
    if (!this.echoes.has(key)) this.echoes.set(key, new Map());
    const echo = this.echoes.get(key).get(name) ?? { at: 0, count: 0 };
    if (echo.at !== Infinity) echo.at = now();
    this.echoes.get(key).set(name, echo);
  }

  intact(record) {
    return !record.stale && record.nodes.every((node) => node.parentNode === record.run.container) &&
      record.refilled.every(([el], i) => el.childNodes.length === record.children[i].length &&
        record.children[i].every((node, j) => el.childNodes[j] === node));
  }

  // ------------------------------------------------------------ translating

  // Walks what is on the stack, a slice at a time, beside the translation
  // (what is in view goes to the engine while the rest is walked).
  async walker() {
    while (!this.signal.aborted) {
      if (!this.stack.length) {
        await this.sleep();
        continue;
      }
      this.slice('walk', () => this.walk());
      if (!this.stack.length) this.wake();
      await yieldTask();
    }
  }

  async pump() {
    while (!this.signal.aborted) {
      if (!this.queue.length && this.stack.length) {
        await this.sleep();
        continue;
      }
      if (!this.queue.length) {
        this.reachedFirstScreen();
        if (this.stats.doneMs === null) this.finishedFirstPass();
        this.sleeping = true;
        await this.sleep();
        this.sleeping = false;
        continue;
      }
      const batch = await this.nextBatch();
      if (batch?.length) await this.translate(this.send(batch));
    }
  }

  // Puts a sent batch's translations in the page; the next batch goes to the
  // engine first, so that it decodes while this one is put in (and so on).
  async translate(sent) {
    for (let current = sent; current && !this.signal.aborted;) {
      await current.ready;
      const visible = this.queue.filter((item) => this.visible.has(item.target));
      if (!visible.length && !this.stack.length && this.viewKnown()) this.reachedFirstScreen();
      const next = this.queue.length && !this.signal.aborted ? this.takeBatch(visible) : null;
      const ahead = next?.length ? this.send(next) : null;
      await this.put(current.batch);
      current = ahead;
    }
  }

  // lang set once the page is translated (not at the start: a new lang on a
  // long page's root restyles all of it, and the first boxes read would wait for that).
  finishedFirstPass() {
    this.slice('apply', () => {
      this.langElement?.setAttribute('lang', this.translator.targetLanguage);
      this.mutations.takeRecords();
    });
    this.doneReached(this.stats.doneMs = now() - this.started);
  }

  reachedFirstScreen() {
    if (this.stats.firstScreenMs === null) this.firstScreenReached(this.stats.firstScreenMs = now() - this.started);
  }

  // What is in view first; the rest when the page is idle. A group of
  // PAGE_WORDS words (groups.js textGroups).
  async nextBatch() {
    let items = this.queue.filter((item) => this.visible.has(item.target));
    if (!items.length) {
      if (!this.viewKnown()) {
        await Promise.race([this.nextView(), delay(20)]);
        return null;
      }
      if (!this.stack.length) this.reachedFirstScreen();
      await whenIdle(this.signal);
    }
    return this.takeBatch(items);
  }

  // The first group of items (the queue when none), taken off the queue.
  takeBatch(items) {
    if (!items.length) items = this.queue;
    const [group] = textGroups(items.map((item) => item.text));
    if (!group) return null;
    const batch = items.slice(group.start, group.end);
    const taken = new Set(batch);
    this.queue = this.queue.filter((item) => !taken.has(item));
    return batch;
  }

  // Sends the batch's texts the engine has not had (nor has now) and
  // returns { batch, ready }: ready once all its texts' translations are known.
  send(batch) {
    const texts = [...new Set(batch.map((item) => item.text))];
    const todo = texts.filter((text) => !this.cache.has(text) && !this.sending.has(text));
    const waits = new Set(texts.map((text) => this.sending.get(text)).filter(Boolean));
    for (const item of batch) this.inFlight.add(item);
    if (todo.length) {
      const call = this.translator.translate(todo, { ...this.options, signal: this.signal, details: true, format: 'plain-text' })
        .then((results) => {
          this.stats.batches++;
          this.stats.engineTexts += todo.length;
          todo.forEach((text, i) => this.remember(text, results[i]));
        }, (err) => {
          if (!this.signal.aborted) this.stats.errors.push(err);  // its texts stay as they are
        })
        .finally(() => todo.forEach((text) => this.sending.delete(text)));
      for (const text of todo) this.sending.set(text, call);
      waits.add(call);
    }
    return { batch, ready: Promise.all(waits) };
  }

  async put(batch) {
    for (let at = 0; at < batch.length && !this.signal.aborted;) {
      at = this.slice('apply', () => this.applySome(batch, at));
      if (at < batch.length) await yieldTask();
    }
    for (const item of batch) this.inFlight.delete(item);
    this.unobserveDone(batch);
  }

  remember(text, result) {
    this.cache.delete(text);
    this.cache.set(text, result);
    if (this.cache.size > LIVE_CACHE) this.cache.delete(this.cache.keys().next().value);
  }

  // Applies batch[at...] until the slice's time is up; returns where it stopped.
  applySome(batch, at) {
    const end = now() + LIVE_SLICE_MS;
    this.changed(this.mutations.takeRecords());  // the page's changes first: they may make items stale
    for (; at < batch.length && now() < end; at++) {
      const item = batch[at];
      const result = this.cache.get(item.text);
      if (!result || item.stale) continue;  // the page changed it meanwhile: queued again
      if (item.kind === 'run') this.applyRun(item, result);
      else this.applyAttribute(item, result);
    }
    this.mutations.takeRecords();  // ours
    return at;
  }

  applyRun(item, result) {
    const { run, container } = item;
    if (!result.alignment || !container.isConnected || !run.nodes.every((node) => node.parentNode === container)) return;
    const before = new Set(textNodes(run.nodes));
    const record = applyRun(run, result, this.tree);
    record.children = record.refilled.map(([el]) => [...el.childNodes]);
    for (const node of textNodes(record.nodes)) if (!before.has(node)) this.ours.set(node, record);
    if (!this.records.has(container)) this.records.set(container, []);
    this.records.get(container).push(record);
    this.wrote(container, '#text');
    this.stats.runs++;
    this.stats.words += countWords(run.text);
  }

  applyAttribute({ el, name, source }, result) {
    if (el.getAttribute(name) !== source || !result.alignment) return;
    const written = source.match(/^\s*/u)[0] + result.text + source.match(/\s*$/u)[0];
    el.setAttribute(name, written);
    if (!this.attrs.has(el)) this.attrs.set(el, new Map());
    this.attrs.get(el).set(name, { original: source, written });
    this.wrote(el, name);
    this.stats.attributes++;
  }

  unobserveDone(batch) {
    const waiting = new Set(this.queue.map((item) => item.target));
    for (const { target } of batch) {
      if (target && !waiting.has(target) && this.observed.delete(target)) {
        this.intersections.unobserve(target);
        this.visible.delete(target);
      }
    }
  }

  sleep() {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  wake() {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  // Resolves once nothing is queued, walked or translated (after the
  // observers' pending records).
  async idle() {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (this.signal.aborted || (this.sleeping && !this.queue.length && !this.stack.length)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  // ------------------------------------------------------------ ending

  stop() {
    if (this.signal.aborted) return;
    this.controller.abort(abortError('residual-mt: the live translation was stopped'));
    this.mutations?.disconnect();
    this.intersections?.disconnect();
    this.queue = [];
    this.stack = [];
    this.wake();
    this.firstScreenReached(null);
    this.doneReached(null);
  }

  // Undoes what we wrote that the page has not changed since, in slices
  // (a long page's thousands of runs would be one long task).
  async restore() {
    this.stop();
    this.timed('restore', () => this.restoreAttributes());
    const records = [...this.records.values()].reverse().flatMap((list) => list.reverse());
    this.records.clear();
    for (let at = 0; at < records.length;) {
      at = this.timed('restore', () => {
        for (const end = now() + LIVE_SLICE_MS; at < records.length && now() < end; at++) {
          if (this.intact(records[at])) undoRun(records[at], this.tree);
        }
        return at;
      });
      if (at < records.length) await yieldTask();
    }
  }

  // The attributes and lang (at once: a small page is restored before restore() returns).
  restoreAttributes() {
    for (const [el, names] of this.attrs) {
      for (const [name, { original, written }] of names) if (el.getAttribute(name) === written) el.setAttribute(name, original);
    }
    this.attrs.clear();
    const el = this.langElement;
    if (el?.getAttribute('lang') === this.translator.targetLanguage) {
      if (this.lang === null) el.removeAttribute('lang');
      else el.setAttribute('lang', this.lang);
    }
  }
}

// root -> its LivePage, the latest.
const livePages = new WeakMap();

// Translates root (an element, a shadow root or a document) in place, live.
// options: signal (stops it), and the translator's options (beam, ...). A
// root translated live already is restored first.
// Returns { stop(), restore() (a promise: it works in slices), idle(),
// firstScreen, done, stats }: firstScreen
// and done resolve to the ms from the start to the text in view translated and
// to all of it (null when stopped before).
export function translatePage(root, translator, options = {}) {
  if (!root || ![1, 9, 11].includes(root.nodeType) || !(root.ownerDocument ?? root)) {
    throw new TypeError('residual-mt: translatePage() takes a DOM element, shadow root or document');
  }
  if (typeof translator?.translate !== 'function') throw new TypeError('residual-mt: translatePage() needs a translator');
  const page = new LivePage(root, translator, options);
  // A root translated live already is restored first (else its translation
  // would be taken for the page's text).
  const previous = livePages.get(page.root);
  livePages.set(page.root, page);
  if (previous) previous.restore().then(() => page.start());
  else page.start();
  return {
    stop: () => page.stop(),
    restore: () => page.restore(),
    idle: () => page.idle(),
    firstScreen: page.firstScreen,
    done: page.done,
    stats: page.stats,
  };
}
