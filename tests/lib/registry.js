// A replica of Firefox's model registry (Remote Settings) for tests: a local
// HTTP server (127.0.0.1 only) with the server root (/v1/, announcing
// capabilities.attachments.base_url), the records of translations-models-v2
// (zstd attachments, written by the zstd tool) and of the older
// translations-models (fromLang/toLang, gzip attachments, written by gzip),
// and the attachments. The models are random-weight Marian students of the
// real `tiny` shape (intgemm8, as Firefox ships them) with Firefox's real
// es→en vocabulary (tests/fixtures/firefox-esen/, with its provenance) and a random 50/50 shortlist.
//
// v2 holds: es-en 3.0 (superseded) and 3.1, a 3.1 qualityModel and a file of
// an unknown fileType, a 4.0 es-en model (a major not supported) and one with
// a filter_expression; en-es 3.0 with srcvocab + trgvocab (the same
// vocabulary); de-en 3.0 and en-fr 3.0 (de → fr goes through English). v1
// holds es-en 1.0. Tests change the records (server.collections) and break
// attachments (server.faults) as they go.
import { createHash, randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { MARIAN_SHAPES, quantiseMarian, randomMarianModel, randomShortlist, writeMarianBin } from './marian.js';

const VOCAB = fileURLToPath(new URL('../fixtures/firefox-esen/vocab.esen.spm.gz', import.meta.url));
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

// The models' plain files in `dir`: { 'es-en': { model, vocab, lex } (paths), ... }.
function writeModels(dir) {
  const vocab = gunzipSync(readFileSync(VOCAB));
  const lex = randomShortlist({ vocab: 32000, first: 50, best: 50, seed: 200 });
  writeFileSync(join(dir, 'vocab.spm'), vocab);
  writeFileSync(join(dir, 'lex.bin'), lex);
  const models = {};
  for (const [pair, seed] of [['es-en', 201], ['en-es', 202], ['de-en', 203], ['en-fr', 204]]) {
    const marian = quantiseMarian(randomMarianModel({ ...MARIAN_SHAPES.tiny, vocab: 32000, seed }));
    writeFileSync(join(dir, `${pair}.bin`), writeMarianBin(marian));
    models[pair] = { model: join(dir, `${pair}.bin`), vocab: join(dir, 'vocab.spm'), lex: join(dir, 'lex.bin') };
  }
  return models;
}

// Compresses `path` with the real tool, once: zstd (default level) or gzip -9.
const compressed = new Set();
function compress(path, tool) {
  const out = `${path}.${tool === 'zstd' ? 'zst' : 'gz'}`;
  if (compressed.has(out)) return out;
  compressed.add(out);
  const r = tool === 'zstd' ? spawnSync('zstd', ['-q', '-f', path, '-o', out]) : spawnSync('sh', ['-c', 'gzip -9 -n -c "$1" > "$2"', 'gzip', path, out]);
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return out;
}

// One record of v2's form, its attachment compressed by `tool` into site/attachments/.
function record(site, { name, pair, version, fileType, path, tool = 'zstd', v1 = false, extra = {} }) {
  const compressed = readFileSync(compress(path, tool));
  const plain = readFileSync(path);
  const collection = v1 ? 'translations-models' : 'translations-models-v2';
  const location = `main-workspace/${collection}/${randomUUID()}.${tool === 'zstd' ? 'zst' : 'gz'}`;
  mkdirSync(join(site, 'attachments', 'main-workspace', collection), { recursive: true });
  writeFileSync(join(site, 'attachments', location), compressed);
  const attachment = { filename: `${name}.${tool === 'zstd' ? 'zst' : 'gz'}`, location, hash: sha256(compressed), size: compressed.length,
    mimetype: tool === 'zstd' ? 'application/zstd' : 'application/gzip' };
  const [source, target] = pair.split('-');
  const languages = v1 ? { fromLang: source, toLang: target } : { sourceLanguage: source, targetLanguage: target };
  const sizes = v1 ? {} : { decompressedSize: plain.length, decompressedHash: sha256(plain), architecture: 'tiny' };
  return { id: randomUUID(), name, ...languages, version, fileType, filter_expression: '', ...sizes, attachment,
    schema: 1700000000000, last_modified: 1700000000000, ...extra };
}

// The records of one model's files.
function modelRecords(site, pair, files, version, { vocabs = ['vocab'], tool, v1 } = {}) {
  const code = pair.replace('-', '');
  const list = [
    { name: `model.${code}.intgemm8.bin`, fileType: 'model', path: files.model },
    { name: `lex.50.50.${code}.s2t.bin`, fileType: 'lex', path: files.lex },
    ...vocabs.map((type) => ({ name: `${type}.${code}.spm`, fileType: type, path: files.vocab })),
  ];
  return list.map((f) => record(site, { ...f, pair, version, tool, v1 }));
}

// Writes the replica's site into `dir`: { models (plain files by pair), collections, site }.
export function buildReplica(dir) {
  const models = writeModels(dir);
  const site = join(dir, 'site');
  const other = (name, fileType, version, extra = {}) => record(site, { name, pair: 'es-en', version, fileType, path: models['en-es'].model, extra });
  const v2 = [
    ...modelRecords(site, 'es-en', models['en-es'], '3.0'),
    ...modelRecords(site, 'es-en', models['es-en'], '3.1'),
    other('qualityModel.esen.bin', 'qualityModel', '3.1'),
    other('metadata.esen.json', 'modelCard', '3.1'),
    other('model.esen.intgemm8.bin', 'model', '4.0'),
    other('model.esen.intgemm8.bin', 'model', '3.9', { filter_expression: "env.channel == 'nightly'" }),
    ...modelRecords(site, 'en-es', models['en-es'], '3.0', { vocabs: ['srcvocab', 'trgvocab'] }),
    ...modelRecords(site, 'de-en', models['de-en'], '3.0'),
    ...modelRecords(site, 'en-fr', models['en-fr'], '3.0'),
  ];
  const v1 = modelRecords(site, 'es-en', models['es-en'], '1.0', { tool: 'gzip', v1: true });
  return { models, site, collections: { 'translations-models-v2': v2, 'translations-models': v1 } };
}

// Serves a replica on 127.0.0.1 (any origin may read it, as a CDN's CORS
// would allow): /v1/ (and /old/v1/, a server with only the older
// collection), the records, /attachments/. server.faults[location]:
// 'missing' (404) or 'cut' (half the bytes, then the connection dropped);
// server.requests counts each path served.
export async function startReplica({ site, collections }) {
  const server = createServer((req, res) => answer(server, req, res));
  server.collections = structuredClone(collections);
  server.faults = {};
  server.requests = {};
  server.site = site;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.origin = `http://127.0.0.1:${server.address().port}`;
  server.root = `${server.origin}/v1/`;
  server.oldRoot = `${server.origin}/old/v1/`;
  server.stop = () => new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(resolve);
  });
  return server;
}

function answer(server, req, res) {
  const path = decodeURIComponent(new URL(req.url, server.origin).pathname);
  server.requests[path] = (server.requests[path] ?? 0) + 1;
  const headers = { 'access-control-allow-origin': '*', 'cache-control': 'no-cache' };
  const json = (value) => {
    const body = Buffer.from(JSON.stringify(value));
    res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': body.length }).end(body);
  };
  const root = /^(\/old)?\/v1\/(.*)$/.exec(path);
  if (root && root[2] === '') return json({ project_name: 'Remote Settings PROD', capabilities: { attachments: { base_url: `${server.origin}/attachments/` } } });
  const records = root && /^buckets\/main\/collections\/([^/]+)\/records$/.exec(root[2]);
  const list = records && (!root[1] || records[1] === 'translations-models') ? server.collections[records[1]] : null;
  if (list) return json({ data: list });
  if (path.startsWith('/attachments/')) return attachment(server, path.slice('/attachments/'.length), res, headers);
  res.writeHead(404, headers).end();
}

function attachment(server, location, res, headers) {
  let bytes;
  try {
    if (location.includes('..') || server.faults[location] === 'missing') throw new Error('missing');
    bytes = readFileSync(join(server.site, 'attachments', location));
  } catch {
    return res.writeHead(404, headers).end();
  }
  res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  if (server.faults[location] !== 'cut') return res.end(bytes);
  res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
}

// createTranslator's options for a pair's plain files loaded directly (the reference).
export function directOptions(replica, pair) {
  const f = replica.models[pair], [sourceLanguage, targetLanguage] = pair.split('-');
  return { sourceLanguage, targetLanguage, model: { marian: { model: f.model, vocab: f.vocab, shortlist: f.lex } } };
}

// texts translated by a translator create(options) makes, then destroyed.
export async function translateOnce(create, options, texts) {
  const translator = await create(options);
  try {
    return await translator.translate(texts);
  } finally {
    translator.destroy();
  }
}
