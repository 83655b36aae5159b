// Splits text into the pieces the engine translates one by one: paragraphs
// (blank lines) first, then sentences (Intl.Segmenter when the runtime has it,
// rules otherwise). Whitespace between sentences is kept as it was, so joining
// the translations with it preserves paragraph and line breaks.

// Words whose trailing period does not end a sentence (en, es), lower case.
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'sra', 'srta', 'st', 'jr', 'vs', 'etc', 'e.g', 'i.e', 'cf', 'p.ej',
  'no', 'nº', 'núm', 'art', 'cap', 'vol', 'pág', 'págs', 'p', 'pp', 'ud', 'uds', 'inc', 'ltd', 'co', 'fig', 'ej',
  'a.m', 'p.m', 'aprox', 'dept', 'depto', 'gral', 'lic', 'ing', 'av', 'avda',
]);

const TERMINATOR = /([.!?…。！？]+)(["'”’»)\]]*)(\s+|$)|\n+/gu;

// Rule-based sentence split: each sentence keeps its trailing whitespace, like
// Intl.Segmenter's segments, so the pieces concatenate back to the input.
export function ruleSentences(text) {
  const out = [];
  let start = 0;
  TERMINATOR.lastIndex = 0;
  for (let m; (m = TERMINATOR.exec(text));) {
    if (m[0].length === 0) { TERMINATOR.lastIndex++; continue; }
    const end = m.index + m[0].length;
    if (m[1] === '.') {
      const word = /([\p{L}\p{N}.º]+)$/u.exec(text.slice(start, m.index))?.[1]?.toLowerCase() ?? '';
      const next = text.slice(end).match(/^\p{L}/u)?.[0] ?? '';
      // "Dr. Smith", "J. R. R.", "etc. and", "3.5" stay inside a sentence.
      if (ABBREVIATIONS.has(word) || /^\p{L}$/u.test(word) || (next && next === next.toLowerCase() && next !== next.toUpperCase())) continue;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

const segmenters = new Map();

function intlSentences(text, locale) {
  let segmenter = segmenters.get(locale ?? '');
  if (!segmenter) {
    try {
      segmenter = new Intl.Segmenter(locale || undefined, { granularity: 'sentence' });
    } catch {
      segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });
    }
    segmenters.set(locale ?? '', segmenter);
  }
  // ICU's segmenter breaks after "Dr." and initials; join those back.
  const out = [];
  let carry = '';
  for (const { segment } of segmenter.segment(text)) {
    const word = /([\p{L}\p{N}.º]+)\.\s+$/u.exec(segment)?.[1]?.toLowerCase();
    if (word && (ABBREVIATIONS.has(word) || /^\p{L}$/u.test(word))) { carry += segment; continue; }
    out.push(carry + segment);
    carry = '';
  }
  if (carry) out.push(carry);
  return out;
}

export function hasIntlSegmenter() {
  return typeof Intl === 'object' && typeof Intl.Segmenter === 'function';
}

// Sentences of one paragraph, each with its trailing whitespace.
export function splitSentences(text, { locale, rules = !hasIntlSegmenter() } = {}) {
  return rules ? ruleSentences(text) : intlSentences(text, locale);
}

// Pieces of `text`: { text, translate } where translate is false for
// whitespace. Concatenating every piece's text gives `text` back.
export function segmentText(text, options = {}) {
  const pieces = [];
  const push = (piece, translate) => {
    if (!piece) return;
    const last = pieces[pieces.length - 1];
    if (!translate && last && !last.translate) last.text += piece;
    else pieces.push({ text: piece, translate });
  };
  const paragraphs = text.split(/(\n[^\S\n]*\n\s*)/);
  paragraphs.forEach((paragraph, i) => {
    if (i % 2 === 1) { push(paragraph, false); return; }
    for (const sentence of splitSentences(paragraph, options)) {
      const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(sentence);
      push(m[1], false);
      push(m[2], true);
      push(m[3], false);
    }
  });
  return pieces;
}

// Splits a sentence that is too long for the model at word boundaries.
// countTokens(text) gives its length in tokens; every part is <= limit.
export function splitLong(sentence, limit, countTokens) {
  if (countTokens(sentence) <= limit) return [sentence];
  const words = sentence.split(/\s+/).filter(Boolean);
  if (words.length <= 1) {
    // One huge "word": cut it by characters.
    const chars = Array.from(sentence);
    if (chars.length <= 1) return [sentence];
    const half = chars.length >> 1;
    return [...splitLong(chars.slice(0, half).join(''), limit, countTokens),
      ...splitLong(chars.slice(half).join(''), limit, countTokens)];
  }
  const parts = [];
  let current = [];
  let currentTokens = 0;
  for (const word of words) {
    const n = countTokens(word);
    if (current.length && currentTokens + n > limit) {
      parts.push(current.join(' '));
      current = [];
      currentTokens = 0;
    }
    current.push(word);
    currentTokens += n;
  }
  if (current.length) parts.push(current.join(' '));
  // Token counts of words do not add up exactly; check and split again if needed.
  return parts.flatMap((part) => {
    if (countTokens(part) <= limit) return [part];
    const partWords = part.split(' ');
    if (partWords.length < words.length) return splitLong(part, limit, countTokens);
    const half = partWords.length >> 1; // nothing was split: halve
    return [...splitLong(partWords.slice(0, half).join(' '), limit, countTokens),
      ...splitLong(partWords.slice(half).join(' '), limit, countTokens)];
  });
}
