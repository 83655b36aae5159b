// The two trees HTML translation works on, behind one small interface: a
// browser's DOM (a <template> for HTML strings, or a page's live elements) and
// parse5's tree in Node, where there is no DOM. No HTML is parsed or
// serialized here by hand: the browser or parse5 does both.
//
// A tree: kind(node) ('element' | 'text' | 'comment' | 'other'),
// name(element) (lower case), attr(element, name) (null when absent),
// children(node) (a copy), data(text node), textContent(node),
// createText(data), createComment(data), insertBefore(parent, node, ref)
// (ref null: at the end), remove(node).

import { isNode } from './env.js';

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
  };
}

export function parse5Tree(adapter) {
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
  };
}

let parse5;

// A whole document (a doctype or an <html> tag first) rather than a fragment.
const DOCUMENT = /^\s*(<!--[^]*?-->\s*)*<(!doctype|html[\s>])/iu;

// HTML as a tree: { root, tree, serialize() }, a whole document when the text
// is one (its <html>, <head> and <body> kept), else a fragment. In browsers
// the tree is inert (a <template>'s content or DOMParser's document: no script
// runs, no image loads); in Node it is parse5's, an optional peer
// dependency loaded on first use.
export async function parseHtml(html) {
  const whole = DOCUMENT.test(html);
  if (typeof document === 'object' && typeof document?.createElement === 'function') {
    if (whole) {
      const doc = new DOMParser().parseFromString(html, 'text/html');
      const serialize = () => Array.from(doc.childNodes, (node) => (node.nodeType === 10
        ? new XMLSerializer().serializeToString(node) : node.nodeType === 8 ? `<!--${node.data}-->` : node.outerHTML)).join('');
      return { root: doc, tree: domTree(doc), serialize };
    }
    const template = document.createElement('template');
    template.innerHTML = html;
    return { root: template.content, tree: domTree(document), serialize: () => template.innerHTML };
  }
  if (!isNode()) {
    throw new TypeError("residual-mt: format: 'html' needs a DOM (document.createElement) or, in Node, parse5");
  }
  try {
    parse5 ??= await import('parse5');
  } catch {
    throw new Error("residual-mt: format: 'html' in Node needs the parse5 package: npm install parse5");
  }
  const root = whole ? parse5.parse(html) : parse5.parseFragment(html);
  return { root, tree: parse5Tree(parse5.defaultTreeAdapter), serialize: () => parse5.serialize(root) };
}
