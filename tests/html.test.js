// HTML translation (js/text/html.js) in Node, through parse5: where inline markup
// goes for given alignments (worked out by hand), then every snippet of
// tests/fixtures/html-snippets.js through the engine with the fixture model
// residual-text (random weights: any output, any alignment), checking what
// must hold whatever the model says: the same elements with the same
// attributes in the same nesting, comments, the untranslated parts and the
// whitespace around blocks unchanged, no word of the translation lost or
// repeated, inline elements on word boundaries and on the words aligned to
// theirs, streaming adding up to the result, and undo restoring the input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as parse5 from 'parse5';
import { createTranslator } from '../js/index.js';
import { applyRun, collectRuns, translateHtml, undoRun } from '../js/text/html.js';
import { parseHtml } from '../js/text/html-tree.js';
import { Engine } from '../js/engine/binding.js';
import { stepCounter } from './lib/steps.js';
import { SNIPPETS } from './fixtures/html-snippets.js';
import { VECTORS, fragment, random } from './fixtures/html-reparse.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}tests/fixtures/models/residual-text/`;
const GREEDY = { beam: 1 };

let t;
before(async () => {
  t = await createTranslator({ model: FIXTURE, sourceLanguage: 'es', targetLanguage: 'en' });
});
after(() => t?.destroy());

// ---------------------------------------------------------------- placement, by hand

// A translate() that answers each run's text with `target` and links given as
// [source word, target word] pairs (words: whitespace-separated, 0-based).
function fake(target, pairs) {
  const words = (text) => Array.from(text.matchAll(/\S+/g), (m) => [m.index, m.index + m[0].length]);
  return async (texts) => texts.map((source) => ({
    text: target,
    alignment: pairs.map(([s, t]) => ({ source: words(source)[s], target: words(target)[t] })),
    sentences: 1, outputTokens: 1, ms: 0,
  }));
}

async function place(html, target, pairs) {
  const [result] = await translateHtml(fake(target, pairs), [html], {});
  return result.text;
}

test('inline elements go around the target words aligned to theirs', async () => {
  assert.equal(await place('<p>Hola <b>mundo</b></p>', 'Hello world', [[0, 0], [1, 1]]), '<p>Hello <b>world</b></p>');
  // Reordered words, and reordered siblings.
  assert.equal(await place('<p>la casa <b>roja</b></p>', 'the red house', [[0, 0], [1, 2], [2, 1]]),
    '<p>the <b>red</b> house</p>');
  assert.equal(await place('<p><b>casa</b> <i>roja</i></p>', 'red house', [[0, 1], [1, 0]]), '<p><i>red</i> <b>house</b></p>');
  // Nested: the outer element spans its words, the inner one its own.
  assert.equal(await place('<p>una <em>muy <b>grande</b></em> casa</p>', 'a very big house', [[0, 0], [1, 1], [2, 2], [3, 3]]),
    '<p>a <em>very <b>big</b></em> house</p>');
  // Attributes and entities stay; punctuation the element did not hold stays out.
  assert.equal(await place('<p>Lee <a href="/a?x=1&amp;y=2" title="&quot;t&quot;">esto</a> ya</p>', 'Read this, now', [[0, 0], [1, 1], [2, 2]]),
    '<p>Read <a href="/a?x=1&amp;y=2" title="&quot;t&quot;">this</a>, now</p>');
  // Two source words to one target word and back.
  assert.equal(await place('<p>Él <b>se fue</b> ayer</p>', 'He left yesterday', [[0, 0], [1, 1], [2, 1], [3, 2]]),
    '<p>He <b>left</b> yesterday</p>');
  assert.equal(await place('<p><b>Vino</b> ayer</p>', 'He came yesterday', [[0, 0], [0, 1], [1, 2]]),
    '<p><b>He came</b> yesterday</p>');
});

test('where alignment says little: groups, word parts, unaligned elements, anchors and atoms', async () => {
  // Words aligned to the element in two places: the larger group.
  assert.equal(await place('<p>el <b>perro</b> y el gato</p>', 'the dog dog and the cat', [[0, 0], [1, 1], [1, 2], [2, 3], [3, 4], [4, 5], [1, 5]]),
    '<p>the <b>dog dog</b> and the cat</p>');
  // A token that is part of a word takes the whole word.
  const words = async (texts) => texts.map(() => ({ text: 'Hello world', alignment: [
    { source: [0, 4], target: [0, 5] }, { source: [5, 10], target: [6, 9] }], sentences: 1, outputTokens: 1, ms: 0 }));
  assert.equal((await translateHtml(words, ['<p>Hola <b>mundo</b></p>'], {}))[0].text, '<p>Hello <b>world</b></p>');
  // No target word aligned to the element: its share of the text by position.
  assert.equal(await place('<p>uno dos <b>tres</b></p>', 'one two three', [[0, 0], [1, 1]]), '<p>one two <b>three</b></p>');
  // An image follows the target words of the source word before it.
  assert.equal(await place('<p>Hola<img src="a.png"> mundo</p>', 'world Hello', [[0, 1], [1, 0]]),
    '<p>world Hello<img src="a.png"></p>');
  assert.equal(await place('<p><!--c-->Hola mundo</p>', 'Hello world', [[0, 0], [1, 1]]), '<p><!--c-->Hello world</p>');
  // Code replaces the model's version of its text, kept as it was.
  assert.equal(await place('<p>usa <code>ls -l</code> ahora</p>', 'use LS -L now', [[0, 0], [1, 1], [2, 2], [3, 3]]),
    '<p>use <code>ls -l</code> now</p>');
  // Code aligned to nothing goes after the word before it; no translated word is dropped.
  assert.equal(await place('<p>usa <code>ls</code> ahora</p>', 'use now', [[0, 0], [2, 1]]), '<p>use<code>ls</code> now</p>');
  // Siblings claiming the same words: the first in the translation keeps them.
  assert.equal(await place('<p><b>a</b> <i>b</i> c</p>', 'x y z', [[0, 0], [0, 1], [1, 1], [2, 2]]), '<p><b>x y</b><i></i> z</p>');
  // Whitespace around the text and between blocks stays as it was.
  assert.equal(await place('<div>\n  <p>\n    Hola <b>mundo</b>\n  </p>\n</div>', 'Hello world', [[0, 0], [1, 1]]),
    '<div>\n  <p>\n    Hello <b>world</b>\n  </p>\n</div>');
});

// ---------------------------------------------------------------- every snippet, through the engine

const isDocument = (html) => /^\s*(<!--[^]*?-->\s*)*<(!doctype|html[\s>])/i.test(html);
const parse = (html) => (isDocument(html) ? parse5.parse(html) : parse5.parseFragment(html));
const KEPT = new Set(['script', 'style', 'template', 'textarea', 'pre', 'code', 'kbd', 'samp', 'var', 'svg', 'math', 'select']);
const isKept = (node) => KEPT.has(node.tagName) || node.attrs.some((a) => (a.name === 'translate' && a.value === 'no') ||
  (a.name === 'class' && /(^|\s)notranslate(\s|$)/.test(a.value)));

// The tree without its translatable text: elements (attributes sorted),
// comments, kept elements whole, and the whitespace at either end of a block's
// content; an element's children as a sorted list, since inline siblings may
// change order with the words.
function shape(node) {
  if (node.nodeName === '#comment') return `<!--${node.data}-->`;
  if (node.nodeName === '#text' || node.nodeName === '#documentType') return '';
  if (!node.tagName) return `[${node.childNodes.map(shape).sort().join('')}]`;
  if (isKept(node)) return parse5.serializeOuter(node);
  const attrs = node.attrs.map((a) => `${a.name}=${JSON.stringify(a.value)}`).sort().join(' ');
  const first = node.childNodes[0], last = node.childNodes.at(-1);
  const edges = /^(p|div|li|td|th|h\d|ul|ol|table|tr|section|article|header|footer|nav|blockquote|dl|dd|dt|figure|figcaption|details|body)$/.test(node.tagName)
    ? JSON.stringify([first?.nodeName === '#text' ? first.value.match(/^\s*/)[0] : '', last?.nodeName === '#text' ? last.value.match(/\s*$/)[0] : '']) : '';
  return `<${node.tagName} ${attrs}${edges}>[${node.childNodes.map(shape).sort().join('')}]`;
}

test(`${SNIPPETS.length} snippets keep their elements, attributes, nesting, comments, untranslated parts and block whitespace`, async () => {
  assert.ok(SNIPPETS.length >= 50);
  const outputs = await t.translate(SNIPPETS, { ...GREEDY, format: 'html' });
  let changed = 0;
  SNIPPETS.forEach((html, i) => {
    const out = outputs[i];
    assert.equal(shape(parse(out)), shape(parse(html)), `snippet ${i}: ${html}\n -> ${out}`);
    // Well-formed: it serializes back to itself.
    assert.equal(parse5.serialize(parse(out)), parse5.serialize(parse(parse5.serialize(parse(out)))), `snippet ${i}`);
    if (out !== parse5.serialize(parse(html))) changed++;
  });
  // Only the snippets without translatable text come back unchanged.
  assert.ok(changed >= SNIPPETS.length - 3, `${changed} snippets translated`);
  // One at a time, as one batch: the same.
  assert.equal(await t.translate(SNIPPETS[1], { ...GREEDY, format: 'html' }), outputs[1]);
});

test('no word of the translation is lost or repeated, and inline elements sit on word boundaries and aligned words', async () => {
  const WORD = /[\p{L}\p{N}\p{M}]/u;
  let runs = 0, elements = 0, onAligned = 0;
  for (const html of SNIPPETS) {
    const doc = await parseHtml(html);
    for (const run of collectRuns(doc.root, doc.tree)) {
      const [result] = await t.translate([run.text], { ...GREEDY, details: true });
      const record = applyRun(run, result, doc.tree);
      const hasAtom = (items) => items.some((item) => item.role === 'atom' || hasAtom(item.children));
      if (hasAtom(run.items)) {  // an atom replaces the model's version of its text
        undoRun(record, doc.tree);
        continue;
      }
      runs++;
      // Where each placed element's text is in the translation.
      let text = '';
      const spans = new Map();
      const walk = (node) => {
        if (node.nodeName === '#text') text += node.value;
        const start = text.length;
        (node.childNodes ?? []).forEach(walk);
        if (node.tagName) spans.set(node, [start, text.length]);
      };
      record.nodes.forEach(walk);
      assert.equal(text, run.lead + result.text + run.trail, `${html}: the run's text is the translation`);
      const offset = run.lead.length;
      const top = run.items.filter((item) => item.role === 'inline');
      for (const item of top) {
        const [start, end] = spans.get(item.node).map((i) => i - offset);
        const T = result.text;
        elements++;
        assert.ok(!(WORD.test(T[start - 1] ?? '') && WORD.test(T[start] ?? '')) && !(WORD.test(T[end - 1] ?? '') && WORD.test(T[end] ?? '')),
          `${html}: <${item.node.tagName}> [${start}, ${end}) splits a word of ${JSON.stringify(T)}`);
        // Target words aligned only to this element's words (no sibling's) are inside it.
        const hits = (it) => result.alignment.filter((l) => l.source[0] < it.end && l.source[1] > it.start);
        const mine = hits(item).filter((l) => !top.some((other) => other !== item && hits(other).includes(l)));
        const others = top.filter((other) => other !== item).flatMap(hits);
        const free = mine.filter((l) => !others.some((o) => o.target[0] < l.target[1] && o.target[1] > l.target[0]));
        if (free.length && others.length === 0) {
          assert.ok(free.some((l) => l.target[0] >= start && l.target[1] <= end),
            `${html}: <${item.node.tagName}> at [${start}, ${end}) holds none of its aligned words ${JSON.stringify(free)}`);
          onAligned++;
        }
      }
      undoRun(record, doc.tree);
    }
    assert.equal(doc.serialize(), (await parseHtml(html)).serialize(), `${html}: undo restores the input`);
  }
  console.log(`${runs} runs, ${elements} inline elements, ${onAligned} checked on their aligned words`);
  assert.ok(runs > 40 && elements > 30 && onAligned > 5);
});

test('translateStreaming with format html: chunks add up to translate()\'s result', async () => {
  const long = `<article>${SNIPPETS.slice(0, 30).filter((s) => !isDocument(s)).join('\n')}</article>`;
  const whole = await t.translate(long, { ...GREEDY, format: 'html' });
  const chunks = [];
  for await (const chunk of t.translateStreaming(long, { ...GREEDY, format: 'html' })) chunks.push(chunk);
  assert.ok(chunks.length > 1, `${chunks.length} chunks`);
  assert.equal(chunks.join(''), whole);
  // Every chunk but the last ends where a block still to translate begins: the prefix so far is final.
  assert.ok(whole.startsWith(chunks[0]));
  // Cancelling stops it, counted in the engine's decoding steps (no timing).
  // Each chunk comes once a group of blocks is translated; the stream starts
  // the next group once the chunk is handed over. Cancelled right at its first
  // chunk, no next group runs; cancelled from inside the engine's work, 3
  // steps into the next group, that group is aborted: at most one step more
  // (the check before the next step sees it) and its batch never finishes.
  // The probe, queued behind the cancelled work, runs once that has left the
  // engine; its own steps are counted alone first.
  const counter = stepCounter();
  const options = { ...GREEDY, format: 'html' };
  try {
    counter.on();
    await t.translate('Hola', GREEDY);
    const probe = { ...counter };
    const since = (start) => ({ steps: counter.steps - probe.steps - start.steps, finished: counter.finished - probe.finished - start.finished });
    counter.on();
    const full = [];
    for await (const chunk of t.translateStreaming(long, options)) full.push({ chunk, ...counter });
    assert.ok(full.length > 2 && full[1].steps - full[0].steps > 5, `chunks at steps ${full.map((c) => c.steps)}`);
    // At the first chunk.
    counter.on();
    for await (const chunk of t.translateStreaming(long, options)) { assert.equal(chunk, full[0].chunk); break; }
    await t.translate('Hola', GREEDY);
    assert.deepEqual(since({ steps: full[0].steps, finished: full[0].finished }), { steps: 0, finished: 0 }, 'no work after the first chunk');
    // Inside the next group.
    counter.on();
    const reader = t.translateStreaming(long, options).getReader();
    const cancelled = new Promise((resolve) => counter.when(full[0].steps + 3, () => resolve(reader.cancel())));
    assert.deepEqual(await reader.read(), { done: false, value: full[0].chunk });
    await cancelled;
    await t.translate('Hola', GREEDY);
    const after = since({ steps: full[0].steps + 3, finished: full[0].finished });
    console.log(`html stream cancelled 3 steps into its second group: ${after.steps} steps more, ${after.finished} batches finished; ` +
      `a full run: chunks at steps ${full.map((c) => c.steps).join(', ')}`);
    assert.ok(after.steps <= 1 && after.finished === 0, `${after.steps} steps and ${after.finished} batches after the cancel`);
  } finally {
    counter.off();
  }
});

test('html: details, passthrough, nothing to translate, errors', async () => {
  const details = await t.translate('<p>Hola <b>mundo</b>.</p>', { ...GREEDY, format: 'html', details: true });
  assert.ok(details.text.startsWith('<p>') && details.sentences === 1 && details.outputTokens > 0);
  assert.equal(await t.translate('<p>123</p><br><img src="a">', { format: 'html' }), '<p>123</p><br><img src="a">');
  assert.equal(await t.translate('', { format: 'html' }), '');
  const same = await createTranslator({ model: FIXTURE, sourceLanguage: 'es', targetLanguage: 'es' });
  assert.equal(await same.translate('<p>Hola <b>mundo</b></p>', { format: 'html' }), '<p>Hola <b>mundo</b></p>');
  same.destroy();
  await assert.rejects(t.translate('<p>x</p>', { format: 'xml' }), TypeError);
  await assert.rejects(async () => { for await (const c of t.translateStreaming('<p>x</p>', { format: 'xml' })) assert.fail(c); }, TypeError);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(t.translate('<p>Hola</p>', { format: 'html', signal: controller.signal }), { name: 'AbortError' });
  await assert.rejects(t.translate(['<p>x</p>', 3], { format: 'html' }), TypeError);
  // Nesting deeper than browsers' parsers keep is refused, clearly; up to it, translated.
  const nested = (tag, n) => `${`<${tag}>`.repeat(n)}Hola mundo${`</${tag}>`.repeat(n)}`;
  for (const tag of ['div', 'b']) {
    assert.match(await t.translate(nested(tag, 500), { ...GREEDY, format: 'html' }), new RegExp(`^(<${tag}>){500}[^<]`));
    await assert.rejects(t.translate(nested(tag, 100_000), { ...GREEDY, format: 'html' }),
      (err) => err instanceof RangeError && /nested more than 512 elements deep/.test(err.message));
  }
  // Plain text stays plain: markup in it is text, sent to the model as it is
  // (its tokens count in the input usage) and translated as the engine
  // translates that string, not as format: 'html' translates the element.
  const markup = '<b>Hola</b>';
  const plain = await t.translate(markup, GREEDY);
  const engine = await Engine.load();
  const model = engine.loadModel({ config: readFileSync(`${FIXTURE}config.json`), weights: readFileSync(`${FIXTURE}model.safetensors`),
    spm: readFileSync(`${FIXTURE}spm.model`) });
  assert.equal(plain, model.translateTexts([markup], { ...GREEDY, targetLanguage: 'en' })[0][0].text.trim());
  assert.notEqual(model.translateTexts([markup], { ...GREEDY, targetLanguage: 'en' })[0][0].ids.join(),
    model.translateTexts(['Hola'], { ...GREEDY, targetLanguage: 'en' })[0][0].ids.join(), 'the model sees the markup');
  model.dispose();
  assert.ok(await t.measureInputUsage(markup) > await t.measureInputUsage('Hola'));
  assert.notEqual(plain, await t.translate(markup, { ...GREEDY, format: 'html' }));
});

// ---------------------------------------------------------------- markup that parses again as something else

// What `output`, parsed again, has that `input` parsed had not: elements
// (namespace, name and attributes: a <script>, an on* attribute or a
// javascript: URL included), parsed as parse5 parses by default (scripting
// on), with scripting off (as format: 'html' parses, and a browser's
// <template> and DOMParser) and inside a <div> (a page's innerHTML): the
// output must be safe wherever it is put. An element of the tree format:
// 'html' worked on (scripting off) is not new in any of them (the parser may
// copy one: formatting elements are reopened).
const DIV = parse5.parseFragment('<div></div>').childNodes[0];
const OFF = { scriptingEnabled: false };
const PARSES = [(h) => parse5.parseFragment(h), (h) => parse5.parseFragment(h, OFF), (h) => parse5.parseFragment(DIV, h)];
function elements(root) {
  const found = new Set();
  const walk = (node) => {
    if (node.tagName) {
      const attrs = node.attrs.map((a) => `${a.prefix ? `${a.prefix}:` : ''}${a.name}=${JSON.stringify(a.value)}`).sort().join(' ');
      found.add(`<${node.namespaceURI.split('/').pop()}:${node.tagName} ${attrs}>`);
    }
    for (const child of (node.content ?? node).childNodes ?? []) walk(child);
  };
  walk(root);
  return found;
}
function gained(input, output) {
  const worked = elements(parse5.parseFragment(input, OFF));
  return PARSES.flatMap((parse) => {
    const had = elements(parse(input));
    return [...elements(parse(output))].filter((item) => !had.has(item) && !worked.has(item));
  });
}
const notReadable = (err) => err.name === 'NotReadableError' && /cannot be translated safely/.test(err.message);

let real;
const shipped = () => (real ??= createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' }));
after(async () => (await real)?.destroy());

test(`${VECTORS.length} namespace-confusion and re-parse vectors: the output parses again with nothing new, or the call fails`, async () => {
  const translator = await shipped();
  const kinds = new Map();
  for (const { kind, html, reject: rejectIn } of VECTORS) {
    const reject = rejectIn === true;
    const out = await translator.translate(html, { ...GREEDY, format: 'html' }).catch((err) => err);
    if (typeof out === 'string') {
      assert.deepEqual(gained(html, out), [], `${kind}: ${html}\n -> ${out}`);
      assert.ok(!reject, `${kind}: not refused: ${html}\n -> ${out}`);
    } else {
      assert.ok(notReadable(out) && reject, `${kind}: ${html}\n -> ${out.stack}`);
    }
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  assert.ok(kinds.size >= 11, [...kinds.keys()].join(' '));
  // Rejected one by one and in a batch; streaming fails before its first chunk.
  const bad = VECTORS.find((v) => v.reject === true).html;
  await assert.rejects(translator.translate(['<p>Hola</p>', bad], { format: 'html' }), notReadable);
  const chunks = [];
  await assert.rejects(async () => { for await (const chunk of translator.translateStreaming(bad, { format: 'html' })) chunks.push(chunk); }, notReadable);
  assert.deepEqual(chunks, []);
});

// A translate() as fast as a stub can be, for thousands of fragments: each
// run's words reversed (inline elements move with their aligned words), and
// every third run with markup in its translation (text of a raw-text element
// such as <xmp> is written as it is).
async function stub(texts) {
  return texts.map((source, k) => {
    const words = Array.from(source.matchAll(/\S+/g), (m) => [m[0], m.index]).reverse();
    let text = '';
    const alignment = words.map(([word, at]) => {
      if (text) text += ' ';
      text += word;
      return { source: [at, at + word.length], target: [text.length - word.length, text.length] };
    });
    if (k % 3 === 2) text += ' </xmp></style><img src=x onerror=alert(1)>';
    return { text, alignment, sentences: 1, outputTokens: 1, ms: 0 };
  });
}

test('random fragments of those tags, attributes, comments and CDATA: no output parses again with anything new', async () => {
  const started = performance.now();
  const next = random(31);
  const fragments = Array.from({ length: 3000 }, () => fragment(next, 1 + Math.floor(next() * 12)));
  let refused = 0;
  for (const html of fragments) {
    const out = await translateHtml(stub, [html], {}).then(([r]) => r.text, (err) => err);
    if (out instanceof Error) {
      assert.ok(notReadable(out), `${html}\n -> ${out.stack}`);
      refused++;
    } else {
      assert.deepEqual(gained(html, out), [], `${html}\n -> ${out}`);
    }
  }
  // The real engine and model on a few hundred of them.
  const translator = await shipped();
  const some = fragments.filter((html, i) => i % 10 === 0);
  const outs = await Promise.all(some.map((html) => translator.translate(html, { ...GREEDY, format: 'html' }).catch((err) => err)));
  let realRefused = 0;
  some.forEach((html, i) => {
    if (outs[i] instanceof Error) {
      assert.ok(notReadable(outs[i]), `${html}\n -> ${outs[i].stack}`);
      realRefused++;
    } else {
      assert.deepEqual(gained(html, outs[i]), [], `${html}\n -> ${outs[i]}`);
    }
  });
  const ms = performance.now() - started;
  console.log(`${fragments.length} random fragments: ${refused} refused; ${some.length} through the engine: ${realRefused} refused; ${ms.toFixed(0)} ms`);
  assert.ok(refused < fragments.length / 4, `${refused} refused`);
});

// The shipped model copies <, > and & from the source to its translation, so
// its output holds them: written into the page as text, escaped (&lt;, &gt;,
// &amp;), never as markup. The plain-text translation of each run is what the
// HTML result must hold as text.
test('model output with <, > and & comes back escaped in format html (the shipped model)', async () => {
  const translator = await shipped();
  const escape = (text) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const textOf = (html) => {
    let text = '';
    const walk = (node) => (node.nodeName === '#text' ? (text += node.value) : (node.childNodes ?? []).forEach(walk));
    walk(parse5.parseFragment(html));
    return text;
  };
  // One text run: the result is the run's translation, escaped, in its element.
  const source = 'El valor debe ser < 10 y > 2. Tom & Jerry.';
  const plain = await translator.translate(source, GREEDY);
  for (const c of '<>&') assert.ok(plain.includes(c), `the model's output has ${c}: ${plain}`);
  assert.equal(await translator.translate(`<p>${escape(source)}</p>`, { ...GREEDY, format: 'html' }), `<p>${escape(plain)}</p>`);
  // With an inline element around some of them: the same text, no markup but the input's.
  const inline = '<p>Pulse <b>&lt;Enter&gt;</b> y luego &amp;.</p>';
  const wanted = await translator.translate('Pulse <Enter> y luego &.', GREEDY);
  for (const c of '<>&') assert.ok(wanted.includes(c), `the model's output has ${c}: ${wanted}`);
  const out = await translator.translate(inline, { ...GREEDY, format: 'html' });
  assert.equal(textOf(out), wanted, out);
  assert.equal(shape(parse(out)), shape(parse(inline)), out);
  const outside = out.replace(/<\/?(p|b)>/g, '');
  assert.ok(!/[<>]/.test(outside) && !/&(?!(lt|gt|amp);)/.test(outside), `unescaped text in ${out}`);
  assert.equal(outside, escape(wanted));
  // Streaming gives the same.
  let streamed = '';
  for await (const chunk of translator.translateStreaming(inline, { ...GREEDY, format: 'html' })) streamed += chunk;
  assert.equal(streamed, out);
});
