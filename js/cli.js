#!/usr/bin/env node
// residual-mt command line: translate text or token ids, tokenize, detokenize.
// Runs the WASM engine in-process; text goes through the same sentence
// splitting, batching and limits as the API (js/runner.js).

import { readFile, access, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { canonicalTag, describePairs, languagePairs, sameLanguage } from './languages.js';
import { loadFiles, resolveDefaultModel, toLocation } from './loader.js';
import { Runner } from './runner.js';
import { DEFAULT_THREADS_CAP, MAX_JSON_BYTES } from './defaults.js';

const USAGE = `usage:
  residual-mt [--model DIR] [--from LANG] [--to LANG] [options] [TEXT ...]   translate text (lines of stdin, or TEXT arguments)
  residual-mt --ids [--model DIR] [options]                                 translate lines of space-separated token ids
  residual-mt tokenize [--model DIR]                                        text lines -> space-separated ids
  residual-mt detokenize [--model DIR]                                      id lines -> text

options (--name value or --name=value; -- ends the options):
  --model DIR       model directory or URL (config.json, model.safetensors, spm.model); default: the shipped model
  --from LANG       source language (default: the model's, from --to)
  --to LANG         target language (default: the model's first pair)
  --beam N          beam size (default 5; 1 = greedy)
  --nbest N         hypotheses printed per input line (default 1; at most the beam)
  --lenpen X        length penalty: score / length^X (default 1.0)
  --max-len-a X     max output length = X * (source length + 1) + max-len-b (default 1.2)
  --max-len-b N     (default 10)
  --min-len N       (default 1)
  --scores          prefix each output line with its score and a tab (text: the sum over its sentences)
  --batch N         most sentences translated together (default 32)
  --no-shortlist    score every output word, not only the model's lexical shortlist (slower; a model without one ignores it)
  --threads N       threads to translate on (default: the processors, up to ${DEFAULT_THREADS_CAP}; 1: one thread)
  --verbose         say on stderr which model is loaded and how many threads the engine runs on
  -h, --help        this text
  --version         the version

Output: --nbest lines (default 1) per input line, in order; an empty input line gives empty lines.
A line of text is split into sentences as the API splits text; its n-th output line joins
each sentence's n-th hypothesis.`;

const OPTIONS = {
  model: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ids: { type: 'boolean' },
  beam: { type: 'string' }, nbest: { type: 'string' }, lenpen: { type: 'string' }, 'max-len-a': { type: 'string' },
  'max-len-b': { type: 'string' }, 'min-len': { type: 'string' }, scores: { type: 'boolean' }, batch: { type: 'string' },
  threads: { type: 'string' }, verbose: { type: 'boolean' }, 'no-shortlist': { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' },
};
// Search options: CLI name -> [API name, integer?]. Ranges are the engine's.
const NUMBERS = {
  beam: ['beam', true], nbest: ['nbest', true], lenpen: ['lenpen', false], 'max-len-a': ['maxLenA', false],
  'max-len-b': ['maxLenB', true], 'min-len': ['minLen', true], batch: ['batch', true],
};

class UsageError extends Error {}

function parse(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw new UsageError(err.message);
  }
  const { values, positionals, tokens } = parsed;
  // A command is the first word, given before any "--".
  const first = tokens.find((t) => t.kind === 'positional' || t.kind === 'option-terminator');
  const command = first?.kind === 'positional' && ['tokenize', 'detokenize'].includes(first.value) ? first.value : 'translate';
  const search = {};
  for (const [name, [key, integer]] of Object.entries(NUMBERS)) {
    const raw = values[name];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || (integer && !/^\d+$/.test(raw.trim()))) {
      throw new UsageError(`--${name} expects ${integer ? 'a non-negative integer' : 'a number'}, got "${raw}"`);
    }
    search[key] = n;
  }
  if (search.batch !== undefined && search.batch < 1) throw new UsageError('--batch expects a positive integer');
  if (values['no-shortlist']) search.shortlist = false;
  let threads;
  if (values.threads !== undefined) {
    if (!/^\d+$/.test(values.threads.trim())) throw new UsageError(`--threads expects a positive integer, got "${values.threads}"`);
    threads = Number(values.threads);
  }
  return { values, command, search, threads, texts: command === 'translate' ? positionals : positionals.slice(1) };
}

async function readStdinLines() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => line.replace(/\r$/, ''));
}

function parseIdLine(line, lineNo) {
  return line.trim().split(/\s+/).filter(Boolean).map((f) => {
    if (!/^\d+$/.test(f)) throw new Error(`line ${lineNo}: "${f}" is not a token id`);
    return Number(f);
  });
}

// The model's files: read from its directory (spm.model only when there or
// needed), or downloaded (and cached) from a URL.
async function modelFiles(base, needTokenizer) {
  if (base.protocol !== 'file:') return loadFiles(base);
  const read = async (name) => {
    const url = new URL(name, base);
    try {
      // A JSON file read whole is refused before it is read when too large (MAX_JSON_BYTES).
      const { size } = name.endsWith('.json') ? await stat(url) : {};
      if (size > MAX_JSON_BYTES) throw new Error(`it has ${size} bytes, more than a model's JSON file may have (${MAX_JSON_BYTES})`);
      return await readFile(url);
    } catch (err) {
      throw new Error(`cannot read ${fileURLToPath(url)}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    }
  };
  // One file after the other, so that a missing directory is always reported as its config.json.
  const config = await read('config.json');
  const weights = await read('model.safetensors');
  const hasSpm = needTokenizer || await access(new URL('spm.model', base)).then(() => true, () => false);
  return { config, weights, spm: hasSpm ? await read('spm.model') : undefined };
}

// The pair to translate: --from and --to as given, the missing one from the
// model's pairs, its first pair when neither is given. Two tags of one
// language pass the text through, as the API does.
function choosePair(config, base, from, to) {
  const pairs = languagePairs(config, base.href);
  if (!pairs.length) {
    if (from || to) throw new Error(`the model at ${base.href} declares no languages: leave out --from and --to`);
    return null;
  }
  const source = from === undefined ? undefined : canonicalTag(from, '--from');
  const target = to === undefined ? undefined : canonicalTag(to, '--to');
  if (source && target && sameLanguage(source, target)) return { identity: true };
  const fits = source || target ? pairs.filter(([s, t]) => (!source || sameLanguage(s, source)) && (!target || sameLanguage(t, target)))
    : pairs.slice(0, 1);
  if (fits.length === 1) return { sourceLanguage: fits[0][0], targetLanguage: fits[0][1] };
  const wanted = `${source ?? '?'} → ${target ?? '?'}`;
  throw new Error(fits.length ? `${wanted}: name both languages (the model translates ${describePairs(pairs)})`
    : `the model cannot translate ${wanted} (it translates ${describePairs(pairs)})`);
}

function format(hyps, nbest, scores, body) {
  return Array.from({ length: nbest }, (_, k) => {
    const hyp = hyps[Math.min(k, hyps.length - 1)];
    if (!hyp) return '';
    return scores && hyp.score !== null ? `${hyp.score.toFixed(6)}\t${body(hyp)}` : body(hyp);
  });
}

async function main() {
  const { values, command, search, threads, texts } = parse(process.argv.slice(2));
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.version) {
    console.log(JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')).version);
    return;
  }
  if (!texts.length && process.stdin.isTTY) throw new UsageError('no TEXT and no input on stdin (pipe lines in, or give TEXT)');
  const base = values.model === undefined ? await resolveDefaultModel() : await toLocation(values.model);
  const files = await modelFiles(base, command !== 'translate' || !values.ids);
  const runner = new Runner();
  await runner.load({ ...files, threads, warmup: false });
  const model = runner.model;
  if (values.verbose) {
    // The engine's own count: the threads its pool shares the work between, and
    // the workers inside the pool's loop (a worker that failed to start is not).
    const { threads: n, wasm } = runner.engine, running = wasm.exports.rmt_threads_running();
    console.error(`residual-mt: model ${base.href}; engine on ${n} thread${n === 1 ? '' : 's'} ` +
      `(this one and ${running} worker${running === 1 ? '' : 's'} running)`);
  }
  const lines = texts.length ? texts : await readStdinLines();
  const nbest = search.nbest ?? 1;
  let out;
  if (command === 'tokenize') out = lines.map((line) => model.tokenize(line).join(' '));
  else if (command === 'detokenize') out = lines.map((line, i) => model.detokenize(parseIdLine(line, i + 1)));
  else if (values.ids) {
    const inputs = lines.map((line, i) => parseIdLine(line, i + 1));
    const todo = inputs.map((ids, i) => i).filter((i) => inputs[i].length);
    const results = todo.length ? model.translateIds(todo.map((i) => inputs[i]), search) : [];
    const hyps = inputs.map(() => []);
    todo.forEach((i, k) => { hyps[i] = results[k]; });
    out = hyps.flatMap((list) => format(list, nbest, values.scores, (h) => h.ids.join(' ')));
  } else {
    const pair = choosePair(model.config, base, values.from, values.to);
    const tokens = model.config.languages?.target_lang_tokens;
    const options = { ...search, nbest, sourceLanguage: pair?.sourceLanguage,
      targetLanguage: tokens && pair && pair.targetLanguage in tokens ? pair.targetLanguage : undefined };
    let results;
    try {
      results = pair?.identity ? lines.map((text) => [{ text, score: null }]) : await runner.translate(lines, options);
    } catch (err) {
      if (!err.translations) throw err;
      // Sentences without a translation are kept as they were; the lines are named.
      for (const line of err.texts) console.error(`residual-mt: line ${line + 1}: no translation (every hypothesis scored NaN or -inf: broken weights?)`);
      process.exitCode = 1;
      results = err.translations;
    }
    out = results.flatMap((list) => format(list, nbest, values.scores, (h) => h.text));
  }
  process.stdout.write(out.map((line) => `${line}\n`).join(''));
  runner.dispose();
}

main().catch((err) => {
  console.error(`residual-mt: ${err.message.replace(/^residual-mt: /, '')}`);
  if (err instanceof UsageError) console.error(USAGE);
  process.exitCode = 1;
});
