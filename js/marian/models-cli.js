// `residual-mt models`: Firefox's model registry (registry.js) from the
// command line, for sites that host the models themselves.
//
//   residual-mt models list [--registry URL]
//   residual-mt models pull [--registry URL] es-en de-en ... --out DIR
//
// pull downloads each model's files (kept in DIR/.downloads/ under their
// SHA-256 once they check out, so a second run resumes where one stopped),
// checks each against the record's size and SHA-256, decompresses and checks
// the decompressed size and SHA-256, converts the model (marian.js) into
// DIR/<pair>/ (config.json, model.safetensors, spm.model, manifest.json) and
// lists it in DIR/catalog.json (relative URLs: createTranslator({ catalog:
// 'DIR/catalog.json' }) reads it). Everything is written under a temporary
// name and renamed once whole and checked: nothing half-written looks complete.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open as openFile, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { boundedChunks } from '../load/bounded.js';
import { CATALOG, CONFIG, MANIFEST, TOKENIZER, WEIGHTS } from '../defaults.js';
import { open } from '../load/files.js';
import { convertMarian } from './convert.js';
import { unpacked } from './load.js';
import { marianFile, readRegistry, selectModels } from '../load/registry.js';

export const MODELS_USAGE = `usage:
  residual-mt models list [--registry URL]                          the registry's models: pair, architecture, version, download size
  residual-mt models pull [--registry URL] PAIR ... --out DIR       download, check, convert: DIR/PAIR/ and DIR/catalog.json

  --registry URL    a Remote Settings server root (default: firefox, Mozilla's)
  PAIR              source-target, as es-en`;

const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const pairName = (m) => `${m.pair.join('-')}${m.variant ? `:${m.variant}` : ''}`;
// A model's directory under DIR: its pair, and its variant in characters safe in a path and a relative URL.
const dirName = (m) => `${m.pair.join('-')}${m.variant ? `.${String(m.variant).replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;
const tmpName = (path) => `${path}.${process.pid}.tmp`;

class ModelsUsageError extends Error {}

export async function modelsCommand(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { registry: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true, strict: true });
  } catch (err) {
    throw Object.assign(new ModelsUsageError(err.message), { usage: MODELS_USAGE });
  }
  const { values, positionals: [command, ...pairs] } = parsed;
  if (values.help || !command) return console.log(MODELS_USAGE);
  const catalog = { firefox: values.registry ?? 'firefox' };
  if (command === 'list') return listModels(catalog);
  if (command !== 'pull') throw Object.assign(new ModelsUsageError(`no models command "${command}" (list or pull)`), { usage: MODELS_USAGE });
  if (!values.out || !pairs.length) throw Object.assign(new ModelsUsageError('models pull needs PAIRs and --out DIR'), { usage: MODELS_USAGE });
  return pullModels(catalog, pairs, values.out);
}

async function listModels(catalog) {
  const registry = await readRegistry(catalog, { cache: false });
  const { models, refused } = selectModels(registry.records);
  for (const m of models) {
    console.log([pairName(m).padEnd(10), (m.architecture ?? '-').padEnd(12), m.version.padEnd(8), MB(m.bytes)].join(' '));
  }
  console.error(`residual-mt: ${models.length} models in ${registry.collection} at ${registry.root}; ${refused.length} records not used` +
    (refused.length ? ` (${[...new Set(refused.map((r) => r.why.split(/[ :]/)[0]))].join(', ')}: see docs/API.md)` : ''));
}

// Pulls each pair; a pair that fails is reported and the next one tried.
async function pullModels(catalog, pairs, out) {
  const registry = await readRegistry(catalog, { cache: false });
  const { models } = selectModels(registry.records);
  await mkdir(join(out, '.downloads'), { recursive: true });
  let failed = 0;
  for (const wanted of pairs) {
    const m = models.find((model) => pairName(model) === wanted);
    try {
      if (!m) throw new Error(`the registry has no model ${wanted} (models list shows them)`);
      await pullModel(m, registry, out);
      await addToCatalog(out, m, registry);
    } catch (err) {
      failed++;
      console.error(`residual-mt: ${wanted}: ${err.message.replace(/^residual-mt: /, '')}`);
    }
  }
  if (failed) process.exitCode = 1;
}

async function pullModel(m, registry, out) {
  const dir = join(out, dirName(m));
  if (await pulledAlready(dir, m)) return console.error(`residual-mt: ${pairName(m)} ${m.version}: already in ${dir}`);
  const bytes = {};
  for (const [role, record] of Object.entries(m.files)) {
    const file = marianFile(record, registry.baseUrl);
    bytes[role] = await unpacked(file, await readFile(await download(file, out)));
  }
  const converted = await convertMarian(bytes, { file: m.files.model.name, sourceLanguage: m.pair[0], targetLanguage: m.pair[1] });
  const files = { [CONFIG]: new TextEncoder().encode(converted.config), [WEIGHTS]: converted.weights, [TOKENIZER]: converted.spm };
  const manifest = { format: 'residual-mt-manifest/1', files: {}, registry: { version: m.version, files: Object.values(m.files).map((r) => r.attachment.hash) } };
  const tmp = tmpName(dir);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  for (const [name, data] of Object.entries(files)) {
    manifest.files[name] = { sha256: createHash('sha256').update(data).digest('hex'), size: data.length };
    await writeFile(join(tmp, name), data);
  }
  await writeFile(join(tmp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
  console.error(`residual-mt: ${pairName(m)} ${m.version}: converted into ${dir}`);
}

// Whether dir holds this version's conversion, its files whole.
async function pulledAlready(dir, m) {
  let manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8'));
  } catch {
    return false;
  }
  const hashes = Object.values(m.files).map((r) => r.attachment.hash);
  if (JSON.stringify(manifest.registry?.files) !== JSON.stringify(hashes)) return false;
  if (![CONFIG, WEIGHTS, TOKENIZER].every((name) => manifest.files?.[name])) return false;
  for (const [name, { sha256, size }] of Object.entries(manifest.files ?? {})) {
    if ((await stat(join(dir, name)).catch(() => null))?.size !== size || await fileHash(join(dir, name)) !== sha256) return false;
  }
  return true;
}

async function fileHash(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

// The attachment in DIR/.downloads/<sha256>: kept from an earlier run if it
// checks out, else downloaded (bounded by its size) to a temporary name,
// checked, and renamed.
async function download(file, out) {
  const path = join(out, '.downloads', file.sha256);
  if ((await stat(path).catch(() => null))?.size === file.size && await fileHash(path) === file.sha256) return path;
  const source = await open(new URL(file.url), file.name, undefined);
  if (source.missing) throw new Error(`${file.name}: ${source.message}`);
  if (source.error) throw new Error(`${file.name}: ${source.error.message}`);
  const tmp = tmpName(path), handle = await openFile(tmp, 'w'), hash = createHash('sha256'), bar = progressBar(file);
  let length = 0;
  try {
    for await (const chunk of boundedChunks(source.chunks(), { maxBytes: file.size, name: file.name, why: 'the size its record gives' }, source.size)) {
      length += chunk.length;
      hash.update(chunk);
      await handle.write(chunk);
      bar(length);
    }
    if (length !== file.size) throw new Error(`${file.name}: ${length} bytes of the ${file.size} its record gives (a truncated download)`);
    if (hash.digest('hex') !== file.sha256) throw new Error(`${file.name}: failed SHA-256 verification (not the file its record names)`);
  } catch (err) {
    source.cancel?.();
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  } finally {
    bar.done();
  }
  await handle.close();
  await rename(tmp, path);
  return path;
}

// A progress bar on a terminal (stderr), else nothing until the file is in.
function progressBar(file) {
  const tty = process.stderr.isTTY;
  let shown = -1;
  const bar = (length) => {
    const percent = Math.floor((100 * length) / Math.max(1, file.size));
    if (!tty || percent === shown) return;
    shown = percent;
    const filled = Math.round(percent / 5);
    process.stderr.write(`\r${file.name.padEnd(32)} [${'#'.repeat(filled)}${' '.repeat(20 - filled)}] ${String(percent).padStart(3)}% of ${MB(file.size)}`);
  };
  bar.done = () => {
    if (tty && shown >= 0) process.stderr.write('\n');
    else if (!tty) console.error(`residual-mt: ${file.name}: ${MB(file.size)}`);
  };
  return bar;
}

// DIR/catalog.json with this model's entry (replacing an older one of its pair).
async function addToCatalog(out, m, registry) {
  const path = join(out, CATALOG);
  let catalog = { models: [] };
  try {
    catalog = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if (err.code !== 'ENOENT') throw new Error(`${path} is not a catalogue (${err.message}): remove it and pull again`);
  }
  const model = `${dirName(m)}/`;
  catalog.models = [...(catalog.models ?? []).filter((e) => e.model !== model),
    { model, pairs: [m.pair], registry: { root: registry.root, collection: registry.collection, version: m.version, architecture: m.architecture } }];
  await writeFile(tmpName(path), `${JSON.stringify(catalog, null, 2)}\n`);
  await rename(tmpName(path), path);
}
