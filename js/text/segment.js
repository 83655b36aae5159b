// Rule of js/text/: text before and after the engine, with no engine of its
// own (sentences, words, HTML, a page's runs). Imports only util/ (and
// defaults.js).
//
// Splits text into the pieces the engine translates one by one: paragraphs
// (blank lines) first, then sentences (Intl.Segmenter when the runtime has it,
// rules otherwise). Whitespace between sentences is kept as it was, so joining
// the translations with it preserves paragraph and line breaks.
//
// Every scan here is linear in the text's length (each character is looked at
// a bounded number of times: no regular expression that backtracks over a run,
// no slice of the rest of the text per sentence), and the pieces come from a
// generator, so a caller can yield between them (js/engine/pipeline.js does).

// Words whose trailing period does not end a sentence (en, es), lower case.
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'sra', 'srta', 'st', 'jr', 'vs', 'etc', 'e.g', 'i.e', 'cf', 'p.ej',
  'no', 'nº', 'núm', 'art', 'cap', 'vol', 'pág', 'págs', 'p', 'pp', 'ud', 'uds', 'inc', 'ltd', 'co', 'fig', 'ej',
  'a.m', 'p.m', 'aprox', 'dept', 'depto', 'gral', 'lic', 'ing', 'av', 'avda',
]);

const TERMINATORS = '.!?…。！？';
const CLOSERS = '"\'”’»)]';
const SPACE = /^\s$/u;
const WORD_CHAR = /^[\p{L}\p{N}.º]$/u;
const LETTER = /^\p{L}$/u;
const HAS_LETTER = /\p{L}/u;

// \s, with ASCII answered without a regular expression (these run per character).
function isSpace(ch) {
  if (ch === undefined) return false;
  const c = ch.charCodeAt(0);
  return c < 128 ? c === 32 || (c >= 9 && c <= 13) : SPACE.test(ch);
}

function isWordChar(ch) {
  const c = ch.charCodeAt(0);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 46;
  return WORD_CHAR.test(ch);
}

// The code point ending just before `index` ([high, low] surrogates taken together).
function charBefore(text, index) {
  const low = text.charCodeAt(index - 1);
  return low >= 0xdc00 && low <= 0xdfff && index >= 2 ? text.slice(index - 2, index) : text[index - 1];
}

// The run of word characters ([\p{L}\p{N}.º]) ending at `index`, not before `from`.
function wordBefore(text, index, from) {
  let start = index;
  while (start > from) {
    const ch = charBefore(text, start);
    if (!isWordChar(ch)) break;
    start -= ch.length;
  }
  return text.slice(start, index);
}

// Whether a period after `word`, followed by the letter `next`, leaves the sentence open:
// "Dr. Smith", "J. R. R.", "etc. and", "3.5".
function periodContinues(word, next) {
  const lower = word.toLowerCase();
  return ABBREVIATIONS.has(lower) || LETTER.test(word) ||
    (!!next && next === next.toLowerCase() && next !== next.toUpperCase());
}

// Rule-based sentence split: each sentence keeps its trailing whitespace, like
// Intl.Segmenter's segments, so the pieces concatenate back to the input. A
// sentence ends after a run of terminators (and closing quotes) followed by
// whitespace or the end, or at a line break.
export function* ruleSentenceIterator(text) {
  let start = 0;
  for (let i = 0; i < text.length;) {
    const ch = text[i];
    if (ch === '\n') {
      let end = i;
      while (text[end] === '\n') end++;
      yield text.slice(start, end);
      start = i = end;
      continue;
    }
    if (!TERMINATORS.includes(ch)) {
      i++;
      continue;
    }
    const first = i;
    let run = i;
    while (run < text.length && TERMINATORS.includes(text[run])) run++;
    let closed = run;
    while (closed < text.length && CLOSERS.includes(text[closed])) closed++;
    let end = closed;
    while (end < text.length && isSpace(text[end])) end++;
    i = end === closed && closed < text.length ? run : end; // no whitespace after: no end in this run either
    if (i === run) continue;
    if (run - first === 1 && ch === '.') {
      const next = text.codePointAt(end);
      if (periodContinues(wordBefore(text, first, start), next === undefined ? '' : String.fromCodePoint(next))) continue;
    }
    yield text.slice(start, end);
    start = end;
  }
  if (start < text.length) yield text.slice(start);
}

export function ruleSentences(text) {
  return Array.from(ruleSentenceIterator(text));
}

const segmenters = new Map();

function intlSegmenter(locale) {
  let segmenter = segmenters.get(locale ?? '');
  if (!segmenter) {
    try {
      segmenter = new Intl.Segmenter(locale || undefined, { granularity: 'sentence' });
    } catch {
      segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });
    }
    segmenters.set(locale ?? '', segmenter);
  }
  return segmenter;
}

// ICU's sentences of `text`, segmenting a window at a time: V8's segment
// iterator costs time proportional to the string it segments for every
// segment (1 MB of "Dr. " took minutes). All but the window's last sentence
// are final (each kept break is followed, inside the window, by the next
// break's terminator, which ends the rules' lookahead); the last is segmented
// again with the next window. A sentence longer than the window doubles it.
const ICU_WINDOW = 1024;

function* icuSentences(text, segmenter) {
  for (let pos = 0, size = ICU_WINDOW; pos < text.length;) {
    const end = Math.min(text.length, pos + size);
    const sentences = Array.from(segmenter.segment(text.slice(pos, end)), (s) => s.segment);
    if (end === text.length) {
      yield* sentences;
      return;
    }
    if (sentences.length < 2) {
      size *= 2;
      continue;
    }
    sentences.pop();
    for (const sentence of sentences) {
      yield sentence;
      pos += sentence.length;
    }
    size = ICU_WINDOW;
  }
}

// ICU's sentences, with its breaks after "Dr." and initials joined back, and
// those inside a word: ICU breaks after "?" and "!" with no space, inside a
// URL (example.org/ayuda?id=42), which the engine keeps whole (src/verbatim_find.c).
function* intlSentenceIterator(text, locale) {
  let carry = '';
  for (const segment of icuSentences(text, intlSegmenter(locale))) {
    let end = segment.length;
    while (end > 0 && isSpace(segment[end - 1])) end--;
    if (end === segment.length && /[?!.]$/.test(segment) && /[\p{L}\p{N}]/u.test(segment.at(-2) ?? '')) {
      carry += segment;
      continue;
    }
    const word = end < segment.length && segment[end - 1] === '.' ? wordBefore(segment, end - 1, 0) : '';
    if (word && (ABBREVIATIONS.has(word.toLowerCase()) || LETTER.test(word))) {
      carry += segment;
      continue;
    }
    yield carry + segment;
    carry = '';
  }
  if (carry) yield carry;
}

export function hasIntlSegmenter() {
  return typeof Intl === 'object' && typeof Intl.Segmenter === 'function';
}

// Sentences of one paragraph, each with its trailing whitespace.
export function splitSentences(text, { locale, rules = !hasIntlSegmenter() } = {}) {
  return Array.from(rules ? ruleSentenceIterator(text) : intlSentenceIterator(text, locale));
}

// Pieces of `text`, one at a time: { text, translate } where translate is
// false for text kept as it is (whitespace, and sentences without a letter;
// adjacent ones come as one piece). Concatenating every piece's text gives
// `text` back.
export function* segmentPieces(text, { locale, rules = !hasIntlSegmenter() } = {}) {
  let space = ''; // whitespace waiting for the next sentence
  const paragraphs = text.split(/(\n[^\S\n]*\n\s*)/);
  for (let p = 0; p < paragraphs.length; p++) {
    if (p % 2 === 1) {
      space += paragraphs[p];
      continue;
    }
    const sentences = rules ? ruleSentenceIterator(paragraphs[p]) : intlSentenceIterator(paragraphs[p], locale);
    for (const sentence of sentences) {
      const body = sentence.trim();
      // Text without a letter (numbers, emoji, punctuation) has nothing to
      // translate: it comes back as it was, like whitespace.
      if (!body || !HAS_LETTER.test(body)) {
        space += sentence;
        continue;
      }
      const lead = sentence.length - sentence.trimStart().length;
      space += sentence.slice(0, lead);
      if (space) yield { text: space, translate: false };
      yield { text: body, translate: true };
      space = sentence.slice(lead + body.length);
    }
  }
  if (space) yield { text: space, translate: false };
}

// `text` with each lone surrogate replaced by U+FFFD, as the engine sees it
// (UTF-8 has no lone surrogates): translations give U+FFFD back for one
// wherever it was, in text translated or kept as it came.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export function wellFormed(text) {
  return typeof text.toWellFormed === 'function' ? text.toWellFormed() : text.replace(LONE_SURROGATE, '\uFFFD');
}

// Whether `text` has anything to translate (a letter); text without one is
// returned as it came.
export function hasTranslatable(text) {
  return HAS_LETTER.test(text);
}

export function segmentText(text, options = {}) {
  return Array.from(segmentPieces(text, options));
}

// Splits a sentence that is too long for the model at word boundaries.
// countTokens(text) gives its length in tokens, countMany(texts) the lengths
// of many at once (the engine's: one call for all of a sentence's words);
// every part is <= limit.
export function splitLong(sentence, limit, countTokens, countMany = (texts) => texts.map(countTokens)) {
  const again = (part) => splitLong(part, limit, countTokens, countMany);
  if (countTokens(sentence) <= limit) return [sentence];
  const words = sentence.split(/\s+/).filter(Boolean);
  if (words.length <= 1) {
    // One huge "word": cut it by characters.
    const chars = Array.from(sentence);
    if (chars.length <= 1) return [sentence];
    const half = chars.length >> 1;
    return [...again(chars.slice(0, half).join('')), ...again(chars.slice(half).join(''))];
  }
  const parts = [];
  let current = [];
  let currentTokens = 0;
  const counts = countMany(words);
  for (const [i, word] of words.entries()) {
    const n = counts[i];
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
  const partCounts = countMany(parts);
  return parts.flatMap((part, i) => {
    if (partCounts[i] <= limit) return [part];
    const partWords = part.split(' ');
    if (partWords.length < words.length) return again(part);
    const half = partWords.length >> 1; // nothing was split: halve
    return [...again(partWords.slice(0, half).join(' ')), ...again(partWords.slice(half).join(' '))];
  });
}
