// The two trees HTML translation works on, behind one small interface: a
// browser's DOM (a <template> for HTML strings, or a page's live elements) and
// parse5's tree in Node, where there is no DOM. No HTML is parsed or
// serialized here by hand: the browser or parse5 does both.
//
// A tree: kind(node) ('element' | 'text' | 'comment' | 'other'),
// name(element) (lower case), attr(element, name) (null when absent),
// children(node) (a copy), data(text node), textContent(node),
// createText(data), createComment(data), insertBefore(parent, node, ref)
// (ref null: at the end), remove(node); and for outline() below:
// namespace(element), attrs(element) ([qualified name, value] pairs),
// content(element) (a <template>'s content, else null), markup(element)
// (its children serialized).

import { isNode } from '../util/env.js';

export function domTree(document) {
  return {
    kind: (node) => ({ 1: 'element', 3: 'text', 8: 'comment' }[node.nodeType] ?? 'other'),
    name: (el) => el.localName,
    attr: (el, name) => el.getAttribute(name),
    children: (node) => Array.from(node.childNodes),
    data: (node) => node.data,
    textContent: (node) => node.textContent,
    createText: (data) => document.createTextNode(data),
    createComment: (data) => document.createComment(data),
    insertBefore: (parent, node, ref) => parent.insertBefore(node, ref),
    remove: (node) => node.remove(),
    namespace: (el) => el.namespaceURI,
    attrs: (el) => Array.from(el.attributes, (a) => [a.name, a.value]),
    content: (el) => (el.content?.nodeType === 11 ? el.content : null),  // 11: a DocumentFragment, of any realm
    markup: (el) => el.innerHTML,
  };
}

export function parse5Tree({ defaultTreeAdapter: adapter, serialize }) {
  const textContent = (node) => (adapter.isTextNode(node) ? node.value
    : (node.childNodes ?? []).map(textContent).join(''));
  return {
    kind: (node) => (adapter.isElementNode(node) ? 'element' : adapter.isTextNode(node) ? 'text'
      : adapter.isCommentNode(node) ? 'comment' : 'other'),
    name: (el) => el.tagName,
    attr: (el, name) => el.attrs.find((a) => a.name === name && !a.prefix)?.value ?? null,
    children: (node) => [...node.childNodes],
    data: (node) => node.value,
    textContent,
    createText: (data) => adapter.createTextNode(data),
    createComment: (data) => adapter.createCommentNode(data),
    insertBefore(parent, node, ref) {
      adapter.detachNode(node);
      if (ref) adapter.insertBefore(parent, node, ref);
      else adapter.appendChild(parent, node);
    },
    remove: (node) => adapter.detachNode(node),
    namespace: (el) => el.namespaceURI,
    attrs: (el) => el.attrs.map((a) => [a.prefix ? `${a.prefix}:${a.name}` : a.name, a.value]),
    content: (el) => el.content ?? null,
    markup: (el) => serialize(el),
  };
}

let parse5;
const INERT = { scriptingEnabled: false };

// A whole document (a doctype or an <html> tag first) rather than a fragment.
const DOCUMENT = /^\s*(<!--[^]*?-->\s*)*<(!doctype|html[\s>])/iu;

// HTML as a tree: { root, whole, tree, serialize() }, a whole document when
// the text is one (its <html>, <head> and <body> kept; `whole` says which
// parse to use, as when parsing a serialization again), else a fragment. In
// browsers the tree is inert (a <template>'s content or DOMParser's document: no script
// runs, no image loads); in Node it is parse5's, an optional peer
// dependency loaded on first use.
export async function parseHtml(html, whole = DOCUMENT.test(html)) {
  if (typeof document === 'object' && typeof document?.createElement === 'function') {
    if (whole) {
      const doc = new DOMParser().parseFromString(html, 'text/html');
      const serialize = () => Array.from(doc.childNodes, (node) => (node.nodeType === 10
        ? new XMLSerializer().serializeToString(node) : node.nodeType === 8 ? `<!--${node.data}-->` : node.outerHTML)).join('');
      return { root: doc, whole, tree: domTree(doc), serialize };
    }
    const template = document.createElement('template');
    template.innerHTML = html;
    return { root: template.content, whole, tree: domTree(document), serialize: () => template.innerHTML };
  }
  if (!isNode()) {
    throw new TypeError("residual-mt: format: 'html' needs a DOM (document.createElement) or, in Node, parse5");
  }
  try {
    parse5 ??= await import('parse5');
  } catch {
    throw new Error("residual-mt: format: 'html' in Node needs the parse5 package: npm install parse5");
  }
  // Scripting off, as a <template> and DOMParser parse in browsers: one tree in
  // both (a <noscript>'s content is elements, not text).
  const root = whole ? parse5.parse(html, INERT) : parse5.parseFragment(html, INERT);
  return { root, whole, tree: parse5Tree(parse5), serialize: () => parse5.serialize(root) };
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const NS_NAMES = { [HTML_NS]: 'html', 'http://www.w3.org/2000/svg': 'svg', 'http://www.w3.org/1998/Math/MathML': 'math' };

// What a parse of a tree's markup must give back for the markup to stand for
// the tree: its elements (namespace, name, attributes) and comments in
// document order, nested (')' closes an element), template contents
// included; text is left out (its whitespace and line breaks may come back
// otherwise, harmlessly). parseHtml() parses with scripting off, where a
// <noscript> holds elements; a page's innerHTML parses with it on, where a
// <noscript> is raw text up to the first "</noscript": markup of one that
// holds it elsewhere (in a comment, a <style>) is a different tree there,
// which `hazard` says. Walked without recursion (a kept subtree may nest
// deeper than the stack).
export function outline(root, tree) {
  const items = [];
  let hazard = null;
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    if (node === CLOSE) {
      items.push(')');
      continue;
    }
    const kind = tree.kind(node);
    if (kind === 'comment') items.push(`<!--${tree.data(node)}-->`);
    if (kind !== 'element' && node !== root) continue;
    if (kind === 'element') {
      items.push(`<${NS_NAMES[tree.namespace(node)] ?? tree.namespace(node)}:${tree.name(node)} ${JSON.stringify(tree.attrs(node))}`);
      stack.push(CLOSE);
      if (tree.name(node) === 'noscript' && tree.namespace(node) === HTML_NS && /<\/noscript/i.test(tree.markup(node))) {
        hazard ??= '<noscript> holding "</noscript"';
      }
    }
    const children = tree.children(tree.content(node) ?? node);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return { items, hazard };
}

const CLOSE = Symbol('close');
