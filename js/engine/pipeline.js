// The one text pipeline: what a translate() call's text goes through between
// the sentence splitter (text/segment.js) and the engine binding (binding.js), and
// back. Each stage once, used by text, HTML and page translation alike:
//   sentences   texts as pieces, each tokenized once into the call's Sources,
//               a piece too long for the model cut into parts (splitTexts);
//   batches     the one batching policy: sentences by length into batches of
//               BATCH_SENTENCES and BATCH_ROWS, a batch the engine refuses
//               halved (planBatches, nextBatch);
//   assembly    the decoded sentences joined back into their texts, streamed
//               as their sure prefix grows (Assembly, decodeSentences);
//   spans       the engine's alignment in bytes as links between the texts
//               in UTF-16 indices (textSpans, alignmentLinks).
// It imports no engine: a Model and its Sources come in as arguments, and
// begin(batch) as a callback, so binding.js (below) and runner.js (above)
// share it. Pacing (yields, cancellation) is the caller's: pace().

import { BATCH_ROWS, BATCH_SENTENCES } from '../defaults.js';
import { trimSpan } from '../text/groups.js';
import { segmentPieces, splitLong } from '../text/segment.js';

// ---------------------------------------------------------------- batches

// Sentences are decoded in batches of at most `most` sentences
// (BATCH_SENTENCES) and BATCH_ROWS rows (sentences x beam: the cache is sized
// by rows and by the batch's longest sentence), sorted by length so that a
// batch holds sentences of similar length, or kept in their order (streaming
// shows them in order). Returns lists of sentence indices.
export function planBatches(lengths, { beam, most = BATCH_SENTENCES, keepOrder = false }) {
  const perBatch = Math.max(1, Math.min(most, Math.floor(BATCH_ROWS / beam)));
  const order = lengths.map((_, i) => i);
  if (!keepOrder) order.sort((a, b) => lengths[a] - lengths[b]);
  const batches = [];
  for (let start = 0; start < order.length; start += perBatch) batches.push(order.slice(start, start + perBatch));
  return batches;
}

// A batch the engine refuses as too large for its memory limit (RMT_E_SIZE)
// is decoded as two halves instead; one sentence alone over it is the error,
// as is any other, its sentence numbered as the caller numbered it.
function halveOrThrow(err, batch) {
  if (err.code !== 'RMT_E_SIZE' || batch.length === 1) {
    // (A DOMException, such as a lost thread's UnknownError, names no sentence and keeps its message.)
    if (!(err instanceof globalThis.DOMException)) {
      err.message = err.message.replace(/\b(sentence|text) (\d+)\b/g, (_, what, k) => `${what} ${batch[Number(k)] ?? k}`);
    }
    throw err;
  }
  const middle = batch.length >> 1;
  return [batch.slice(0, middle), batch.slice(middle)];
}

// Takes the next batch off `pending` (planBatches' lists) and starts it with
// begin(batch); a batch too large for the engine goes back as two halves.
// Returns { batch, translation }, or null when no batch is left.
export function nextBatch(pending, begin) {
  while (pending.length) {
    const batch = pending.shift();
    try {
      return { batch, translation: begin(batch) };
    } catch (err) {
      pending.unshift(...halveOrThrow(err, batch));
    }
  }
  return null;
}

// Decodes `items` (texts or sentences of ids) to the end, batch by batch:
// begin(items of a batch) starts one, read(translation) gives its results,
// one per item. options: { beam, batch }. Returns the results in the
// items' order (Model.translateTexts, translateIds).
export function decodeAll(items, lengthOf, { beam, batch }, begin, read) {
  if (!Array.isArray(items) || items.length === 0) throw new Error('residual-mt: empty input: no sentences');
  const out = new Array(items.length);
  const pending = planBatches(items.map(lengthOf), { beam, most: batch });
  for (let next; (next = nextBatch(pending, (indices) => begin(indices.map((i) => items[i]))));) {
    const { batch: indices, translation } = next;
    try {
      translation.run();
      read(translation).forEach((result, k) => { out[indices[k]] = result; });
    } finally {
      translation.free();
    }
  }
  return out;
}

// ---------------------------------------------------------------- spans

function utf8Length(text) {
  let n = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

// UTF-16 index of each byte offset of `text`'s UTF-8 encoding (an offset
// inside a character maps to the character's start): the engine's spans are
// in bytes, JS strings count UTF-16 units.
function utf16Offsets(text, byteLength) {
  const at = new Int32Array(byteLength + 1);
  let byte = 0, unit = 0;
  for (const ch of text) {
    const bytes = ch.codePointAt(0) < 0x80 ? 1 : ch.codePointAt(0) < 0x800 ? 2 : ch.codePointAt(0) < 0x10000 ? 3 : 4;
    for (let k = 0; k < bytes && byte + k <= byteLength; k++) at[byte + k] = unit;
    byte += bytes;
    unit += ch.length;
  }
  if (byte <= byteLength) at[byteLength] = unit;
  return at;
}

// Spans in bytes (per token [source begin, end, target begin, end]: the
// engine's) as { source: [start, end] of `source` or null, target: [start,
// end] of `target` }, in UTF-16 indices.
export function textSpans(spans, source, target) {
  const fromSource = utf16Offsets(source, utf8Length(source));
  const fromTarget = utf16Offsets(target, utf8Length(target));
  const out = [];
  for (let i = 0; i + 3 < spans.length; i += 4) {
    out.push({
      source: spans[i] < 0 ? null : [fromSource[spans[i]], fromSource[spans[i + 1]]],
      target: [fromTarget[spans[i + 2]], fromTarget[spans[i + 3]]],
    });
  }
  return out;
}

// A sentence's verbatim spans (Translation.verbatim: bytes) as { kind, how,
// source: [start, end] of the sentence, target: [start, end] of `output` as
// the caller shows it (trimmed) } in UTF-16 indices.
export function verbatimSpans(spans, sentence, text) {
  const fromSource = utf16Offsets(sentence, utf8Length(sentence));
  const fromTarget = utf16Offsets(text, utf8Length(text));
  const lead = text.length - text.trimStart().length;
  return spans.map(({ kind, how, source, target }) => ({ kind, how, source: source.map((i) => fromSource[i]),
    target: target.map((i) => fromTarget[i] - lead) }));
}

// A sentence's alignment (textSpans) as links { source: [start, end],
// target: [start, end] } between the sentence and `output` as the caller
// shows it (trimmed): each span without the whitespace around it, tokens
// with no source or no text left out.
export function alignmentLinks(tokens, sentence, output) {
  const lead = output.length - output.trimStart().length, length = output.trim().length;
  const links = [];
  for (const { source, target } of tokens) {
    const from = source && trimSpan(sentence, source);
    const to = trimSpan(output, target).map((i) => Math.min(Math.max(i - lead, 0), length));
    if (from && from[0] < from[1] && to[0] < to[1]) links.push({ source: from, target: to });
  }
  return links;
}

// Where each part of a piece (splitLong: its words, whitespace runs made one
// space, or cuts of one long word) is in the piece: per part, the piece's
// index of each of its indices (and of its end).
function partOffsets(piece, parts) {
  let at = 0;
  return parts.map((part) => {
    const map = new Int32Array(part.length + 1);
    while (at < piece.length && /\s/u.test(piece[at]) && !/\s/u.test(part[0] ?? '')) at++;
    for (let i = 0; i < part.length; i++) {
      map[i] = at;
      if (/\s/u.test(part[i])) while (at < piece.length && /\s/u.test(piece[at])) at++;
      else at++;
    }
    map[part.length] = at;
    return map;
  });
}

// ---------------------------------------------------------------- sentences

// The pieces of `text` (segment.js), each piece to translate tokenized once
// into `sources`: its number there (source) and its number of ids (tokens).
// options.sourceLanguage: the splitter's locale; pace() between pieces.
export async function* tokenizedPieces(text, options, pace, sources) {
  for (const piece of segmentPieces(text, { locale: options.sourceLanguage })) {
    await pace();
    if (!piece.translate) yield { ...piece, tokens: 0 };
    else yield { ...piece, tokens: sources.add(piece.text), source: sources.count - 1 };
  }
}

// The texts of one translate() call as sentences: per text its pieces
// (docs), the pieces to translate (units: { doc, piece, parts: sentence
// indices, at: partOffsets }), each sentence's text and its number in the
// call's Sources (tokenized once), and the input usage.
class Split {
  constructor() {
    this.docs = [];
    this.units = [];
    this.sentences = [];
    this.sourceOf = [];
    this.usage = 0;
  }

  // A piece (its ids counted: tokens) as one sentence, or parts when too
  // long for the model; countMany(texts) counts the ids of many at once.
  addPiece(doc, pieces, piece, { limit, details, sources, countMany }) {
    this.usage += piece.tokens + 1;
    const parts = piece.tokens <= limit ? [piece.text] : splitLong(piece.text, limit, (t) => countMany([t])[0], countMany);
    const indices = parts.map((part) => {
      this.sourceOf.push(part === piece.text ? piece.source : (sources.add(part), sources.count - 1));
      return this.sentences.push(part) - 1;
    });
    this.units.push({ doc, piece: pieces.length - 1, parts: indices, at: details ? partOffsets(piece.text, parts) : null });
  }
}

// Sentences of all texts for `model` (the engine's Model), each split
// further if too long for it under the engine options `search`. A piece with
// nothing to translate (no letter, or no tokens) is kept as it came, and the
// rest still is translated. Returns a Split.
export async function splitTexts(model, sources, texts, options, search, pace) {
  const split = new Split();
  const context = { limit: model.maxSourceIds(search), details: options.details, sources, countMany: (t) => model.countIds(t) };
  for (const [doc, text] of texts.entries()) {
    const pieces = [];
    for await (const piece of tokenizedPieces(text, options, pace, sources)) {
      pieces.push(piece.text);
      if (piece.tokens) split.addPiece(doc, pieces, piece, context);
    }
    split.docs.push(pieces);
  }
  return split;
}

// ---------------------------------------------------------------- assembly

// A sentence's stable text as it may be shown: without the trailing
// whitespace the next token may or may not follow, nor the replacement
// character of a UTF-8 sequence whose next bytes are still to come.
function showable(text) {
  return text.trimStart().replace(/[\s\uFFFD]+$/u, '');
}

// The output of one translate() call as it is decoded: hyps[s] (sentence s's
// candidates [{ text, score, tokens, links }] once decoded), stable[s] (its
// sure prefix while decoding), and the texts they make.
export class Assembly {
  constructor(split) {
    this.split = split;
    this.hyps = new Array(split.sentences.length).fill(null);
    this.stable = new Array(split.sentences.length).fill('');
    this.unitAt = split.docs.map(() => new Map());
    this.unitOf = [];
    for (const unit of split.units) {
      this.unitAt[unit.doc].set(unit.piece, unit);
      for (const s of unit.parts) this.unitOf[s] = unit;
    }
  }

  candidate(s, k) {
    return this.hyps[s][Math.min(k, this.hyps[s].length - 1)];
  }

  // The text of `doc` with the k-th candidate of each sentence; with live,
  // only as far as it is sure: up to the first sentence not yet decoded,
  // with its stable prefix. links, spans: arrays that get the best
  // candidates' alignment links and verbatim spans, placed in the input and the output.
  text(doc, k = 0, live = false, links = null, spans = null) {
    let out = '', from = 0;
    for (const [p, piece] of this.split.docs[doc].entries()) {
      const unit = this.unitAt[doc].get(p);
      const start = from;
      from += piece.length;
      if (!unit) {
        out += piece;
        continue;
      }
      const parts = [];
      for (const s of unit.parts) {
        if (this.hyps[s]) parts.push(this.candidate(s, k).text);
        else if (live) return out + [...parts, showable(this.stable[s])].filter(Boolean).join(' ');
        else parts.push(this.split.sentences[s]); // no translation (reported): kept as it was
      }
      out = this.joinParts(out, unit, parts, start, links, spans);
    }
    return out;
  }

  // out with a unit's parts appended, one space between them (their links
  // and spans placed: the unit's piece starts at `start` of the input).
  joinParts(out, unit, parts, start, links, spans) {
    let separator = '';
    parts.forEach((part, j) => {
      if (!part) return;
      out += separator;
      separator = ' ';
      for (const link of (links && this.hyps[unit.parts[j]]?.[0].links) ?? []) {
        links.push({ source: link.source.map((i) => start + unit.at[j][i]), target: link.target.map((i) => out.length + i) });
      }
      for (const span of (spans && this.hyps[unit.parts[j]]?.[0].spans) ?? []) {
        spans.push({ ...span, source: span.source.map((i) => start + unit.at[j][i]), target: span.target.map((i) => out.length + i) });
      }
      out += part;
    });
    return out;
  }

  // Sentence s's decoded n-best list (Translation.results'), its best with
  // its alignment links when details; false when it has none (every
  // hypothesis scored NaN or -inf: broken weights).
  place(s, list, details) {
    if (!list.length) return false;
    const sentence = this.split.sentences[s];
    this.hyps[s] = list.map((h) => ({ text: h.text.trim(), score: h.score, tokens: h.ids.length }));
    if (details) this.hyps[s][0].links = alignmentLinks(textSpans(list[0].spans, sentence, list[0].text), sentence, list[0].text);
    if (details) this.hyps[s][0].spans = verbatimSpans(list[0].verbatim ?? [], sentence, list[0].text);
    return true;
  }

  // What translate() returns for text `doc` (see Runner.translate).
  result(doc, options, ms) {
    const mine = this.split.units.filter((u) => u.doc === doc);
    if (options.nbest !== undefined) {
      const sentences = mine.flatMap((u) => u.parts);
      // score null: nothing in this text was translated.
      return Array.from({ length: options.nbest }, (__, k) => ({
        text: this.text(doc, k),
        score: sentences.length ? sentences.reduce((sum, s) => sum + (this.hyps[s] ? this.candidate(s, k).score : 0), 0) : null,
      }));
    }
    if (!options.details) return this.text(doc);
    const alignment = [], spans = [];
    const text = this.text(doc, 0, false, alignment, spans);
    const outputTokens = mine.reduce((n, u) => n + u.parts.reduce((m, s) => m + (this.hyps[s]?.[0].tokens ?? 0), 0), 0);
    return { text, sentences: mine.length, outputTokens, ms, alignment, spans };
  }
}

// Streaming text 0 of `out`: emit() sends onPartial what its sure prefix
// grew by; check() at the end, that what was sent is the whole result.
function streamer(out, onPartial) {
  let emitted = '';
  return {
    emit() {
      const sure = out.text(0, 0, true);
      if (sure.length > emitted.length && sure.startsWith(emitted)) {
        onPartial(sure.slice(emitted.length));
        emitted = sure;
      }
    },
    check() {
      if (emitted !== out.text(0)) {
        throw new Error('residual-mt: the streamed text is not the start of the translation (a bug: please report it)');
      }
    },
  };
}

// Steps tr to its end, pacing between steps (a yield every step when
// streaming); onStep(), if given, after each step but the last.
async function stepAll(tr, pace, onStep) {
  for (;;) {
    await pace(!!onStep);
    const left = tr.step();
    if (left === 0) return;
    onStep?.();
  }
}

// Decodes every sentence of `out` (an Assembly) on `model` in batches
// (planBatches), filling out.hyps; with onPartial, streams text 0's sure
// prefix as it grows. Returns the failures ({ sentence, text, message }).
export async function decodeSentences(model, sources, out, search, { details, pace, onPartial }) {
  const { sentences, sourceOf } = out.split;
  const failures = [];
  const stream = onPartial && streamer(out, onPartial);
  const pending = planBatches(sentences.map((s) => s.length), { beam: search.beam ?? model.engine.defaults.beam,
    most: search.batch, keepOrder: !!onPartial });
  for (let next; (next = nextBatch(pending, (batch) => model.beginSources(sources, batch.map((s) => sourceOf[s]), search)));) {
    const { batch, translation: tr } = next;
    try {
      await stepAll(tr, pace, stream && (() => {
        batch.forEach((s, k) => { out.stable[s] = tr.stableText(k); });
        stream.emit();
      }));
      tr.results(true, details).forEach((list, k) => {
        // Broken weights: this sentence has no translation; the others do.
        if (!out.place(batch[k], list, details)) {
          failures.push({ sentence: batch[k], text: out.unitOf[batch[k]].doc,
            message: 'every hypothesis scored NaN or -inf (non-finite activations: broken weights?)' });
        }
      });
    } finally {
      tr.free();
    }
    if (stream && !failures.length) stream.emit();
    await pace(true);
  }
  if (stream && !failures.length) stream.check();
  return failures;
}
