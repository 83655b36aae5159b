#!/usr/bin/env node
// residual-mt command line: translate text or token ids, tokenize, detokenize.
// Runs the WASM engine in-process.

import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from './engine.js';

const USAGE = `usage:
  residual-mt [--model DIR] [--to LANG] [options] [TEXT ...]   translate text (lines of stdin, or TEXT arguments)
  residual-mt --ids [--model DIR] [options]                     translate lines of space-separated token ids
  residual-mt tokenize [--model DIR]                            text lines -> space-separated ids
  residual-mt detokenize [--model DIR]                          id lines -> text

options:
  --model DIR       model directory (config.json, model.safetensors, spm.model); default: the shipped model
  --to LANG         target language, for models that translate into several (default: the model's first)
  --beam N          beam size (default 5; 1 = greedy)
  --nbest N         hypotheses printed per input line (default 1; at most the beam)
  --lenpen X        length penalty: score / length^X (default 1.0)
  --max-len-a X     max output length = X * (source length + 1) + max-len-b (default 1.2)
  --max-len-b N     (default 10)
  --min-len N       (default 1)
  --scores          prefix each output line with its score and a tab
  --batch N         sentences translated together (default 16)

Output: one line per input line (nbest lines with --nbest); an empty input line gives an empty output line.`;

const DEFAULT_MODEL = fileURLToPath(new URL('../models/es-en', import.meta.url));

function parseArgs(argv) {
  const opts = { command: 'translate', model: undefined, ids: false, scores: false, batch: 16, search: {}, texts: [] };
  const numbers = {
    '--beam': ['beam', true], '--nbest': ['nbest', true], '--lenpen': ['lenpen', false],
    '--max-len-a': ['maxLenA', false], '--max-len-b': ['maxLenB', true], '--min-len': ['minLen', true],
  };
  const args = [...argv];
  if (args[0] === 'tokenize' || args[0] === 'detokenize') opts.command = args.shift();
  while (args.length) {
    const arg = args.shift();
    const value = () => {
      if (!args.length) throw new Error(`${arg} needs a value`);
      return args.shift();
    };
    if (arg === '--help' || arg === '-h') opts.command = 'help';
    else if (arg === '--model') opts.model = value();
    else if (arg === '--to') opts.search.targetLanguage = value();
    else if (arg === '--ids') opts.ids = true;
    else if (arg === '--scores') opts.scores = true;
    else if (arg === '--batch') opts.batch = Number(value());
    else if (numbers[arg]) {
      const [key, integer] = numbers[arg];
      const raw = value();
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n) || (integer && !/^\d+$/.test(raw))) {
        throw new Error(`${arg} expects ${integer ? 'a non-negative integer' : 'a number'}, got "${raw}"`);
      }
      opts.search[key] = n;
    } else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else opts.texts.push(arg);
  }
  if (!Number.isInteger(opts.batch) || opts.batch < 1) throw new Error('--batch expects a positive integer');
  return opts;
}

async function loadModelDir(engine, dir, needTokenizer) {
  const read = (name) => readFile(join(dir, name)).catch((err) => {
    throw new Error(`cannot read ${join(dir, name)}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  // One file after the other, so that a missing directory is always reported as its config.json.
  const config = await read('config.json');
  const weights = await read('model.safetensors');
  let spm;
  if (needTokenizer || await access(join(dir, 'spm.model')).then(() => true, () => false)) spm = await read('spm.model');
  return engine.loadModel({ config, weights, spm });
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
  const fields = line.trim().split(/\s+/).filter(Boolean);
  return fields.map((f) => {
    if (!/^\d+$/.test(f)) throw new Error(`line ${lineNo}: "${f}" is not a token id`);
    return Number(f);
  });
}

// Translates non-empty inputs in batches of similar length; returns output
// lines per input. A text line with nothing to translate (only spaces, control
// or zero-width characters) comes out as it went in; a line the model gives no
// translation for (broken weights) comes out empty, reported in `failed`.
function translateAll(model, inputs, opts, failed) {
  const outputs = new Array(inputs.length);
  const translatable = inputs.map((input) => input.length > 0 && (opts.ids || model.sourceIds(input).length > 0));
  const order = inputs.map((input, i) => i).filter((i) => translatable[i]);
  order.sort((a, b) => inputs[a].length - inputs[b].length);
  for (const i of inputs.keys()) if (!translatable[i]) outputs[i] = [opts.ids ? '' : inputs[i]];
  for (let start = 0; start < order.length; start += opts.batch) {
    const chunk = order.slice(start, start + opts.batch);
    const batch = chunk.map((i) => inputs[i]);
    const results = opts.ids ? model.translateIds(batch, opts.search) : model.translateTexts(batch, opts.search);
    chunk.forEach((i, k) => {
      if (!results[k].length) failed.push(i);
      outputs[i] = results[k].length ? results[k].map((hyp) => {
        const body = opts.ids ? hyp.ids.join(' ') : hyp.text;
        return opts.scores ? `${hyp.score.toFixed(6)}\t${body}` : body;
      }) : [''];
    });
  }
  return outputs;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.command === 'help') {
    console.log(USAGE);
    return;
  }
  const engine = await Engine.load();
  const needTokenizer = opts.command !== 'translate' || !opts.ids;
  const model = await loadModelDir(engine, opts.model ?? DEFAULT_MODEL, needTokenizer);
  // A model that translates into several languages defaults to its first target.
  const languages = model.config.languages ?? {};
  if (languages.target_lang_tokens && !opts.search.targetLanguage && languages.target?.length) {
    opts.search.targetLanguage = languages.target[0];
  }
  const lines = opts.texts.length ? opts.texts : await readStdinLines();
  let out;
  if (opts.command === 'tokenize') out = lines.map((line) => model.tokenize(line).join(' '));
  else if (opts.command === 'detokenize') out = lines.map((line, i) => model.detokenize(parseIdLine(line, i + 1)));
  else {
    const inputs = opts.ids ? lines.map((line, i) => parseIdLine(line, i + 1)) : lines;
    const failed = [];
    out = translateAll(model, inputs, opts, failed).flat();
    for (const i of failed) console.error(`residual-mt: line ${i + 1}: no translation (every hypothesis scored NaN or -inf: broken weights?)`);
    if (failed.length) process.exitCode = 1;
  }
  process.stdout.write(out.map((line) => `${line}\n`).join(''));
  model.dispose();
}

main().catch((err) => {
  console.error(`residual-mt: ${err.message.replace(/^residual-mt: /, '')}`);
  if (/unknown option|needs a value|expects /.test(err.message)) console.error(USAGE);
  process.exitCode = 1;
});
