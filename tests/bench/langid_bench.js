// Language identification side by side (a benchmark, not a test): residual-mt's
// LanguageDetector, eld (extrasmall database) and franc (trigrams), all in this
// one process, on the held-out Debian text train.py wrote (packages none of
// the training text came from): whole sentences and their first 1-3 words
// (2-6 characters in scripts written without spaces). Then the model's size
// and detect()'s time per sentence in Chromium (the package's own page, the
// engine in its worker, after load).
//
//   node tests/bench/langid_bench.js [EVAL_TSV] [--json] [--no-browser] [--except TAG,TAG...]
//
// EVAL_TSV: lang \t sentence \t short piece, one a line (default
// /work/scratch/langid/eval.tsv, from models/langid_train.py), or lang \t
// sentence, whose short piece is then its first three words (the everyday
// set, tests/fixtures/langid/everyday.tsv). eld and franc
// are devDependencies used only here. A tag is compared by its language
// (zh-Hans and zh-Hant are "zh" for the others; sr-Latn "sr"; nb "no" for eld);
// ours by the tag detect() reports (zh-Hans is zh).
// franc picks among the ISO 639-3 codes of FRANC only (its `only` option).
// --except leaves those languages' rows out (e.g. the five model 0.2.0 added,
// to compare the older languages with model 0.1.0's figures).

import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLanguageDetector } from '../../js/index.js';
import { DETECTOR_MODEL } from '../../js/defaults.js';
import { reportedTag } from '../../js/api/detector.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const evalPath = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--except') ?? '/work/scratch/langid/eval.tsv';
const json = args.includes('--json');
const exceptAt = args.indexOf('--except');
const excepted = new Set(exceptAt < 0 ? [] : (args[exceptAt + 1] ?? '').split(','));

// franc's ISO 639-3 codes of the languages this comparison has.
const FRANC = Object.fromEntries(('afr af amh am arb ar asm as ast ast azj az bel be ben bn bos bs bre br bul bg cat ca ces cs cym cy ' +
  'dan da deu de ell el eng en epo eo spa es ekk et eus eu pes fa fin fi fra fr fry fy gle ga gla gd glg gl guj gu heb he ' +
  'hin hi hrv hr hsb hsb hun hu hye hy ina ia ind id isl is ita it jpn ja kat ka kaz kk khm km kan kn kor ko kmr ku ' +
  'kir ky lit lt lvs lv mlg mg mkd mk mal ml khk mn mar mr zlm ms mya my nob nb nno nn nld nl oci oc ory or pan pa ' +
  'pol pl por pt ron ro rus ru sin si slk sk slv sl als sq srp sr swe sv tam ta tel te tgk tg tha th tur tr uig ug ' +
  'ukr uk urd ur uzn uz vie vi xho xh cmn zh wln wa mri mi zul zu').split(' ').reduce((pairs, v, i, all) => (i % 2 ? pairs : [...pairs, [v, all[i + 1]]]), []));

// (el-Latn, hi-Latn, ja-Latn stay whole: neither eld nor franc has them)
const base = (tag) => ({ nb: 'no', 'sr-Latn': 'sr' }[tag] ?? (tag.endsWith('-Latn') ? tag : tag.split('-')[0]));

const firstWords = (text, n) => text.split(/\s+/).filter(Boolean).slice(0, n).join(' ');

function readEval(path) {
  const rows = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => line.split('\t'));
  return rows.map(([lang, sentence, short]) => ({ lang, sentence, short: short ?? firstWords(sentence, 3) }));
}

// The languages franc has: its trigram data's, per script, and those it
// tells by their script alone.
async function francLanguages() {
  const [{ data }, { expressions }] = await Promise.all([import('franc/data.js'), import('franc/expressions.js')]);
  const codes = new Set(Object.keys(expressions).filter((k) => /^[a-z]{3}$/.test(k)));
  for (const script of Object.values(data)) for (const code of Object.keys(script)) codes.add(code);
  return new Set([...codes].filter((code) => FRANC[code]).map((code) => FRANC[code]));
}

async function detectors() {
  const { eld } = await import('eld/extrasmall');
  const { franc } = await import('franc');
  const francKnows = await francLanguages();
  const ours = await createLanguageDetector({ worker: false });
  const eldLanguages = new Set(Object.values(eld.info().Languages ?? {}).map(String));
  return {
    ours: { detect: async (t) => (await ours.detect(t))[0].detectedLanguage, knows: (l) => ours.languages.includes(reportedTag(l)),
      close: () => ours.destroy() },
    eld: { detect: async (t) => eld.detect(t).language || 'und', knows: (l) => eldLanguages.has(base(l)) },
    // franc chooses among the languages of this comparison only (of its 400+: fairer to it)
    franc: { detect: async (t) => FRANC[franc(t, { minLength: 1, only: Object.keys(FRANC) })] ?? 'und',
      knows: (l) => francKnows.has(base(l) === 'no' ? 'nb' : base(l)) },
  };
}

// Accuracy of each detector per language: { lang: { name: [sentences, short] } }.
async function measure(rows, tools) {
  const counts = {};
  for (const { lang, sentence, short } of rows) {
    counts[lang] ??= { n: 0, ...Object.fromEntries(Object.keys(tools).map((name) => [name, [0, 0]])) };
    counts[lang].n++;
    for (const [name, tool] of Object.entries(tools)) {
      const [a, b] = await Promise.all([tool.detect(sentence), tool.detect(short)]);
      const right = (got) => (name === 'ours' ? got === reportedTag(lang) : base(got) === base(lang));
      counts[lang][name][0] += right(a);
      counts[lang][name][1] += right(b);
    }
  }
  return counts;
}

// Mean accuracy over `langs` (each language counts once).
function mean(counts, langs, name, k) {
  return langs.reduce((sum, l) => sum + counts[l][name][k] / counts[l].n, 0) / langs.length;
}

async function browserTiming(sentences) {
  const { withServer } = await import('../lib/server.js');
  const { CHROMIUM, CHROMIUM_ARGS } = await import('./load_bench.js');
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    return await withServer({ mounts: [{ prefix: '/node_modules/residual-mt/', dir: root },
      { prefix: `/node_modules/${DETECTOR_MODEL.package}/`, dir: `${root}${DETECTOR_MODEL.repoPath}` }], csp: null }, async (url) => {
      const page = await browser.newPage();
      await page.goto(`${url}node_modules/residual-mt/package.json`);
      return page.evaluate(async (texts) => {
        const { LanguageDetector } = await import('/node_modules/residual-mt/js/index.js');
        let t = performance.now();
        const detector = await LanguageDetector.create();
        const load = performance.now() - t;
        for (const text of texts.slice(0, 50)) await detector.detect(text); // warm
        t = performance.now();
        for (const text of texts) await detector.detect(text);
        const perCall = (performance.now() - t) / texts.length;
        detector.destroy();
        return { load, perCall, inWorker: typeof Worker === 'function' };
      }, sentences);
    });
  } finally {
    await browser.close();
  }
}

const pct = (x) => (100 * x).toFixed(1);

async function main() {
  const rows = readEval(evalPath).filter((r) => !excepted.has(r.lang));
  const tools = await detectors();
  const counts = await measure(rows, tools);
  tools.ours.close();
  const langs = Object.keys(counts).sort();
  const shared = langs.filter((l) => tools.eld.knows(l) && tools.franc.knows(l));
  const size = statSync(`${root}${DETECTOR_MODEL.repoPath}${DETECTOR_MODEL.file}`).size;
  const timing = args.includes('--no-browser') ? null
    : await browserTiming(rows.filter((_, i) => i % 7 === 0).slice(0, 500).map((r) => r.sentence));
  const result = { languages: langs.length, shared: shared.length, sentences: rows.length, modelBytes: size, timing, counts };
  if (json) { console.log(JSON.stringify(result, null, 1)); return; }
  console.log(`| language | n | ours | eld | franc | ours short | eld short | franc short |`);
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const l of langs) {
    const c = counts[l];
    const cell = (name, k) => (name === 'ours' || tools[name].knows(l) ? pct(c[name][k] / c.n) : '–');
    console.log(`| ${l} | ${c.n} | ${cell('ours', 0)} | ${cell('eld', 0)} | ${cell('franc', 0)} | ${cell('ours', 1)} | ${cell('eld', 1)} | ${cell('franc', 1)} |`);
  }
  for (const [what, set] of [[`the ${shared.length} languages all three know`, shared], [`all ${langs.length} of ours`, langs]]) {
    const line = ['ours', 'eld', 'franc'].map((n) => `${n} ${pct(mean(counts, set, n, 0))} / ${pct(mean(counts, set, n, 1))}`);
    console.log(`\nMean accuracy (sentences / short pieces) over ${what}: ${line.join('; ')}`);
  }
  console.log(`Model: ${size} bytes. ${timing ? `Chromium: create() ${timing.load.toFixed(0)} ms, detect() ${(timing.perCall * 1000).toFixed(0)} µs a sentence (in its worker, round trip included)` : ''}`);
}

await main();
