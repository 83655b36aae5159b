// Translating HTML while keeping its markup. A tree (html-tree.js) is cut
// into runs: the consecutive text and inline children of one element between
// two block-level ones (<p>Hola <b>mundo</b>.</p> is one run). Each run's
// text is translated as plain text with its alignment (translate(..., {
// details: true })): which source words each target word was aligned to. The
// run's inline elements then go around the target words aligned to the
// words they enclosed, reusing the very element nodes (attributes, listeners
// and all), so the output has the same elements, nested the same way.
//
// Never translated, kept as they are: script, style, code, pre and the rest
// of KEEP, translate="no" and class="notranslate". Inside a run such an
// element (inline code) is an atom: its text is shown to the model for
// context and the element replaces the target words aligned to it. Comments,
// images and other empty inline elements are anchors: they follow the target
// words of the source word before them.

import { outline, parseHtml } from './html-tree.js';
import { notReadable } from '../util/errors.js';
import { hasTranslatable } from './segment.js';
import { WORD, textGroups, trimSpan } from './groups.js';

// Inline (phrasing) elements that move with the words they hold.
export const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'big', 'button', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font',
  'i', 'ins', 'kbd', 'label', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var']);
// Empty inline elements: anchors.
const ANCHORS = new Set(['img', 'wbr', 'input']);
// Never translated.
const KEEP = new Set(['script', 'style', 'template', 'textarea', 'pre', 'code', 'kbd', 'samp', 'var', 'svg', 'math',
  'noscript', 'iframe', 'object', 'embed', 'canvas', 'video', 'audio', 'select']);

// Nesting deeper than this is refused (a RangeError) rather than walked:
// the walks here recurse, and browsers' HTML parsers stop nesting at 512 too.
const MAX_DEPTH = 512;
const tooDeep = () => new RangeError(`residual-mt: the HTML is nested more than ${MAX_DEPTH} elements deep`);

const SPACE = /\s/u;

export function kept(tree, el) {
  return KEEP.has(tree.name(el)) || tree.attr(el, 'translate')?.toLowerCase() === 'no' ||
    /(^|\s)notranslate(\s|$)/.test(tree.attr(el, 'class') ?? '');
}

// What a child does to the runs of its parent: 'text', 'inline' (an element
// inside the run), 'atom', 'anchor', 'block' (ends the run; its own children
// are walked) or 'boundary' (ends the run; left alone: kept blocks, <br>).
function role(tree, node, blockCache) {
  const kind = tree.kind(node);
  if (kind === 'text') return 'text';
  if (kind === 'comment') return 'anchor';
  if (kind !== 'element') return 'boundary';
  const name = tree.name(node);
  if (ANCHORS.has(name)) return 'anchor';
  if (name === 'br') return 'boundary';
  if (INLINE.has(name) && !holdsBlock(tree, node, blockCache)) return kept(tree, node) ? 'atom' : 'inline';
  return kept(tree, node) ? 'boundary' : 'block';
}

// An inline element holding a block or a line break (<a><div>…</div></a>) is
// walked as a block: rebuilding it as a run would flatten what it holds.
function holdsBlock(tree, el, cache, depth = 0) {
  if (cache.has(el)) return cache.get(el);
  if (depth > MAX_DEPTH) throw tooDeep();
  let found = false;
  for (const child of tree.children(el)) {
    if (tree.kind(child) !== 'element') continue;
    const name = tree.name(child);
    if (name === 'br' || (!INLINE.has(name) && !ANCHORS.has(name)) || holdsBlock(tree, child, cache, depth + 1)) {
      found = true;
      break;
    }
  }
  cache.set(el, found);
  return found;
}

// The runs under `root` with something to translate, in document order:
// { container, nodes (consecutive children of container), text (whitespace
// runs made one space, trimmed), items (its inline elements, atoms and anchors
// as a tree: { node, role, start, end, children } in text positions), lead
// and trail (whitespace kept around the translation) }. With `blocks` (an
// array), the block children of root are put there instead of walked: a live
// page (live.js) walks its tree a slice at a time.
export function collectRuns(root, tree, blocks = null) {
  const runs = [];
  const blockCache = new Map();
  const walk = (container, depth) => {
    if (depth > MAX_DEPTH) throw tooDeep();
    let nodes = [];
    const flush = () => {
      if (nodes.length) {
        const run = buildRun(container, nodes, tree, blockCache);
        if (hasTranslatable(run.text)) runs.push(run);
      }
      nodes = [];
    };
    for (const child of tree.children(container)) {
      const r = role(tree, child, blockCache);
      if (r === 'block' || r === 'boundary') {
        flush();
        if (r === 'block' && blocks) blocks.push(child);
        else if (r === 'block') walk(child, depth + 1);
      } else {
        nodes.push(child);
      }
    }
    flush();
  };
  walk(root, 0);
  return runs;
}

function buildRun(container, nodes, tree, blockCache) {
  let text = '';
  const add = (data) => {
    for (const ch of data) {
      if (!SPACE.test(ch)) text += ch;
      else if (text && !text.endsWith(' ')) text += ' ';
    }
  };
  const itemOf = (node) => {
    const r = role(tree, node, blockCache);
    if (r === 'text') {
      add(tree.data(node));
      return null;
    }
    const item = { node, role: r, start: text.length, end: text.length, children: [] };
    if (r === 'atom') add(tree.textContent(node));
    if (r === 'inline') item.children = tree.children(node).map(itemOf).filter(Boolean);
    item.end = text.length;
    return item;
  };
  const items = nodes.map(itemOf).filter(Boolean);
  // Positions were counted in the text with its first space: trim, and keep
  // each item's range on its words.
  const lead = text.startsWith(' ') ? 1 : 0;
  text = text.slice(lead).trimEnd();
  const fix = (item) => {
    item.start = Math.min(Math.max(item.start - lead, 0), text.length);
    item.end = Math.min(Math.max(item.end - lead, item.start), text.length);
    if (item.role !== 'anchor') [item.start, item.end] = trimSpan(text, [item.start, item.end]);
    item.children.forEach(fix);
  };
  items.forEach(fix);
  // The whitespace around the text (line breaks, indentation) stays as it was.
  const first = nodes[0], last = nodes[nodes.length - 1];
  return {
    container, nodes, text, items,
    lead: tree.kind(first) === 'text' ? tree.data(first).match(/^\s*/u)[0] : '',
    trail: tree.kind(last) === 'text' ? tree.data(last).match(/\s*$/u)[0] : '',
  };
}

// [start, end] widened to whole words of `text` (a token is often part of
// one) and trimmed of whitespace.
function wholeWords(text, start, end) {
  while (start > 0 && WORD.test(text[start - 1]) && WORD.test(text[start])) start--;
  while (end < text.length && end > 0 && WORD.test(text[end - 1]) && WORD.test(text[end])) end++;
  return trimSpan(text, [start, end]);
}

// [start, end] less the punctuation at an end where the element's own text
// has none (its words aligned to "world," take "world"), unless nothing is left.
function wordsOnly(target, [start, end], own) {
  let s = start, e = end;
  if (WORD.test(own[0] ?? '')) while (s < e && !WORD.test(target[s])) s++;
  if (WORD.test(own[own.length - 1] ?? '')) while (e > s && !WORD.test(target[e - 1])) e--;
  return s < e ? [s, e] : [start, end];
}

// Where an item goes in the translation `target` of `source`, given the
// links { source: [s, e], target: [s, e] } sorted by target position.
// Elements and atoms: the target words aligned to their words; of several
// groups (separated by words aligned elsewhere), the largest. An element
// aligned to nothing keeps its share of the text by position; an atom
// aligned to nothing and an anchor follow the target words of the source
// word before them.
function project(item, links, source, target) {
  if (item.role !== 'anchor' && item.end > item.start) {
    let best = null, group = null;
    for (const link of links) {
      if (link.source[0] < item.end && link.source[1] > item.start) {
        group ??= { start: link.target[0], end: link.target[1], count: 0 };
        group.end = Math.max(group.end, link.target[1]);
        group.count++;
        if (!best || group.count > best.count) best = group;
      } else {
        group = null;
      }
    }
    if (best) return wordsOnly(target, wholeWords(target, best.start, best.end), source.slice(item.start, item.end));
    if (item.role === 'inline') {
      const scale = target.length / Math.max(1, source.length);
      return wholeWords(target, Math.round(item.start * scale), Math.round(item.end * scale));
    }
  }
  let before = null;
  for (const link of links) {
    if (link.source[1] <= item.start && (!before || link.source[1] > before.source[1] ||
      (link.source[1] === before.source[1] && link.target[1] > before.target[1]))) before = link;
  }
  const at = before ? wholeWords(target, before.target[0], before.target[1])[1] : 0;
  return [at, at];
}

// Places sibling items inside [lo, hi] of the target: each projected and
// clipped to the parent, then in target order each starts where the one
// before ended (an element whose words a sibling took is left empty there).
function layout(items, lo, hi, ctx) {
  const placed = items.map((item, order) => {
    const [start, end] = project(item, ctx.links, ctx.source, ctx.target);
    const s = Math.min(Math.max(start, lo), hi);
    return { item, order, start: s, end: Math.min(Math.max(end, s), hi), children: [] };
  });
  placed.sort((a, b) => a.start - b.start || a.order - b.order);
  let at = lo;
  for (const p of placed) {
    p.start = Math.max(p.start, at);
    p.end = Math.max(p.end, p.start);
    at = p.end;
    if (p.item.role === 'inline') p.children = layout(p.item.children, p.start, p.end, ctx);
  }
  return placed;
}

// The nodes of target[lo, hi] with the placed items: new text nodes between
// them, each inline element refilled with its own part.
function build(placed, lo, hi, ctx, tree) {
  const nodes = [];
  let at = lo;
  const text = (end) => {
    if (end > at) nodes.push(tree.createText(ctx.target.slice(at, end)));
    at = Math.max(at, end);
  };
  for (const p of placed) {
    text(p.start);
    if (p.item.role === 'inline') {
      ctx.refilled.push([p.item.node, tree.children(p.item.node)]);
      setChildren(tree, p.item.node, build(p.children, p.start, p.end, ctx, tree));
    }
    nodes.push(p.item.node);
    at = Math.max(at, p.end);  // an atom's range: the model's version of its text, replaced by it
  }
  text(hi);
  return nodes;
}

function setChildren(tree, el, nodes) {
  for (const child of tree.children(el)) tree.remove(child);
  for (const node of nodes) tree.insertBefore(el, node, null);
}

// Replaces consecutive children of parent; newNodes may reuse some of them.
function replaceNodes(tree, parent, oldNodes, newNodes) {
  const mark = tree.createText('');
  tree.insertBefore(parent, mark, oldNodes[0]);
  for (const node of oldNodes) tree.remove(node);
  for (const node of newNodes) tree.insertBefore(parent, node, mark);
  tree.remove(mark);
}

// Puts the translation of a run ({ text, alignment }: translate()'s details)
// in its place. Returns what undo() needs to put the original back.
export function applyRun(run, translation, tree) {
  const ctx = {
    source: run.text,
    target: translation.text,
    links: [...translation.alignment ?? []].sort((a, b) => a.target[0] - b.target[0] || a.target[1] - b.target[1]),
    refilled: [],
  };
  const placed = layout(run.items, 0, ctx.target.length, ctx);
  const nodes = build(placed, 0, ctx.target.length, ctx, tree);
  if (run.lead) nodes.unshift(tree.createText(run.lead));
  if (run.trail) nodes.push(tree.createText(run.trail));
  replaceNodes(tree, run.container, run.nodes, nodes);
  return { run, nodes, refilled: ctx.refilled };
}

// Puts back what applyRun replaced.
export function undoRun(record, tree) {
  for (const [el, children] of record.refilled) setChildren(tree, el, children);
  replaceNodes(tree, record.run.container, record.nodes, record.run.nodes);
}

// ---------------------------------------------------------------- HTML strings

// The markup of a translated document, once it is known to parse again, as
// the platform's parser parses it (html-tree.js), to the very tree it was
// written from: the input's own elements, namespaces and attributes (the
// translation only replaces text and moves inline elements among their
// siblings). Some trees cannot be written as markup: namespace-confusion
// inputs (an HTML <style> inside MathML, nested forms, ...) parse to a tree
// whose serialization parses to another, where text of the input can become
// live elements and attributes (mutation XSS). Then the call fails with a
// NotReadableError rather than return markup that is not what it stands
// for (docs/API.md says why not escape it instead).
async function checkedMarkup(doc) {
  const html = doc.serialize();
  const again = await parseHtml(html, doc.whole);
  const want = outline(doc.root, doc.tree), got = outline(again.root, again.tree);
  let at = want.items.findIndex((item, i) => item !== got.items[i]);
  if (at < 0 && got.items.length > want.items.length) at = want.items.length;
  if (at >= 0 || want.hazard) {
    const where = want.hazard ?? `${(got.items[at] ?? want.items[at]).slice(0, 80)} where the input has ${(want.items[at] ?? 'nothing').slice(0, 80)}`;
    throw notReadable(`the HTML cannot be translated safely: its tree does not survive being written as markup and parsed ` +
      `again (${where}), as in namespace-confusion (mutation XSS) attacks; nothing is returned`);
  }
  return html;
}

// translate(texts, options) is the translator's own (details: alignment).
// Returns per HTML string { text, sentences, outputTokens, ms }; rejects with
// a NotReadableError when one of them would not parse again to its tree
// (checkedMarkup). When some sentences get no translation, the error's `translations` holds these
// results with those sentences as they were (in place: their markup too).
export async function translateHtml(translate, htmls, options) {
  const docs = await Promise.all(htmls.map((html) => parseHtml(html)));
  const runs = docs.map((doc) => collectRuns(doc.root, doc.tree));
  const texts = runs.flat().map((run) => run.text);
  let results = [], failed = null;
  try {
    if (texts.length) results = await translate(texts, { ...options, details: true });
  } catch (err) {
    if (!Array.isArray(err.translations)) throw err;
    [results, failed] = [err.translations, err];
  }
  let next = 0;
  const out = await Promise.all(docs.map((doc, d) => {
    const totals = { sentences: 0, outputTokens: 0, ms: 0 };
    for (const run of runs[d]) {
      const result = results[next++];
      applyRun(run, result, doc.tree);
      totals.sentences += result.sentences;
      totals.outputTokens += result.outputTokens;
      totals.ms += result.ms;
    }
    return checkedMarkup(doc).then((text) => ({ text, ...totals }));
  }));
  if (failed) {
    failed.translations = out;
    throw failed;
  }
  return out;
}

// Chunks of translated HTML that add up to translateHtml()'s text: each
// ends just before the next run still to translate.
export async function* translateHtmlStreaming(translate, html, options) {
  const doc = await parseHtml(html);
  const runs = collectRuns(doc.root, doc.tree);
  const marker = `residual-mt-${Math.random().toString(36).slice(2)}`;
  let emitted = '', all = null;
  for (const { start, end } of textGroups(runs.map((run) => run.text), { stream: true })) {
    const group = runs.slice(start, end);
    const results = await translate(group.map((run) => run.text), { ...options, details: true });
    group.forEach((run, i) => applyRun(run, results[i], doc.tree));
    let done = await checkedMarkup(doc);  // the whole translation so far: every chunk is a prefix of checked markup
    if (end === runs.length) all = done;  // the last group: checked once, not again below
    else {
      // Up to the next run: a comment marks where it starts.
      const { container, nodes } = runs[end];
      const comment = doc.tree.createComment(marker);
      doc.tree.insertBefore(container, comment, nodes[0]);
      const full = doc.serialize();
      doc.tree.remove(comment);
      done = full.slice(0, full.indexOf(`<!--${marker}-->`));
    }
    if (!done.startsWith(emitted)) throw new Error('residual-mt: the streamed HTML is not the start of the translation (a bug: please report it)');
    if (done.length > emitted.length) yield done.slice(emitted.length);
    emitted = done;
  }
  all ??= await checkedMarkup(doc);  // no run to translate
  if (all.length > emitted.length) yield all.slice(emitted.length);
}
