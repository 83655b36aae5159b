// What a checkout's public API gives, written to one JSON file, so that two
// checkouts (a refactoring's before and after) can be compared byte for byte:
//   - plain: the test-book sentences (es -> en, greedy and beam 5) through
//     createTranslator().translate(), with details (alignment, spans);
//   - scores: the same sentences through the engine export
//     (residual-mt/engine: translateTexts, nbest 2: ids, score, text);
//   - html: the sentences in markup (format 'html');
//   - pages (unless --no-pages): translateElement() and translatePage() on a
//     page of them in Debian's Chromium, the document's HTML after each;
//   - hops: the named JS functions of js/ that one translate() of one sentence
//     enters (V8's precise coverage), how often, and per module how many.
// Everything goes through the checkout's package entry points (its
// package.json "exports"), so files may move between the two.
//
//   node scripts/compare-outputs.js [--root DIR] [--out FILE] [--no-pages] [--limit N]
//   node scripts/compare-outputs.js --diff A.json B.json     (exit 1 when outputs differ)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => { const i = args.indexOf(name); return i < 0 ? fallback : args[i + 1]; };

if (args[0] === '--diff') process.exit(diff(args[1], args[2]));

const root = resolve(flag('--root', here));
const out = flag('--out', 'outputs.json');
const limit = Number(flag('--limit', 191));
const sentences = readFileSync(`${here}tests/fixtures/test-books/test.es`, 'utf8').split('\n').filter(Boolean).slice(0, limit);

// The checkout's module for a package export ('.', './engine', ...).
function exported(name) {
  const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
  const entry = pkg.exports[name];
  return import(pathToFileURL(resolve(root, typeof entry === 'string' ? entry : entry.default)).href);
}

const lib = await exported('.');
const html = (s, i) => `<p id="p${i}" title="${s.slice(0, 20).replace(/"/g, '&quot;')}">${s.replace(/(\S+)$/, '<b>$1</b>')}</p>`;

async function plainAndHtml() {
  const translator = await lib.createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', worker: false, threads: 1 });
  const strip = (d) => ({ ...d, ms: undefined });
  const result = {};
  for (const beam of [1, 5]) {
    result[`plain-beam${beam}`] = (await translator.translate(sentences, { beam, details: true })).map(strip);
  }
  result.plainOneByOne = [];
  for (const s of sentences.slice(0, 40)) result.plainOneByOne.push(await translator.translate(s, { beam: 1 }));
  result.stream = [];
  for (const s of sentences.slice(0, 20)) {
    const chunks = [];
    for await (const chunk of translator.translateStreaming(s, { beam: 5 })) chunks.push(chunk);
    result.stream.push(chunks);
  }
  result.html = await translator.translate(sentences.map(html), { beam: 1, format: 'html' });
  result.measure = await Promise.all(sentences.slice(0, 40).map((s) => translator.measureInputUsage(s)));
  result.hops = await hops(translator, sentences[0]);
  translator.destroy();
  // The worker's side (a worker_thread) and the language detector, in-process and there.
  const inWorker = await lib.createTranslator({ sourceLanguage: 'es', targetLanguage: 'en', worker: true, threads: 1 });
  result.worker = await inWorker.translate(sentences.slice(0, 40), { beam: 1, details: true });
  result.worker = result.worker.map(strip);
  result.detect = {};
  for (const worker of [false, true]) {
    const detector = await lib.createLanguageDetector({ worker });
    result.detect[worker ? 'worker' : 'inline'] = await Promise.all(sentences.slice(0, 40).map((s) => detector.detect(s)));
    detector.destroy();
  }
  inWorker.destroy();
  return result;
}

// The JS functions of the checkout's js/ that one translate() of one
// sentence (in-process, the model loaded and warm) enters, and how often:
// V8's precise coverage with call counts (node:inspector), taken once before
// (which resets the counts) and once after the call.
async function hops(translator, sentence) {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage');
  await translator.translate(sentence, { beam: 1 });
  const { result } = await session.post('Profiler.takePreciseCoverage');
  session.disconnect();
  const functions = [];
  for (const script of result) {
    if (!script.url.startsWith(`file://${root}/js/`)) continue;
    const file = script.url.slice(`file://${root}/`.length);
    for (const f of script.functions) {
      const calls = f.ranges[0].count;
      if (calls > 0 && f.functionName) functions.push({ file, name: f.functionName, calls });
    }
  }
  const modules = {};
  for (const f of functions) modules[f.file] = (modules[f.file] ?? 0) + 1;
  return { count: functions.length, calls: functions.reduce((n, f) => n + f.calls, 0), modules, functions };
}

async function scores() {
  const { Engine } = await exported('./engine');
  const model = `${root}/${lib.DEFAULT_MODEL.repoPath}`;
  const engine = await Engine.load(readFileSync(`${root}/dist/residual-mt.wasm`));
  const m = engine.loadModel({ config: readFileSync(`${model}/config.json`), weights: readFileSync(`${model}/model.safetensors`),
    spm: readFileSync(`${model}/spm.model`) });
  const hyps = m.translateTexts(sentences.slice(0, 60), { targetLanguage: 'en', beam: 4, nbest: 2, batch: 16 });
  m.dispose();
  engine.dispose();
  return hyps.map((h) => h.map(({ ids, score, text }) => ({ ids: [...ids], score, text })));
}

// translateElement() and translatePage() in Chromium on a page of the sentences.
async function pages() {
  const { withServer } = await import(`${here}tests/lib/server.js`);
  const { launchChromium } = await import(`${here}tests/bench/load_bench.js`);
  const body = sentences.slice(0, 60).map(html).join('\n');
  const page = `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>Prueba</title></head><body>${body}</body></html>`;
  const site = mkdtempSync(join(tmpdir(), 'rmt-compare-'));
  const mounts = [
    { prefix: '/node_modules/residual-mt/', dir: `${root}/` },
    { prefix: `/node_modules/${lib.DEFAULT_MODEL.package}/`, dir: `${root}/${lib.DEFAULT_MODEL.repoPath}` },
    { prefix: '/', dir: site },
  ];
  writeFileSync(`${site}/page.html`, page);
  const { context, close } = await launchChromium();
  try {
    return await withServer({ mounts, csp: null }, async (base) => {
      const tab = await context.newPage();
      await tab.goto(`${base}page.html`);
      return tab.evaluate(async () => {
        const lib = await import('/node_modules/residual-mt/js/index.js');
        const translator = await lib.createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
        const original = document.body.innerHTML;
        await lib.translateElement(document.body, translator, { beam: 1 });
        const element = document.body.innerHTML;
        lib.restoreElement(document.body);
        const live = lib.translatePage(document, translator, { beam: 1 });
        await live.done;
        const whole = document.documentElement.outerHTML;
        await live.restore();
        const restored = document.body.innerHTML === original;
        translator.destroy();
        return { element, page: whole, restored };
      });
    });
  } finally {
    await close();
    rmSync(site, { recursive: true, force: true });
  }
}

const result = { root, sentences: sentences.length, ...await plainAndHtml(), scores: await scores() };
if (!args.includes('--no-pages')) result.pages = await pages();
writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
console.log(`${out}: ${sentences.length} sentences; one translate() enters ${result.hops.count} functions of js/ ` +
  `(${result.hops.calls} calls; ${Object.entries(result.hops.modules).map(([m, n]) => `${m} ${n}`).join(', ')})`);
process.exit(0);

// Every output of A against B (the root and the hop trace aside): 0 when identical.
function diff(a, b) {
  const [x, y] = [a, b].map((f) => JSON.parse(readFileSync(f, 'utf8')));
  let differ = 0;
  for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (key === 'root' || key === 'hops') continue;
    const same = JSON.stringify(x[key]) === JSON.stringify(y[key]);
    if (!same) differ++;
    console.log(`${key}: ${same ? 'identical' : 'DIFFERENT'}`);
  }
  console.log(`functions of js/ one translate() enters: ${x.hops.count} -> ${y.hops.count}; calls ${x.hops.calls} -> ${y.hops.calls}`);
  return differ ? 1 : 0;
}
