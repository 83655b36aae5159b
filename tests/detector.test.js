// The LanguageDetector API (webmachinelearning/translation-api) in Node, on
// the shipped model models/langid/: results as the spec shapes them, tags,
// expectedInputLanguages, availability, input quota, abort and destroy, the
// worker and in-process engines, and the polyfills. tests/browser.test.js
// checks the same in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LanguageDetector, createLanguageDetector, detectorAvailability, DETECTOR_INPUT_QUOTA } from '../js/index.js';
import { readFileSync } from 'node:fs';
import { declaredModel, rankLanguages, reportedTag, withPrior } from '../js/api/detector.js';
import { InProcessBackend } from '../js/host/backends.js';
import { DETECTOR_MODEL, defaultWasmUrl } from '../js/defaults.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const SENTENCES = {
  en: 'The file could not be opened because it is in use by another program.',
  es: 'No se pudo abrir el archivo porque otro programa lo está usando.',
  fr: 'Impossible d\'ouvrir le fichier car il est utilisé par un autre programme.',
  de: 'Die Datei konnte nicht geöffnet werden, da sie von einem anderen Programm verwendet wird.',
  ru: 'Не удалось открыть файл, так как он используется другой программой.',
  ja: 'ファイルは別のプログラムで使用されているため、開けませんでした。',
};

function checkShape(results) {
  assert.ok(results.length >= 1);
  assert.equal(results.at(-1).detectedLanguage, 'und', 'und last');
  let sum = 0;
  for (let i = 0; i < results.length; i++) {
    const { detectedLanguage, confidence } = results[i];
    assert.equal(typeof detectedLanguage, 'string');
    assert.ok(confidence >= 0 && confidence <= 1, `${detectedLanguage} ${confidence}`);
    if (i > 0 && i < results.length - 1) assert.ok(confidence <= results[i - 1].confidence, 'sorted');
    if (detectedLanguage !== 'und') assert.equal(Intl.getCanonicalLocales(detectedLanguage)[0], detectedLanguage, 'canonical');
    sum += confidence;
  }
  assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum}: und holds what the list leaves`);
  assert.ok(results.at(-1).confidence > 0 || results.length > 1, 'a text with no letters is und with 1');
}

test('detect(): the language of whole sentences, spec-shaped results', async () => {
  const detector = await LanguageDetector.create();
  for (const [lang, text] of Object.entries(SENTENCES)) {
    const results = await detector.detect(text);
    checkShape(results);
    checkSpecShape(results);
    assert.equal(results[0].detectedLanguage, lang, `${text}: ${JSON.stringify(results.slice(0, 3))}`);
  }
  assert.deepEqual(await detector.detect(''), [{ detectedLanguage: 'und', confidence: 1 }]);
  assert.deepEqual(await detector.detect('1234 !!! ...'), [{ detectedLanguage: 'und', confidence: 1 }]);
  assert.ok(detector.languages.includes('es') && detector.languages.length >= 45, detector.languages.join(' '));
  detector.destroy();
});

test('rankLanguages: stops at 0.99, folds what is less likely than und into it, und last with the rest', () => {
  const close = (results, want) => {
    assert.deepEqual(results.map((r) => r.detectedLanguage), want.map(([tag]) => tag));
    results.forEach((r, i) => assert.ok(Math.abs(r.confidence - want[i][1]) < 1e-12, `${r.detectedLanguage} ${r.confidence}`));
    assert.equal(results.reduce((sum, r) => sum + r.confidence, 0), 1, 'the list and und add up to 1');
  };
  close(rankLanguages(['a', 'b', 'c'], [0.2, 0.795, 0.005]), [['b', 0.795], ['a', 0.2], ['und', 0.005]]);
  close(rankLanguages(['a', 'b'], [0.995, 0.005]), [['a', 0.995], ['und', 0.005]]);
  // b (0.1) would leave und 0.4: folded; a alone would leave und as much as a: folded too.
  close(rankLanguages(['a', 'b', 'c'], [0.5, 0.1, 0]), [['und', 1]]);
  close(rankLanguages(['a', 'b', 'c', 'd'], [0.6, 0.25, 0.06, 0.04]), [['a', 0.6], ['b', 0.25], ['und', 0.15]]);
  // Issue 43's case: the cut reaches 0.99 at c (0.00723), which would leave und
  // 0.00977 (ten languages of 0.000977): c is folded, and then b (0.013 < 0.017).
  const tail = Array(10).fill(0.000977);
  close(rankLanguages(['a', 'b', 'c', ...tail.map((_, i) => `t${i}`)], [0.97, 0.013, 0.00723, ...tail]),
    [['a', 0.97], ['und', 0.03]]);
  close(rankLanguages(['a', 'b', 'c', 'd', 'e'], [0.93, 0.04, 0.0128, 0.0072, 0.01]),
    [['a', 0.93], ['b', 0.04], ['c', 0.0128], ['e', 0.01], ['und', 0.0072]]);
  close(rankLanguages(['a', 'b'], [0, 0]), [['und', 1]]);
  // und keeps float32's step near 1 when the list would leave it nothing.
  close(rankLanguages(['a', 'b', 'c'], [0.6, 0.4, 0]), [['a', 0.6], ['b', 0.4 - 2 ** -24], ['und', 2 ** -24]]);
});

// The web-platform-tests' checks of a detect() result (ai/language_detection/
// detector.https.window.js, "detect() returns valid results").
function checkSpecShape(results) {
  const und = results.at(-1);
  assert.equal(und.detectedLanguage, 'und');
  assert.ok(und.confidence > 0, 'und above 0');
  let total = 0;
  let last = 1;
  for (const { detectedLanguage, confidence } of results.slice(0, -1)) {
    assert.ok(confidence > und.confidence, `${detectedLanguage} ${confidence} above und ${und.confidence}`);
    assert.ok(confidence <= last, 'sorted');
    last = confidence;
    total += confidence;
  }
  if (results.length > 1) assert.ok(total - results.at(-2).confidence < 0.99, 'the cut at 0.99');
  assert.ok(total + und.confidence <= 1 && Math.abs(total + und.confidence - 1) < 1e-12, 'all add up to 1');
}

test('rankLanguages on random distributions: the spec\'s checks, and the longest list they allow', () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let trial = 0; trial < 2000; trial++) {
    const n = 2 + Math.floor(random() * 60);
    const sharp = 1 + random() * 12;
    const raw = Array.from({ length: n }, () => random() ** sharp);
    const total = raw.reduce((a, b) => a + b, 0);
    const probs = raw.map((x) => Math.fround(x / total));
    const results = rankLanguages(raw.map((_, i) => `l${i}`), probs);
    checkSpecShape(results);
    // No longer list within the cut has its last language above what und would hold.
    const sorted = [...probs].sort((a, b) => b - a);
    let sum = 0;
    for (let k = 1; k <= sorted.length; k++) {
      sum += sorted[k - 1];
      if (k > results.length - 1 && sorted[k - 1] > 0) assert.ok(!(sorted[k - 1] > 1 - sum) || sum - sorted[k - 1] >= 0.99, `k ${k} of ${probs}`);
      if (sum >= 0.99) break;
    }
  }
});

test('expectedInputLanguages: canonical, frozen, or null; availability by the model\'s languages', async () => {
  const plain = await createLanguageDetector();
  assert.equal(plain.expectedInputLanguages, null);
  assert.equal(plain.inputQuota, DETECTOR_INPUT_QUOTA);
  const given = await createLanguageDetector({ expectedInputLanguages: ['EN-us', 'es', 'es'] });
  assert.deepEqual(given.expectedInputLanguages, ['en-US', 'es']);
  assert.ok(Object.isFrozen(given.expectedInputLanguages));
  assert.equal((await createLanguageDetector({ expectedInputLanguages: [] })).expectedInputLanguages, null);
  assert.equal(await detectorAvailability(), 'available');
  assert.equal(await LanguageDetector.availability({ expectedInputLanguages: ['pt-BR', 'zh-TW', 'sr-Latn'] }), 'available');
  assert.equal(await LanguageDetector.availability({ expectedInputLanguages: ['tlh'] }), 'unavailable');
  await assert.rejects(LanguageDetector.availability({ expectedInputLanguages: ['en_US'] }), RangeError);
  await assert.rejects(LanguageDetector.availability({ expectedInputLanguages: 'en' }), TypeError);
  await assert.rejects(LanguageDetector.create({ expectedInputLanguages: ['tlh'] }), { name: 'NotSupportedError' });
  for (const d of [plain, given]) d.destroy();
});

test('abort and destroy: AbortError or the reason, before and during; later calls too', async () => {
  const before = new AbortController();
  before.abort(new Error('no thanks'));
  await assert.rejects(LanguageDetector.create({ signal: before.signal }), /no thanks/);
  const during = new AbortController();
  const creating = LanguageDetector.create({ signal: during.signal });
  during.abort();
  await assert.rejects(creating, { name: 'AbortError' });
  const detector = await LanguageDetector.create();
  const call = new AbortController();
  call.abort();
  await assert.rejects(detector.detect('hola', { signal: call.signal }), { name: 'AbortError' });
  await assert.rejects(detector.measureInputUsage('hola', { signal: call.signal }), { name: 'AbortError' });
  const running = detector.detect(SENTENCES.es.repeat(50));
  detector.destroy();
  await assert.rejects(running, { name: 'AbortError' });
  await assert.rejects(detector.detect('hola'), { name: 'AbortError' });
  assert.ok(detector.destroyed);
  // create()'s signal aborted later destroys the detector.
  const later = new AbortController();
  const d2 = await LanguageDetector.create({ signal: later.signal });
  later.abort();
  await assert.rejects(d2.detect('hola'), { name: 'AbortError' });
});

test('calls answer in a later task: a signal aborted (or destroy()) right after the call still rejects it', async () => {
  const detector = await LanguageDetector.create();
  for (const call of [(signal) => detector.measureInputUsage('hola', { signal }), (signal) => detector.detect('', { signal }),
    (signal) => detector.detect('Buenos días a todos', { signal })]) {
    const plain = new AbortController();
    const pending = call(plain.signal);
    plain.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    const reason = new Error('changed my mind');
    const custom = new AbortController();
    const pending2 = call(custom.signal);
    custom.abort(reason);
    await assert.rejects(pending2, (err) => err === reason);
  }
  // The text is required: none is a TypeError, not the word "undefined" (given, it is that word).
  await assert.rejects(detector.detect(), TypeError);
  await assert.rejects(detector.measureInputUsage(), TypeError);
  assert.equal(await detector.measureInputUsage(undefined), 'undefined'.length);
  const measuring = detector.measureInputUsage('hola');
  const detecting = detector.detect('');
  detector.destroy();
  await assert.rejects(measuring, { name: 'AbortError' });
  await assert.rejects(detecting, { name: 'AbortError' });
  await assert.rejects(detector.measureInputUsage('hola'), { name: 'AbortError' });
  // create()'s signal aborted later, right after calls: they reject with its reason.
  const owner = new AbortController();
  const d2 = await LanguageDetector.create({ signal: owner.signal });
  const calls = [d2.measureInputUsage('x'), d2.detect('Bonjour à tous')];
  const reason = new Error('page closed');
  owner.abort(reason);
  for (const p of [...calls, d2.measureInputUsage('x')]) await assert.rejects(p, (err) => err === reason);
});

test('create(): aborted from its monitor\'s progress handler (at 0 or at 1), it rejects with the reason', async () => {
  for (const at of [0, 1]) {
    const controller = new AbortController();
    const reason = new Error(`stop at ${at}`);
    const seen = [];
    const creating = LanguageDetector.create({
      signal: controller.signal,
      monitor: (m) => m.addEventListener('downloadprogress', (e) => {
        seen.push(e.loaded);
        // As a page would: in a later microtask than the event itself.
        if (e.loaded === at) Promise.resolve().then(() => controller.abort(reason));
      }),
    });
    await assert.rejects(creating, (err) => err === reason);
    assert.equal(seen.filter((loaded) => loaded === at).length, 1, `one event at ${at}: ${seen}`);
  }
});

test('input quota: measureInputUsage is the length; over the quota a QuotaExceededError', async () => {
  const detector = await LanguageDetector.create();
  assert.equal(await detector.measureInputUsage('hola'), 4);
  assert.equal(await detector.measureInputUsage(''), 0);
  const big = 'a'.repeat(DETECTOR_INPUT_QUOTA + 1);
  await assert.rejects(detector.detect(big), (err) => err.name === 'QuotaExceededError' && err.requested === big.length &&
    err.quota === DETECTOR_INPUT_QUOTA);
  detector.destroy();
});

test('monitor: downloadprogress 0 then 1', async () => {
  const seen = [];
  const detector = await LanguageDetector.create({ monitor: (m) => m.addEventListener('downloadprogress', (e) => seen.push(e.loaded)) });
  assert.deepEqual(seen, [0, 1]);
  detector.destroy();
});

test('in a worker_thread as in-process: the same answers', async () => {
  const inline = await createLanguageDetector({ worker: false });
  const worker = await createLanguageDetector({ worker: true });
  for (const text of Object.values(SENTENCES)) assert.deepEqual(await worker.detect(text), await inline.detect(text));
  inline.destroy();
  worker.destroy();
});

test('polyfills: LanguageDetector installed where absent; /replace installs it over a built-in', () => {
  const script = `
    globalThis.LanguageDetector = undefined; delete globalThis.LanguageDetector;
    class Builtin {}
    globalThis.Translator = Builtin;
    await import('residual-mt/polyfill');
    const ours = (await import('residual-mt')).LanguageDetector;
    if (globalThis.LanguageDetector !== ours) throw new Error('not installed where absent');
    if (globalThis.Translator !== Builtin) throw new Error('the polyfill replaced a built-in');
    await import('residual-mt/polyfill/replace');
    if (globalThis.Translator === Builtin || globalThis.Translator.builtin !== Builtin) throw new Error('replace did not');
    const d = await LanguageDetector.create();
    console.log((await d.detect('Guten Morgen, wie geht es dir?'))[0].detectedLanguage);
    d.destroy();`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'de');
});

test('the model package: models/langid/package.json is the version DETECTOR_MODEL pins, and holds its file', async () => {
  const { DETECTOR_MODEL } = await import('../js/index.js');
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(`${root}${DETECTOR_MODEL.repoPath}package.json`, 'utf8'));
  assert.equal(pkg.name, DETECTOR_MODEL.package);
  assert.equal(pkg.version, DETECTOR_MODEL.version);
  assert.ok(pkg.files.includes(DETECTOR_MODEL.file));
  assert.ok(DETECTOR_MODEL.url.endsWith(`${pkg.name}@${pkg.version}/`));
});

test('rankLanguages: float32 sums a hair over 1 are cut to 1', () => {
  const results = rankLanguages(['a', 'b'], [0.9, 0.100001]);
  assert.ok(results.reduce((sum, r) => sum + r.confidence, 0) <= 1);
  assert.equal(results[0].confidence, 0.9);
});

// Sentences written for these checks (none from Debian's text).
const NEW_LANGUAGES = {
  'el-Latn': ['Kalimera, ti kaneis? Ola kala?', 'Tha argiso ligo, eimai akoma sto grafeio.', 'Pame gia kafe avrio to proi?',
    'Efxaristo poli gia ti voitheia sou!', 'Den kserw an mporw na erthw simera.'],
  'hi-Latn': ['Aap kaise hain? Sab theek hai?', 'Main kal office nahi aa paunga.', 'Kya tum mere saath khana khaoge?',
    'Mujhe nahi pata ki woh kab aayega.', 'Bahut shukriya, aapne meri bahut madad ki.'],
  'ja-Latn': ['Sumimasen, eki wa doko desu ka?', 'Kyou wa totemo atsui desu ne.', 'Ashita no kaigi wa nanji kara desu ka?',
    'Arigatou gozaimasu, mata ashita.', 'Watashi wa nihongo wo benkyou shite imasu.'],
  mi: ['Kia ora, kei te pēhea koe?', 'Kei te pai ahau, tēnā koe.', 'Ka kite anō āpōpō, e hoa.',
    'Kei te haere ahau ki te toa ināianei.', 'He aha te wā o te hui āpōpō?'],
  zu: ['Sawubona, unjani namuhla?', 'Ngiyabonga kakhulu ngosizo lwakho.', 'Ngizobuya kusasa ekuseni.',
    'Uphi umama wakho manje?', 'Angazi ukuthi uzofika nini.'],
};

const everyday = () => readFileSync(`${root}tests/fixtures/langid/everyday.tsv`, 'utf8').split('\n').filter(Boolean)
  .map((line) => line.split('\t')).map(([lang, text]) => ({ lang, text, short: text.split(/\s+/).slice(0, 3).join(' ') }));

test('el-Latn, hi-Latn, ja-Latn, mi, zu: named, and detected on sentences written for the check', async () => {
  assert.equal(await detectorAvailability({ expectedInputLanguages: Object.keys(NEW_LANGUAGES) }), 'available');
  const detector = await createLanguageDetector({ expectedInputLanguages: Object.keys(NEW_LANGUAGES) });
  for (const [lang, texts] of Object.entries(NEW_LANGUAGES)) {
    assert.ok(detector.languages.includes(lang), lang);
    let named = 0;
    for (const text of texts) {
      const results = await detector.detect(text);
      checkSpecShape(results);
      // Never another language; 'und' where no language is more likely than the rest together.
      assert.ok([lang, 'und'].includes(results[0].detectedLanguage), `${text}: ${JSON.stringify(results.slice(0, 3))}`);
      named += results[0].detectedLanguage === lang;
    }
    assert.ok(named >= texts.length - 1, `${lang}: ${named} of ${texts.length} named`);
  }
  detector.destroy();
});

test('tags as detect() reports them: a script only where it is not the language\'s usual one', async () => {
  assert.equal(reportedTag('zh-Hans'), 'zh');
  for (const tag of ['zh-Hant', 'sr-Latn', 'el-Latn', 'ja-Latn', 'sr', 'es', 'pt-BR']) assert.equal(reportedTag(tag), tag);
  const detector = await createLanguageDetector({ expectedInputLanguages: ['zh', 'zh-Hans', 'zh-TW'] });
  assert.ok(detector.languages.includes('zh') && !detector.languages.includes('zh-Hans'));
  assert.equal((await detector.detect('我们明天下午三点在图书馆见面。'))[0].detectedLanguage, 'zh');
  assert.equal((await detector.detect('我們明天下午三點在圖書館見面。'))[0].detectedLanguage, 'zh-Hant');
  detector.destroy();
});

test('no listed language below und: every text of these tests, whole and cut to three words', async () => {
  const detector = await createLanguageDetector();
  const texts = [...Object.values(SENTENCES), ...Object.values(NEW_LANGUAGES).flat(), ...everyday().flatMap((r) => [r.text, r.short])];
  for (const text of texts) checkSpecShape(await detector.detect(text));
  detector.destroy();
});

// The engine's own probabilities (no prior), and detect()'s ranking of them with the prior.
async function rawEngine() {
  const bytes = new Uint8Array(readFileSync(`${root}${DETECTOR_MODEL.repoPath}${DETECTOR_MODEL.file}`));
  const backend = new InProcessBackend();
  await backend.start();
  await backend.loadDetector({ model: bytes, wasm: defaultWasmUrl(1).href, threads: 1 });
  const { languages, prior } = declaredModel(bytes);
  const tags = languages.map(reportedTag);
  const top = (probabilities) => tags[probabilities.indexOf(Math.max(...probabilities))];
  return {
    prior,
    async both(text) {
      const { features, probabilities } = await backend.runner.detect(text);
      return { raw: top(probabilities), withPrior: top(withPrior(probabilities, features, prior)) };
    },
    dispose: () => backend.dispose(),
  };
}

test('the prior: neighbours with few speakers stop winning three-word everyday inputs, and keep their own long ones', async () => {
  const engine = await rawEngine();
  assert.ok(engine.prior && engine.prior.weight > 0, 'the model declares a prior');
  const minority = { es: ['ast', 'gl'], pt: ['gl'], ru: ['mk', 'be'], bg: ['mk'], tr: ['az'], sv: ['nn'], nb: ['nn'], da: ['nn'] };
  let rawWins = 0;
  let priorWins = 0;
  const own = { raw: 0, withPrior: 0, n: 0 };
  for (const { lang, text, short } of everyday()) {
    if (minority[lang]) {
      const { raw, withPrior: decided } = await engine.both(short);
      rawWins += minority[lang].includes(raw);
      priorWins += minority[lang].includes(decided);
    }
    if (['ast', 'gl', 'mk', 'az', 'nn'].includes(lang)) {
      const { raw, withPrior: decided } = await engine.both(text);
      own.raw += raw === lang;
      own.withPrior += decided === lang;
      own.n++;
    }
  }
  assert.ok(priorWins < rawWins, `three words won by a smaller neighbour: ${priorWins} with the prior, ${rawWins} without`);
  // Measured with model 0.4.0: none of their 100 sentences turns (0.3.0: one, Macedonian to Serbian); one may.
  assert.ok(own.withPrior >= own.raw - 1, `the smaller neighbours' own sentences: ${own.withPrior} with the prior, ${own.raw} without (of ${own.n})`);
  // The prior fades with the text: on a long text it cannot turn the answer.
  const long = (await engine.both(everyday().filter((r) => r.lang === 'ast').map((r) => r.text).join(' '))).withPrior;
  assert.equal(long, 'ast');
  engine.dispose();
});

test('withPrior: the logits plus the prior times W / features (ending at the fade), renormalized', () => {
  const prior = { logs: [0, -2], weight: 10 };
  const [a, b] = withPrior([0.5, 0.5], 10, prior);
  assert.ok(Math.abs(b / a - Math.exp(-2)) < 1e-12 && Math.abs(a + b - 1) < 1e-12);
  const [c, d] = withPrior([0.5, 0.5], 1000, prior);
  assert.ok(Math.abs(d / c - Math.exp(-0.02)) < 1e-12, 'fades with the features');
  assert.deepEqual(withPrior([0.25, 0.75], 3, null), [0.25, 0.75]);
  // With a fade of 100 features: W / features * (1 - features / 100), nothing from 100 on.
  const fading = { ...prior, fade: 100 };
  const [e, f] = withPrior([0.5, 0.5], 50, fading);
  assert.ok(Math.abs(f / e - Math.exp(-2 * (10 / 50) * 0.5)) < 1e-12, 'half of W / features at half the fade');
  assert.deepEqual(withPrior([0.5, 0.5], 100, fading), [0.5, 0.5]);
  assert.deepEqual(withPrior([0.5, 0.5], 400, fading), [0.5, 0.5]);
  assert.throws(() => declaredModel(safetensorsHeader({ languages: 'a,b', prior: '0', prior_weight: '3' })), /prior/);
  assert.throws(() => declaredModel(safetensorsHeader({ languages: 'a,b', prior: '0,-1', prior_weight: 'x' })), /prior/);
  assert.throws(() => declaredModel(safetensorsHeader({ languages: 'a,b', prior: '0,-1', prior_weight: '3', prior_fade: '-1' })), /prior/);
  assert.deepEqual(declaredModel(safetensorsHeader({ languages: 'a,b', prior: '0,-1', prior_weight: '3', prior_fade: '300' })),
    { languages: ['a', 'b'], prior: { logs: [0, -1], weight: 3, fade: 300 } });
  assert.deepEqual(declaredModel(safetensorsHeader({ languages: 'a,b', prior: '0,-1', prior_weight: '3' })),
    { languages: ['a', 'b'], prior: { logs: [0, -1], weight: 3 } });
  assert.deepEqual(declaredModel(safetensorsHeader({ languages: 'a,b' })), { languages: ['a', 'b'], prior: null });
});

function safetensorsHeader(metadata) {
  const json = new TextEncoder().encode(JSON.stringify({ __metadata__: metadata }));
  const bytes = new Uint8Array(8 + json.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  return bytes;
}
