// Bad input, as an attacker or a careless user gives it, through the public
// API: a clear error, never a trap of the WASM instance, a hung promise or a
// lost sentence. Memory limits on the shipped model (where 32-bit sizes used
// to wrap), a batch over the limit halved, sentences the model gives no
// translation, text with nothing to translate, a megabyte of text, a worker
// that dies, and the demo server's malformed requests and symbolic links.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createTranslator, segmentText } from '../js/index.js';
import { Engine } from '../js/engine/binding.js';
import { DEMO_CSP, createStaticServer } from '../scripts/serve.js';
import { rewriteWeights } from './lib/weights.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const SHIPPED = `${root}models/es-en/`;
const TEXT = `${root}tests/fixtures/models/residual-text/`;
const ref = JSON.parse(readFileSync(`${TEXT}reference.json`, 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'rmt-robust-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const isAbort = (err) => err?.name === 'AbortError';

// A copy of the text fixture with config.json edited and the weights rewritten (no manifest).
function variant(name, editConfig, editWeights) {
  const dir = join(tmp, `${name}/`);
  mkdirSync(dir);
  cpSync(`${TEXT}spm.model`, `${dir}spm.model`);
  writeFileSync(`${dir}config.json`, JSON.stringify(editConfig(JSON.parse(readFileSync(`${TEXT}config.json`, 'utf8')))));
  writeFileSync(`${dir}model.safetensors`, rewriteWeights(readFileSync(`${TEXT}model.safetensors`), 'F32', editWeights));
  return dir;
}

// A copy of the text fixture whose decoder output is constant (dec_alpha 0,
// final LayerNorm gain 0, bias 1), with a separate output projection whose
// </s> row is eosWeight: 1 ends every hypothesis after one token, -3e38 makes
// the </s> logit -inf at every step (no hypothesis ever ends).
function constantDecoder(name, editConfig, eosWeight) {
  return variant(name, (c) => ({ ...editConfig(c), share_embeddings: false, dec_alpha: 0 }), (tensor, values, tensors) => {
    if (tensor === 'decoder.layer_norm.weight') values.fill(0);
    if (tensor === 'decoder.layer_norm.bias') values.fill(1);
    if (tensor === 'encoder.embed_tokens.weight') {
      const d = tensors[tensor].shape[1];
      tensors['decoder.embed_tokens.weight'] = { shape: tensors[tensor].shape, values: values.slice() };
      const projection = values.slice();
      projection.fill(eosWeight, 2 * d, 3 * d); // eos_id 2
      tensors['decoder.output_projection.weight'] = { shape: tensors[tensor].shape, values: projection };
    }
  });
}

test('a translation too large for memory is a RangeError before anything is allocated; the engine stays intact', async () => {
  const engine = await Engine.load();
  const model = engine.loadModel({
    config: readFileSync(`${SHIPPED}config.json`), weights: readFileSync(`${SHIPPED}model.safetensors`), spm: readFileSync(`${SHIPPED}spm.model`),
  });
  const greedy = { beam: 1, targetLanguage: 'en' };
  const before = model.translateTexts(['Hola, mundo.'], greedy);
  // 32 sentences x beam 256 x 129 steps: 4.3 GB of cache, which wrapped in 32 bits
  // (memory at address 0 overwritten); 256 steps: exactly 2^32 bytes, wrapped to 0.
  for (const maxLenB of [128, 255]) {
    assert.throws(() => model.beginText(Array(32).fill('Hola.'), { beam: 256, maxLenA: 0, maxLenB, targetLanguage: 'en' }),
      (err) => err instanceof RangeError && err.code === 'RMT_E_SIZE' &&
        new RegExp(`too large: beam 256 over 32 sentences of up to ${maxLenB} output tokens needs more memory than 32-bit sizes address \\(the limit is 1024 MB\\)`).test(err.message));
  }
  assert.deepEqual(model.translateTexts(['Hola, mundo.'], greedy), before);
  model.dispose();

  // Through the API the same call is split into batches that fit (one
  // sentence a batch at beam 256) and the translator still answers as before.
  // A model that ends every hypothesis after one token lets the whole call run.
  const translator = await createTranslator({ model: SHIPPED, sourceLanguage: 'es', targetLanguage: 'en' });
  const alone = await translator.translate('Hola, mundo.', { beam: 1 });
  assert.equal(alone, before[0][0].text.trim());
  await assert.rejects(translator.translate('Hola.', { beam: 257 }), (err) => err instanceof RangeError && /beam must be an integer in \[1, 256\], got 257/.test(err.message));
  assert.equal(await translator.translate('Hola, mundo.', { beam: 1 }), alone);
  translator.destroy();
  const quick = await createTranslator({ model: constantDecoder('quick', (c) => c, 1), sourceLanguage: 'es', targetLanguage: 'en' });
  const one = await quick.translate('Hola.', { beam: 256, maxLength: 128 });
  assert.equal(await quick.translate(Array(32).fill('Hola.').join(' '), { beam: 256, maxLength: 128 }), Array(32).fill(one).join(' '));
  quick.destroy();
});

test('a batch over the memory limit is halved until it fits; one sentence over it is a RangeError', async () => {
  // The fixture with room for 20000 positions: at maxLength 16400 a row of
  // the search needs ~4 MB of cache, so 256 rows (4 sentences at beam 64) are
  // over the 1 GB limit and 128 are not. Every hypothesis ends after one
  // token, so the halves run to the end at once.
  const dir = constantDecoder('long', (c) => ({ ...c, max_positions: 20000 }), 1);
  const engine = await Engine.load();
  const model = engine.loadModel({ config: readFileSync(`${dir}config.json`), weights: readFileSync(`${dir}model.safetensors`), spm: readFileSync(`${dir}spm.model`) });
  const four = ['One.', 'Two.', 'Three.', 'Four.'];
  const options = { beam: 64, maxLenA: 0, maxLenB: 16400, targetLanguage: 'es' };
  assert.throws(() => model.beginText(four, options), (err) => err.code === 'RMT_E_SIZE', 'four sentences are over the limit');
  model.beginText(four.slice(0, 2), options).free(); // two are not
  model.dispose();
  const translator = await createTranslator({ model: dir, sourceLanguage: 'en', targetLanguage: 'es' });
  const out = await translator.translate(four.join(' '), { beam: 64, maxLength: 16400 });
  assert.equal(out, await translator.translate(four, { beam: 1, maxLength: 16400 }).then((parts) => parts.join(' ')),
    'the halves translate as the sentences alone do');
  await assert.rejects(translator.translate('One.', { beam: 256, maxLength: 16400 }),
    (err) => err instanceof RangeError && /too large: beam 256 over 1 sentence of up to 16400 output tokens needs \d+ MB/.test(err.message));
  translator.destroy();
});

test('sentences the model gives no translation are reported, each named; the error carries the rest', async () => {
  // Finite weights whose </s> logit overflows to -inf at every step.
  const dir = constantDecoder('no-end', (c) => c, -3e38);
  const text = `${ref.texts[0]}\n\n${ref.texts[3]}`;
  for (const worker of [false, true]) {
    const translator = await createTranslator({ model: dir, sourceLanguage: 'en', targetLanguage: 'es', worker });
    for (const beam of [1, 2, 5]) {
      await assert.rejects(translator.translate(text, { beam, maxLength: 4 }), (err) => {
        assert.equal(err.name, 'UnknownError', 'a failed translation, as the Translator API names it');
        assert.ok(err instanceof DOMException);
        assert.match(err.message, /2 of 2 sentences could not be translated/);
        assert.match(err.message, /"In the beginning God created the heavens…": every hypothesis scored NaN or -inf/);
        assert.equal(err.translations, text, 'the sentences kept as they were, the whitespace too');
        return true;
      });
    }
    await assert.rejects(translator.translate([ref.texts[3], '', ref.texts[2]], { beam: 1, maxLength: 4 }),
      (err) => assert.deepEqual(err.translations, [ref.texts[3], '', ref.texts[2]]) ?? true);
    await assert.rejects(async () => { for await (const _ of translator.translateStreaming(text, { maxLength: 4 })); }, // eslint-disable-line no-unused-vars
      /could not be translated/);
    // HTML: the same error; the sentences stay as they were, their markup too.
    const html = '<p>In the <b>beginning</b> God created <a href="/h">the heavens</a>.</p>\n<p>x</p>';
    await assert.rejects(translator.translate(html, { format: 'html', maxLength: 4 }),
      (err) => err.name === 'UnknownError' && /2 of 2 sentences/.test(err.message) && err.translations === html);
    translator.destroy();
  }
  // The command line: the line is reported and kept as it was, as the API keeps it; the others go on.
  const cli = spawnSync(process.execPath, [`${root}js/cli.js`, '--model', dir, '--to', 'es', '--max-len-a', '0', '--max-len-b', '3', 'Hello.', '   '],
    { encoding: 'utf8', timeout: 60_000 });
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /line 1: no translation/);
  assert.doesNotMatch(cli.stderr, /line 2/);
  assert.equal(cli.stdout, 'Hello.\n   \n');
});

test('a piece of text with no tokens comes back as it was; the sentences around it are translated', async () => {
  const translator = await createTranslator({ model: SHIPPED, sourceLanguage: 'es', targetLanguage: 'en' });
  const greedy = { beam: 1 };
  const [hola, adios] = await translator.translate(['Hola.', 'Adiós.'], greedy);
  assert.ok(hola && adios);
  assert.equal(await translator.translate('Hola.\n\n\u200b\n\nAdiós.', greedy), `${hola}\n\n\u200b\n\n${adios}`);
  assert.deepEqual(await translator.translate(['Hola.', '\u200b', 'Adiós.', '\u0001\u0002'], greedy), [hola, '\u200b', adios, '\u0001\u0002']);
  assert.equal(await translator.translate('\u200b\u200b', greedy), '\u200b\u200b');
  let all = '';
  for await (const chunk of translator.translateStreaming('Hola.\n\n\u200b\n\nAdiós.', greedy)) all += chunk;
  assert.equal(all, `${hola}\n\n\u200b\n\n${adios}`);
  assert.equal(await translator.measureInputUsage('\u200b'), 0);
  translator.destroy();
});

test('a megabyte of text is split in linear time, and a long job yields and stops when aborted', { timeout: 120_000 }, async () => {
  const MB = 1 << 20;
  // Shapes that were quadratic: every "." a candidate end (abbreviations,
  // initials), long runs of terminators or spaces, one endless word, lines.
  // Each at 1 MB and at 1/16 of it (`bytes`: how long the input is).
  const shapes = {
    prose: (bytes) => 'In the beginning God created the heaven and the earth. And the earth was without form. '.repeat(bytes / 88),
    abbreviations: (bytes) => 'Dr. '.repeat(bytes / 4),
    initials: (bytes) => 'J. R. R. '.repeat(bytes / 9),
    terminators: (bytes) => `${'!'.repeat(bytes)}x`,
    spaces: (bytes) => `a${' '.repeat(bytes)}b.`,
    word: (bytes) => `${'a'.repeat(bytes)}. `,
    lines: (bytes) => 'a\n'.repeat(bytes / 2),
  };
  // Linear time, as a ratio of two sizes measured in this run (no bound on
  // the time itself): 1 MB split once against 1/16 MB split 16 times, the
  // same bytes in all, each the best of 3 passes. Linear splitting takes
  // about as long both ways (measured here: 0.6 to 2 times); quadratic would
  // take 16 times as long on the megabyte. Within 4 times, so a slower or
  // busier machine, or the garbage collector, still passes and a quadratic
  // split fails.
  const LONGER = 16, MOST = 4;
  const timings = [];
  const best = (text, times, rules) => {
    let ms = Infinity, pieces;
    for (let pass = 0; pass < 3; pass++) {
      const started = performance.now();
      for (let i = 0; i < times; i++) pieces = segmentText(text, { rules });
      ms = Math.min(ms, performance.now() - started);
    }
    return { ms, pieces };
  };
  const inputs = {};
  for (const [name, make] of Object.entries(shapes)) {
    const small = make(MB / LONGER), text = make(MB);
    inputs[name] = text;
    for (const rules of [true, false]) {
      const what = `${name} ${rules ? 'rules' : 'Intl'}`;
      const short = best(small, LONGER, rules), long = best(text, 1, rules);
      assert.equal(long.pieces.map((p) => p.text).join(''), text, `${what}: the pieces give the text back`);
      assert.equal(short.pieces.map((p) => p.text).join(''), small, `${what}: the pieces give the text back`);
      const ratio = long.ms / short.ms;
      timings.push(`${what} ${long.ms.toFixed(0)} ms (${ratio.toFixed(2)}x)`);
      assert.ok(ratio < MOST, `${what}: 1 MB takes ${long.ms.toFixed(1)} ms, ${ratio.toFixed(1)} times the ${short.ms.toFixed(1)} ms ` +
        `of 1/${LONGER} MB ${LONGER} times (linear: about 1; quadratic: ${LONGER}; at most ${MOST})`);
    }
  }
  console.log(`splitting 1 MB (against 1/16 MB 16 times): ${timings.join(', ')}`);

  // The job yields while it splits: an abort is seen, the next job runs.
  const translator = await createTranslator({ model: TEXT, sourceLanguage: 'en', targetLanguage: 'es' });
  const controller = new AbortController();
  const huge = translator.translate(inputs.prose, { signal: controller.signal });
  const next = translator.translate(ref.texts[3], { beam: 1 });
  let ticks = 0;
  await new Promise((resolve) => {
    const tick = () => (++ticks === 3 ? resolve() : setImmediate(tick));
    setImmediate(tick);
  });
  controller.abort();
  await assert.rejects(huge, isAbort);
  assert.equal(await next, ref.translations.es.text[3]); // would wait for the whole megabyte otherwise
  translator.destroy();
});

test('a worker that dies mid-translation fails its calls and later ones, never hangs; a new translator gets a new worker', async () => {
  // Catch the worker the translator starts (node:worker_threads).
  const post = Worker.prototype.postMessage;
  let worker = null;
  Worker.prototype.postMessage = function capture(...args) {
    if (args[0]?.type === 'load') worker ??= this;
    return post.apply(this, args);
  };
  let translator;
  try {
    translator = await createTranslator({ model: TEXT, sourceLanguage: 'en', targetLanguage: 'es', worker: true });
  } finally {
    Worker.prototype.postMessage = post;
  }
  const long = `${ref.texts[0]} `.repeat(30);
  const controller = new AbortController();
  const running = (async () => {
    for await (const chunk of translator.translateStreaming(long, { beam: 1, signal: controller.signal })) {
      if (chunk) await worker.terminate(); // dies with work in hand
    }
  })();
  const queued = translator.translate(ref.texts[3], { beam: 1 });
  await assert.rejects(running, { name: 'UnknownError', message: /the translation worker failed: exited with code 1/ });
  await assert.rejects(queued, { name: 'UnknownError', message: /the translation worker failed/ });
  await assert.rejects(translator.translate('Hello.'), { name: 'UnknownError', message: /the translation worker failed/ });
  translator.destroy();
  const fresh = await createTranslator({ model: TEXT, sourceLanguage: 'en', targetLanguage: 'es', worker: true });
  assert.equal(await fresh.translate(ref.texts[3], { beam: 1 }), ref.translations.es.text[3]);
  fresh.destroy();
});

test('the demo server: a malformed request target is a 400 and it keeps serving; no symbolic link leads out of a mount; strict CSP', async () => {
  const site = join(tmp, 'site');
  const outside = join(tmp, 'outside');
  mkdirSync(site);
  mkdirSync(outside);
  writeFileSync(join(site, 'inside.txt'), 'inside\n');
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(site, 'escape.txt'));
  symlinkSync(outside, join(site, 'elsewhere'), 'dir');
  symlinkSync(join(site, 'inside.txt'), join(site, 'alias.txt'));
  const server = createStaticServer({ mounts: [{ prefix: '/', dir: site }] });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  const raw = (target) => new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.on('data', (d) => { answer += d; });
    socket.on('end', () => resolve(answer.split('\r\n')[0]));
    socket.on('error', reject);
  });
  try {
    assert.equal(await raw('http://[bad/'), 'HTTP/1.1 400 Bad Request');
    assert.equal(await raw('/%'), 'HTTP/1.1 404 Not Found');
    assert.equal(await (await fetch(`${base}/inside.txt`)).text(), 'inside\n', 'still serving');
    assert.equal((await fetch(`${base}/escape.txt`)).status, 404);
    assert.equal((await fetch(`${base}/elsewhere/secret.txt`)).status, 404);
    assert.equal(await (await fetch(`${base}/alias.txt`)).text(), 'inside\n', 'a link that stays inside is served');
    const page = await fetch(`${base}/inside.txt`);
    assert.equal(page.headers.get('content-security-policy'), DEMO_CSP);
    assert.match(DEMO_CSP, /script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/, 'and the demo\'s import map');
    assert.doesNotMatch(DEMO_CSP, /unsafe-inline|'unsafe-eval'/);
  } finally {
    server.close();
  }
});
