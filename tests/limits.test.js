// What a careless caller or a broken model directory meets: a huge JSON file
// is refused before it is read, minLen is bounded like maxLenB and by the
// output length, a kept copy that fails its check offline says so, and many
// calls waiting on one AbortSignal add one listener to it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, openSync, closeSync, ftruncateSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { availability, createTranslator } from '../js/index.js';
import { MAX_JSON_BYTES } from '../js/defaults.js';
import { Engine } from '../js/engine/binding.js';
import { withServer } from './lib/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = `${root}tests/fixtures/models/residual-text/`;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-limits-'));
process.env.XDG_CACHE_HOME = join(tmp, 'cache');
after(() => rmSync(tmp, { recursive: true, force: true }));

const RMT_LIMIT_JSON_BYTES = 3; // src/rmt.h

// A copy of the fixture model whose `name` is a sparse file of `size` bytes.
function withSparse(dirName, name, size) {
  const dir = join(tmp, dirName, 'model/');
  cpSync(FIXTURE, dir, { recursive: true });
  const fd = openSync(join(dir, name), 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
  return dir;
}

const cli = (args) => spawnSync(process.execPath, [`${root}js/cli.js`, ...args], { encoding: 'utf8', timeout: 60_000 });

test('a JSON file larger than MAX_JSON_BYTES is refused before it is read: on disk, over HTTP, in the CLI and in the engine', async () => {
  const engine = await Engine.load();
  assert.equal(engine.wasm.exports.rmt_limit(RMT_LIMIT_JSON_BYTES), MAX_JSON_BYTES, 'the engine\'s limit is the loader\'s');
  const big = withSparse('big-config', 'config.json', 1 << 30);
  const tooLarge = (err) => err.name === 'OperationError' && /config\.json.* has 1073741824 bytes, more than a model's JSON file may have/.test(err.message);
  const started = performance.now();
  await assert.rejects(createTranslator({ model: big, sourceLanguage: 'en', targetLanguage: 'es' }), tooLarge);
  assert.equal(await availability({ model: big, sourceLanguage: 'en', targetLanguage: 'es' }), 'unavailable');
  const run = cli(['--model', big, 'Hello.']);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /config\.json: it has 1073741824 bytes, more than a model's JSON file may have/);
  const manifest = withSparse('big-manifest', 'manifest.json', 1 << 30);
  await assert.rejects(createTranslator({ model: manifest, sourceLanguage: 'en', targetLanguage: 'es' }), /manifest\.json has 1073741824 bytes/);
  await withServer({ mounts: [{ prefix: '/m/', dir: big }] }, async (base) => {
    await assert.rejects(createTranslator({ model: `${base}m/`, sourceLanguage: 'en', targetLanguage: 'es' }), tooLarge);
  });
  // Refused at once, not read whole (that took 10 s and 3 GB).
  assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
  // The engine refuses such a config itself (a caller that read it).
  const config = `{"pad": "${' '.repeat(MAX_JSON_BYTES)}"}`;
  assert.throws(() => engine.loadModel({ config, weights: readFileSync(`${FIXTURE}model.safetensors`) }),
    (err) => err instanceof RangeError && /config\.json has \d+ bytes, more than a config may have/.test(err.message));
  engine.dispose();
});

test('minLen is bounded as maxLenB is and by the output length: the API and the CLI', async () => {
  const t = await createTranslator({ model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es' });
  const limit = /min_len must be at most the output length allowed, \d+ tokens for sentence 0/;
  await assert.rejects(t.translate('Hello, world.', { minLen: 1 << 20 }), (err) => err instanceof RangeError && limit.test(err.message));
  await assert.rejects(t.translate('Hello, world.', { minLen: 20, maxLength: 10 }), RangeError);
  await assert.rejects(t.translate('Hello, world.', { minLen: (1 << 20) + 1 }), /min_len must be an integer in \[0, 1048576\]/);
  assert.equal(typeof await t.translate('Hello, world.', { minLen: 10, maxLength: 10, beam: 1 }), 'string');
  t.destroy();
  const run = cli(['--model', FIXTURE, '--to', 'es', '--min-len', '1048576', 'Hello.']);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, limit);
  assert.equal(run.stdout, '');
});

test('offline, a kept copy that fails its check says so, not only that the file cannot be downloaded', async () => {
  const dir = join(tmp, 'served/');
  cpSync(FIXTURE, dir, { recursive: true });
  let base;
  await withServer({ mounts: [{ prefix: '/m/', dir }] }, async (url) => {
    base = `${url}m/`;
    (await createTranslator({ model: base, sourceLanguage: 'en', targetLanguage: 'es' })).destroy();
  });
  // The server is gone: the kept copy loads, until it is damaged.
  (await createTranslator({ model: base, sourceLanguage: 'en', targetLanguage: 'es' })).destroy();
  const kept = readdirSync(join(tmp, 'cache/residual-mt'), { recursive: true }).map(String);
  const damage = (name) => {
    const path = join(tmp, 'cache/residual-mt', kept.find((p) => p.endsWith(`/${name}`)));
    const bytes = readFileSync(path);
    bytes[bytes.length - 2] ^= 1;
    writeFileSync(path, bytes);
  };
  damage('model.safetensors');
  const failed = (name) => (err) => err.name === 'NetworkError' &&
    new RegExp(`the kept copy of the model's ${name.replace('.', '\\.')} failed its check, and it cannot be downloaded again ` +
      `\\(cannot download .*\\)\\. The check: .*failed SHA-256 verification`).test(err.message);
  await assert.rejects(createTranslator({ model: base, sourceLanguage: 'en', targetLanguage: 'es' }), failed('model.safetensors'));
  damage('config.json');
  await assert.rejects(createTranslator({ model: base, sourceLanguage: 'en', targetLanguage: 'es' }), failed('config.json'));
});

test('calls waiting on one AbortSignal add one abort listener to it, not one each', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const shared = new AbortController();
    const options = { model: FIXTURE, sourceLanguage: 'en', targetLanguage: 'es', signal: shared.signal };
    const made = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? availability(options) : createTranslator(options))));
    const t = made.find((m) => typeof m === 'object');
    const calls = Array.from({ length: 200 }, (_, i) => t.translate(`Hello ${i}.`, { beam: 1, signal: i % 2 ? shared.signal : undefined })
      .catch((err) => err.name));
    await new Promise((resolve) => setTimeout(resolve, 20));
    shared.abort();
    const results = await Promise.all(calls);
    assert.ok(results.every((r) => r === 'AbortError' || typeof r === 'string'));
    for (const m of made) if (typeof m === 'object') assert.ok(m.destroyed, 'aborting create()\'s signal destroys its translators');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  } finally {
    process.off('warning', onWarning);
  }
});
