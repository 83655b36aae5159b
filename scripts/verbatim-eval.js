// Measures issue 37's verbatim spans on tests/fixtures/verbatim/set.tsv: per
// kind, the spans that come back byte for byte (kept), written otherwise
// (altered: a run of 2+ of its letters or digits is in the output, the span
// is not) or missing (dropped); the sentences with all their spans kept;
// for the engine under --root (the shipped int8 model, beam 5: the engine's
// defaults) and, with --apertium, Apertium (`apertium -u spa-eng` /
// `eng-spa`) beside it. With --sets, also corpus chrF2 and BLEU (models/
// chrf.py, models/bleu.py) of the engine on the everyday test set and the
// test books, both directions, and with --corpus DIR the modern test set of a built corpus;
// with --apertium too, Apertium's scores on each set beside the engine's.
//   node scripts/verbatim-eval.js [--set TSV] [--root DIR] [--apertium] [--sets [--corpus DIR]] [--json OUT] [--hyps DIR]
// --model DIR: that model directory instead of the default one (a candidate before it ships).
// --set: another set of the same columns (fresh.tsv: 40 sentences written after the rules were).
// Before/after: --root /work/main (the engine without spans) and --root . (with).
//   node scripts/verbatim-eval.js --table BEFORE.json,AFTER.json   (the docs' tables, in Markdown)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({ options: { root: { type: 'string', default: '.' }, model: { type: 'string' }, apertium: { type: 'boolean' },
  sets: { type: 'boolean' }, json: { type: 'string' }, hyps: { type: 'string' }, table: { type: 'string' },
  set: { type: 'string', default: 'tests/fixtures/verbatim/set.tsv' }, corpus: { type: 'string' } } });
const here = resolve(new URL('..', import.meta.url).pathname);

// Markdown tables of two reports (--json): spans kept by kind, and the sets' scores.
function table(before, after) {
  const pct = (a, b) => `${a}/${b} (${((100 * a) / b).toFixed(1)} %)`;
  const lines = ['| kind | spans | engine before | engine after | Apertium |', '| --- | ---: | ---: | ---: | ---: |'];
  for (const [kind, k] of Object.entries(after.engine.kinds)) {
    lines.push(`| ${kind} | ${k.spans} | ${before.engine.kinds[kind].kept} | ${k.kept} | ${after.apertium?.kinds[kind].kept ?? '–'} |`);
  }
  const row = (name, f) => `| ${name} | | ${f(before.engine)} | ${f(after.engine)} | ${after.apertium ? f(after.apertium) : '–'} |`;
  lines.push(row('**all spans kept**', (r) => pct(r.kept, r.spans)), row('altered (written otherwise)', (r) => r.altered),
    row('sentences with all kept', (r) => pct(r.allKept, r.sentences)));
  if (after.sets) {
    lines.push('', '| set | sentences | chrF2 before | chrF2 after | BLEU before | BLEU after |', '| --- | ---: | ---: | ---: | ---: | ---: |');
    const num = (s) => s.match(/= ([\d.]+)/)[1];
    for (const [name, s] of Object.entries(after.sets)) {
      const b = before.sets[name];
      lines.push(`| ${name} | ${s.sentences} | ${num(b.chrF)} | ${num(s.chrF)} | ${num(b.BLEU)} | ${num(s.BLEU)} |`);
    }
  }
  return lines.join('\n');
}
if (opt.table) {
  const [before, after] = opt.table.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')));
  console.log(table(before, after));
  process.exit(0);
}
const root = resolve(opt.root);
const { createTranslator } = await import(`${root}/js/index.js`);

const rows = readFileSync(resolve(here, opt.set), 'utf8').trim().split('\n').map((line) => {
  const [direction, sentence, spans] = line.split('\t');
  return { direction, sentence, spans: JSON.parse(spans) };
});

async function engine(direction, texts) {
  const [sourceLanguage, targetLanguage] = direction.split('-');
  const t = await createTranslator({ sourceLanguage, targetLanguage, threads: 1, ...(opt.model && { model: resolve(opt.model) }) });
  const out = [];
  for (const text of texts) out.push(await t.translate(text));
  t.destroy();
  return out;
}

function apertium(direction, texts) {
  const mode = direction === 'es-en' ? 'spa-eng' : 'eng-spa';
  // Through `cat |`: Node's stdin for a child is a socket, which apertium's
  // text filter cannot open as /dev/stdin.
  const out = execFileSync('sh', ['-c', 'cat | apertium -u "$0"', mode], { input: texts.join('\n') + '\n', encoding: 'utf8' });
  return out.split('\n').slice(0, texts.length).map((l) => l.trim());
}

// kept / altered / dropped for each span of a row in `output` (a span
// repeated in the sentence needs as many copies).
function judge(spans, output) {
  let rest = output;
  return spans.map(([, text]) => {
    const at = rest.indexOf(text);
    if (at >= 0) {
      rest = rest.slice(0, at) + '\u0000' + rest.slice(at + text.length);
      return 'kept';
    }
    const runs = text.match(/[\p{L}\p{N}]{2,}/gu) ?? [];
    return runs.some((r) => output.includes(r)) ? 'altered' : 'dropped';
  });
}

function score(outputs) {
  const kinds = {};
  let all = 0, spans = 0, kept = 0, altered = 0;
  rows.forEach((row, i) => {
    const verdicts = judge(row.spans, outputs[i]);
    row.spans.forEach(([kind], k) => {
      kinds[kind] ??= { spans: 0, kept: 0, altered: 0, dropped: 0 };
      kinds[kind].spans++;
      kinds[kind][verdicts[k]]++;
    });
    spans += verdicts.length;
    kept += verdicts.filter((v) => v === 'kept').length;
    altered += verdicts.filter((v) => v === 'altered').length;
    all += verdicts.every((v) => v === 'kept') ? 1 : 0;
  });
  return { sentences: rows.length, allKept: all, spans, kept, altered, kinds };
}

async function translateAll(fn) {
  const outputs = new Array(rows.length);
  for (const direction of ['es-en', 'en-es']) {
    const idx = rows.map((r, i) => (r.direction === direction ? i : -1)).filter((i) => i >= 0);
    const got = await fn(direction, idx.map((i) => rows[i].sentence));
    idx.forEach((i, k) => { outputs[i] = got[k]; });
  }
  return outputs;
}

function corpusScores(direction, hyps, refFile) {
  const input = hyps.join('\n') + '\n';
  const run = (script) => execFileSync('python3', [`${here}/models/${script}`, refFile], { input, encoding: 'utf8' }).trim();
  return { chrF: run('chrf.py'), BLEU: run('bleu.py') };
}

const outputs = { engine: await translateAll(engine) };
const report = { root, engine: score(outputs.engine) };
if (opt.apertium) {
  outputs.apertium = await translateAll(async (d, texts) => apertium(d, texts));
  report.apertium = score(outputs.apertium);
}
if (opt.sets) {
  report.sets = {};
  const sets = { everyday: `${here}/models/everyday/test`, 'test books': `${here}/tests/fixtures/test-books/test` };
  // the modern test set lives in a built corpus (models/data/build_corpus.py), not in the repository
  if (opt.corpus) sets.modern = `${resolve(opt.corpus)}/modern-test`;
  for (const [name, base] of Object.entries(sets)) {
    for (const [src, tgt] of [['es', 'en'], ['en', 'es']]) {
      const texts = readFileSync(`${base}.${src}`, 'utf8').split('\n').filter((l, i, a) => i < a.length - 1 || l);
      const hyps = await engine(`${src}-${tgt}`, texts);
      report.sets[`${name} ${src}->${tgt}`] = { sentences: texts.length, ...corpusScores(`${src}-${tgt}`, hyps, `${base}.${tgt}`) };
      outputs[`${name}.${src}-${tgt}`] = hyps;
      if (!opt.apertium) continue;
      const peer = apertium(`${src}-${tgt}`, texts);
      report.sets[`${name} ${src}->${tgt}`].apertium = corpusScores(`${src}-${tgt}`, peer, `${base}.${tgt}`);
      outputs[`apertium.${name}.${src}-${tgt}`] = peer;
    }
  }
}
if (opt.hyps) {
  mkdirSync(opt.hyps, { recursive: true });
  for (const [name, lines] of Object.entries(outputs)) writeFileSync(`${opt.hyps}/${name}.txt`, lines.join('\n') + '\n');
}
if (opt.json) writeFileSync(opt.json, JSON.stringify(report, null, 2) + '\n');
console.log(JSON.stringify(report, null, 2));
