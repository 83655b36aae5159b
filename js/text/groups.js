// Text as the page side measures and groups it before it goes to the engine
// (no engine here): words, groups of texts for one translate() call each (a
// page, streamed HTML), and spans trimmed as they are shown.

import { PAGE_WORDS, STREAM_FIRST_WORDS, STREAM_WORDS } from '../defaults.js';

// A character of a word: what the word budgets count (countWords) and what
// aligned spans widen to (html.js).
export const WORD = /[\p{L}\p{N}\p{M}]/u;

// Words of a text (for batching by words and speed figures).
export function countWords(text) {
  return text.split(' ').filter((w) => WORD.test(w)).length;
}

// Groups of consecutive `texts` for one translate() call each (a page and
// streamed HTML go to the engine a group at a time, and the engine batches
// each group's sentences: planBatches): as many texts as fit in the group's
// budget of words, at least one. A page's groups have PAGE_WORDS each;
// with stream, the first has STREAM_FIRST_WORDS, each next one twice as many,
// up to STREAM_WORDS (defaults.js says why). Yields { start, end, words }.
export function* textGroups(texts, { stream = false } = {}) {
  let budget = stream ? STREAM_FIRST_WORDS : PAGE_WORDS;
  for (let start = 0; start < texts.length; budget = stream ? Math.min(2 * budget, STREAM_WORDS) : budget) {
    let end = start, words = 0;
    while (end < texts.length && (end === start || words + countWords(texts[end]) <= budget)) words += countWords(texts[end++]);
    yield { start, end, words };
    start = end;
  }
}

// [start, end] of `text` less the whitespace at either end (alignment spans
// as they are shown: alignmentLinks, html.js).
export function trimSpan(text, [start, end]) {
  while (start < end && /\s/u.test(text[start])) start++;
  while (end > start && /\s/u.test(text[end - 1])) end--;
  return [start, end];
}
