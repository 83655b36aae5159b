#!/usr/bin/env node
// residual-mt command line: translate text or token ids, tokenize, detokenize.
// Runs the WASM engine in-process; text goes through the same sentence
// splitting, batching and limits as the API (js/engine/runner.js over js/engine/pipeline.js).

import { readFile, access, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { canonicalTag, describePairs, engineTarget, languagePairs, sameLanguage } from './util/languages.js';
import { loadFiles, resolveDefaultModel, toLocation } from './load/loader.js';
import { Runner } from './engine/runner.js';
import { BATCH_SENTENCES, CONFIG, DEFAULT_THREADS_CAP, MAX_JSON_BYTES, TOKENIZER, WEIGHTS } from './defaults.js';

// What each search option does, by the engine's name for it; its default
// and the option list are the engine's (a field without a line here gets
// one that gives its default).
const SEARCH_HELP = {
  beam: (d) => `beam size (default ${d}; 1 = greedy)`,
  nbest: (d) => `hypotheses printed per input line (default ${d}; at most the beam)`,
  lenpen: (d) => `length penalty: score / length^X (default ${d})`,
  max_len_a: (d) => `max output length = X * (source length + 1) + max-len-b (default ${d})`,
  max_len_b: (d) => `(default ${d})`,
  min_len: (d) => `(default ${d})`,
};
// The order the usage lists them in; shortlist is --no-shortlist (its own line).
const SEARCH_ORDER = ['beam', 'nbest', 'lenpen', 'max_len_a', 'max_len_b', 'min_len'];

const cliName = (field) => field.name.replaceAll('_', '-');
const numberFields = (engine) => engine.searchFields.filter((f) => f.name !== 'shortlist')
  .sort((a, b) => (SEARCH_ORDER.indexOf(a.name) + 1 || Infinity) - (SEARCH_ORDER.indexOf(b.name) + 1 || Infinity));

function searchUsage(engine) {
  return numberFields(engine).map((field) => {
    const value = engine.defaults[field.option];
    const shown = field.integer || !Number.isInteger(value) ? String(value) : value.toFixed(1);
    const flag = `--${cliName(field)} ${field.integer ? 'N' : 'X'}`;
    return `  ${flag.padEnd(18)}${SEARCH_HELP[field.name]?.(shown) ?? `(default ${shown})`}`;
  }).join('\n');
}

const usage = (engine) => `usage:
  residual-mt [--model DIR] [--from LANG] [--to LANG] [options] [TEXT ...]   translate text (lines of stdin, or TEXT arguments)
  residual-mt --ids [--model DIR] [options]                                 translate lines of space-separated token ids
  residual-mt tokenize [--model DIR]                                        text lines -> space-separated ids
  residual-mt detokenize [--model DIR]                                      id lines -> text
  residual-mt models list|pull ...                                          Firefox's model registry: list, or pull for self-hosting (models --help)

options (--name value or --name=value; -- ends the options):
  --model DIR       model directory or URL (${CONFIG}, ${WEIGHTS}, ${TOKENIZER}); default: the shipped model
  --from LANG       source language (default: the model's, from --to)
  --to LANG         target language (default: the model's first pair)
  --catalog C       translate --from --to with a catalogue's model (two through English where none is direct):
                    C is a catalogue's JSON (path or URL, as models pull writes) or firefox (Mozilla's model registry)
  --registry URL    the same with the Firefox model registry at URL (a Remote Settings server root)
${searchUsage(engine)}
  --scores          prefix each output line with its score and a tab (text: the sum over its sentences)
  --batch N         most sentences translated together (default ${BATCH_SENTENCES})
  --no-shortlist    score every output word, not only the model's lexical shortlist (slower; a model without one ignores it)
  --threads N       threads to translate on (default: the processors, up to ${DEFAULT_THREADS_CAP}; 1: one thread)
  --verbose         say on stderr which model is loaded and how many threads the engine runs on
  -h, --help        this text
  --version         the version

Output: --nbest lines (default 1) per input line, in order; an empty input line gives empty lines.
A line of text is split into sentences as the API splits text; its n-th output line joins
each sentence's n-th hypothesis.`;

// The CLI's own options; the search options are the engine's (numbers).
const OPTIONS = {
  model: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ids: { type: 'boolean' },
  catalog: { type: 'string' }, registry: { type: 'string' },
  scores: { type: 'boolean' }, batch: { type: 'string' },
  threads: { type: 'string' }, verbose: { type: 'boolean' }, 'no-shortlist': { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' },
};

// Numeric options: CLI name -> [API name, integer?], the engine's search
// fields (--max-len-a for max_len_a) and --batch. Ranges are the engine's.
function numbers(engine) {
  return {
    ...Object.fromEntries(numberFields(engine).map((field) => [cliName(field), [field.option, field.integer]])),
    batch: ['batch', true],
  };
}

class UsageError extends Error {}

// --threads, read before the engine is loaded on that many threads (which
// checks its range); parse() says what is wrong with one that is not a number.
function threadsOption(argv) {
  const { values } = parseArgs({ args: argv, options: { threads: { type: 'string' } }, allowPositionals: true, strict: false });
  return typeof values.threads === 'string' && /^\d+$/.test(values.threads.trim()) ? Number(values.threads) : undefined;
}

function parse(argv, engine) {
  const NUMBERS = numbers(engine);
  const options = { ...OPTIONS, ...Object.fromEntries(Object.keys(NUMBERS).map((name) => [name, { type: 'string' }])) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true, tokens: true });
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
  const config = await read(CONFIG);
  const weights = await read(WEIGHTS);
  const hasSpm = needTokenizer || await access(new URL(TOKENIZER, base)).then(() => true, () => false);
  return { config, weights, spm: hasSpm ? await read(TOKENIZER) : undefined };
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

async function main(runner) {
  const argv = process.argv.slice(2);
  if (argv[0] === 'models') return (await import('./marian/models-cli.js')).modelsCommand(argv.slice(1));
  // The engine first: the options and their defaults are its own.
  runner.loadEngine({ threads: threadsOption(argv) });
  await runner.engineReady;
  const { engine } = runner;
  let parsed;
  try {
    parsed = parse(argv, engine);
  } catch (err) {
    if (err instanceof UsageError) err.usage = usage(engine);
    throw err;
  }
  const { values, command, search, threads, texts } = parsed;
  if (values.help) {
    console.log(usage(engine));
    return;
  }
  if (values.version) {
    console.log(JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')).version);
    return;
  }
  if (!texts.length && process.stdin.isTTY) {
    throw Object.assign(new UsageError('no TEXT and no input on stdin (pipe lines in, or give TEXT)'), { usage: usage(engine) });
  }
  if (values.catalog !== undefined || values.registry !== undefined) return translateFromCatalog(parsed);
  const base = values.model === undefined ? await resolveDefaultModel() : await toLocation(values.model);
  const files = await modelFiles(base, command !== 'translate' || !values.ids);
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
    const options = { ...search, nbest, sourceLanguage: pair?.sourceLanguage,
      targetLanguage: pair?.targetLanguage === undefined ? undefined : engineTarget(model.config, pair.targetLanguage) };
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
}

// --catalog / --registry: the API's catalogue finds the model, or two through
// English (catalog.js, registry.js); text only, with the API's options.
async function translateFromCatalog({ values, command, search, threads, texts }) {
  const other = Object.keys(search).find((key) => key !== 'beam');
  if (values.model !== undefined || values.ids || values.scores || other || command !== 'translate' || !values.from || !values.to) {
    throw new UsageError('--catalog and --registry translate text --from one language --to another; they take no --model, --ids, ' +
      `--scores${other ? `, ${other}` : ''} or tokenize/detokenize`);
  }
  const { createTranslator } = await import('./api/translator.js');
  const catalog = values.registry !== undefined ? { firefox: values.registry } : values.catalog;
  const translator = await createTranslator({ sourceLanguage: values.from, targetLanguage: values.to, catalog, worker: false, threads });
  try {
    const out = await translator.translate(texts.length ? texts : await readStdinLines(), search.beam === undefined ? {} : { beam: search.beam });
    process.stdout.write(out.map((line) => `${line}\n`).join(''));
  } finally {
    translator.destroy();
  }
}

const runner = new Runner();
main(runner).catch((err) => {
  console.error(`residual-mt: ${err.message.replace(/^residual-mt: /, '')}`);
  if (err.usage) console.error(err.usage);
  process.exitCode = 1;
}).finally(() => runner.dispose());
