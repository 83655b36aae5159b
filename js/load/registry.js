// Firefox's model registry as a catalogue: catalog: 'firefox' (Mozilla's
// public Remote Settings server) or { firefox: URL } (a mirror or replica of
// its API). The server root announces where attachments live
// (capabilities.attachments.base_url); the collection translations-models-v2
// (or the older translations-models, whose records name their languages
// fromLang/toLang) lists one record per file: name, sourceLanguage,
// targetLanguage, variant, version, fileType (model, vocab, srcvocab,
// trgvocab, lex, qualityModel), filter_expression, decompressedSize,
// decompressedHash and attachment { location, hash, size }.
//
// Firefox's selection, as TranslationsParent applies it: per file name,
// language pair and variant, the highest version whose major is supported
// (REGISTRY_MAJORS); then per pair and variant only the files whose version
// is the model file's. Each model becomes a catalogue entry of Marian files
// (marian-load.js downloads, checks both hashes, decompresses and converts
// them). What is not used, and why, is in the listing's `refused`.
// The record list is read on every call (a new version is seen at once) and
// kept in the model cache, which answers when the server cannot.

import { FIREFOX_REGISTRY, MAX_MODEL_BYTES, MAX_RECORDS_BYTES, REGISTRY_COLLECTIONS, REGISTRY_MAJORS } from '../defaults.js';
import { modelStore } from './cache.js';
import { makeError } from '../util/errors.js';
import { networkError, open, readAll, readJsonFile, toUrl } from './files.js';
import { canonicalTag } from '../util/languages.js';

// The file types a model is made of, by the Marian option each fills; the
// rest (qualityModel, and any later type) are not used.
const FILE_ROLES = { model: 'model', vocab: 'vocab', srcvocab: 'vocab', trgvocab: 'targetVocab', lex: 'shortlist' };
const KEPT_PREFIX = 'residual-mt-registry:';

export const isRegistry = (catalog) => catalog === 'firefox' ||
  (!!catalog && typeof catalog === 'object' && !(catalog instanceof URL) && 'firefox' in catalog);

// The server root's URL (ending in '/'): 'firefox' and { firefox: 'firefox' } are Mozilla's.
export async function registryRoot(catalog) {
  const given = catalog === 'firefox' ? 'firefox' : catalog.firefox;
  if (typeof given !== 'string' && !(given instanceof URL)) throw new TypeError('residual-mt: catalog.firefox must be the URL of a Remote Settings server root');
  const root = await toUrl(given === 'firefox' ? FIREFOX_REGISTRY : given);
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return root;
}

// A JSON answer of the server (null: there is none), read whole within MAX_RECORDS_BYTES.
async function readServerJson(url, what, signal) {
  const file = await open(url, what, signal);
  if (file.missing) return null;
  if (file.error) throw file.error;
  const bytes = await readAll(file, () => {}, file.size, { maxBytes: MAX_RECORDS_BYTES, name: `${what} (${url})`, why: 'MAX_RECORDS_BYTES' });
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw makeError('OperationError', `residual-mt: ${what} (${url}) is not JSON: ${err.message}`);
  }
}

// { root, baseUrl, collection, records } from the server: its first
// collection of REGISTRY_COLLECTIONS that it has (or `collection`).
async function fetchRegistry(root, { collection, signal }) {
  const info = await readJsonFile(root, 'the registry\'s server root', signal);
  const base = info?.capabilities?.attachments?.base_url;
  if (typeof base !== 'string') throw makeError('OperationError', `residual-mt: ${root.href} announces no capabilities.attachments.base_url: not a Remote Settings server with attachments`);
  for (const name of collection ? [collection] : REGISTRY_COLLECTIONS) {
    const url = new URL(`buckets/main/collections/${encodeURIComponent(name)}/records`, root);
    const answer = await readServerJson(url, `the registry's ${name} records`, signal);
    if (answer === null) continue;
    if (!Array.isArray(answer?.data)) throw makeError('OperationError', `residual-mt: ${url.href} is not a record list ({ "data": [...] })`);
    return { root: root.href, baseUrl: new URL(base, root).href, collection: name, records: answer.data };
  }
  throw networkError(`residual-mt: ${root.href} has no collection ${(collection ? [collection] : REGISTRY_COLLECTIONS).join(' or ')}`);
}

// The registry's records: from the server, kept in the model cache; when the
// server cannot be reached, the last ones kept.
export async function readRegistry(catalog, { signal, cache = true } = {}) {
  const root = await registryRoot(catalog);
  const collection = typeof catalog === 'object' ? catalog.collection : undefined;
  const store = await modelStore(root, cache);
  const pointer = `${KEPT_PREFIX}${root.href}${collection ? `#${collection}` : ''}`;
  try {
    const registry = await fetchRegistry(root, { collection, signal });
    await store?.saveManifest(pointer, new TextEncoder().encode(JSON.stringify(registry)));
    return registry;
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    const kept = err.name === 'NetworkError' ? await store?.manifest(pointer) : null;
    if (!kept) throw err;
    return JSON.parse(new TextDecoder().decode(kept));
  }
}

// Mozilla's version order (nsIVersionComparator): dot-separated parts, each
// number, letters, number, rest; a part without letters is newer than one
// with ("3.0" > "3.0a2" > "3.0a1"); missing parts are 0.
function versionPart(text = '0') {
  const [, a, b, c, d] = /^(\d*)(\D*)(\d*)(.*)$/s.exec(text);
  return [Number(a || 0), b, Number(c || 0), d];
}

function compareStrings(a, b) {
  if (a === b) return 0;
  if (!a) return 1;
  if (!b) return -1;
  return a < b ? -1 : 1;
}

export function compareVersions(x, y) {
  const [xs, ys] = [x.split('.'), y.split('.')];
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    const [a, b] = [versionPart(xs[i]), versionPart(ys[i])];
    const order = Math.sign(a[0] - b[0]) || compareStrings(a[1], b[1]) || Math.sign(a[2] - b[2]) || compareStrings(a[3], b[3]);
    if (order) return order;
  }
  return 0;
}

// Whether a version's major is one REGISTRY_MAJORS has (Firefox's bounds: from min.0a, below (max+1).0a).
export const supportedVersion = (version) => compareVersions(`${REGISTRY_MAJORS.min}.0a`, version) <= 0 &&
  compareVersions(`${REGISTRY_MAJORS.max + 1}.0a`, version) > 0;

const sizeOf = (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
const validSize = (size) => Number.isSafeInteger(size) && size >= 0 && size <= MAX_MODEL_BYTES;
const validHash = (hash) => typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash);

// A record in one form (v2's names), or { why } when it cannot be used.
function normalise(record) {
  const name = typeof record?.name === 'string' ? record.name : '(no name)';
  const source = record?.sourceLanguage ?? record?.fromLang, target = record?.targetLanguage ?? record?.toLang;
  const why = (text) => ({ name, why: text });
  if (!record || typeof record !== 'object') return why('not a record');
  if (record.deleted) return null; // a tombstone
  if (record.filter_expression) return why(`filter_expression ${JSON.stringify(record.filter_expression)}: meant for some Firefox builds only`);
  if (typeof record.version !== 'string') return why('no version');
  if (!supportedVersion(record.version)) return why(`version ${record.version}: its major is not ${REGISTRY_MAJORS.min} to ${REGISTRY_MAJORS.max}`);
  if (!(record.fileType in FILE_ROLES)) return why(`fileType ${record.fileType}: not a file a translation model needs`);
  const a = record.attachment;
  if (!a || typeof a.location !== 'string' || !validHash(a.hash) || !validSize(sizeOf(a.size))) return why('no valid attachment (location, hash, size)');
  const decompressed = record.decompressedHash || record.decompressedSize !== undefined ? { sha256: record.decompressedHash, size: sizeOf(record.decompressedSize) } : null;
  if (decompressed && (!validHash(decompressed.sha256) || !validSize(decompressed.size))) return why('decompressedHash or decompressedSize not valid');
  let pair;
  try {
    pair = [canonicalTag(source, 'sourceLanguage'), canonicalTag(target, 'targetLanguage')];
  } catch {
    return why(`languages ${source} → ${target}: not language tags`);
  }
  return { name, pair, variant: record.variant ?? null, version: record.version, fileType: record.fileType,
    architecture: record.architecture ?? null, attachment: { ...a, size: sizeOf(a.size) }, decompressed };
}

const pairKey = (r) => `${r.pair[0]}→${r.pair[1]}${r.variant ? `:${r.variant}` : ''}`;

// Per file name, pair and variant, the highest supported version.
function newestFiles(records) {
  const best = new Map();
  for (const r of records) {
    const key = `${r.name}|${pairKey(r)}`;
    if (!best.has(key) || compareVersions(best.get(key).version, r.version) < 0) best.set(key, r);
  }
  return [...best.values()];
}

// The registry's models: { models: [{ pair, variant, version, architecture,
// files: { model, vocab, targetVocab?, shortlist? } (records), bytes }],
// refused: [{ name, why }] } (what is not used, and why).
export function selectModels(records) {
  const refused = [], usable = [];
  for (const record of records) {
    const r = normalise(record);
    if (r?.why) refused.push(r);
    else if (r) usable.push(r);
  }
  const groups = new Map();
  for (const r of newestFiles(usable)) groups.set(pairKey(r), [...groups.get(pairKey(r)) ?? [], r]);
  const models = [];
  for (const [key, group] of groups) {
    const model = modelOf(group);
    if (model.why) refused.push({ name: key, why: model.why });
    else models.push(model);
  }
  models.sort((a, b) => (a.variant ? 1 : 0) - (b.variant ? 1 : 0) || pairKey(a).localeCompare(pairKey(b)));
  return { models, refused };
}

// One pair's files at its model file's version, or { why }.
function modelOf(group) {
  const version = group.find((r) => r.fileType === 'model')?.version;
  if (!version) return { why: 'no model file' };
  const files = {};
  for (const r of group.filter((g) => g.version === version)) {
    const role = FILE_ROLES[r.fileType];
    if (files[role]) return { why: `two ${r.fileType} files at version ${version} (${files[role].name}, ${r.name})` };
    files[role] = r;
  }
  if (!files.vocab) return { why: `no vocab or srcvocab file at version ${version}` };
  if (files.targetVocab && sameContent(files.vocab, files.targetVocab)) delete files.targetVocab;
  if (files.targetVocab) return { why: 'separate source and target vocabularies (the engine has one tokenizer a model)' };
  const { pair, variant, architecture } = files.model;
  const bytes = Object.values(files).reduce((n, f) => n + f.attachment.size, 0);
  return { pair, variant, version, architecture, files, bytes };
}

const sameContent = (a, b) => (a.decompressed?.sha256 && a.decompressed.sha256 === b.decompressed?.sha256) || a.attachment.hash === b.attachment.hash;

// A record as a Marian file of createTranslator's `model: { marian }`.
export function marianFile(record, baseUrl) {
  return { url: new URL(record.attachment.location, baseUrl).href, name: record.name, sha256: record.attachment.hash,
    size: record.attachment.size, decompressed: record.decompressed };
}

// The registry's models as catalogue entries (catalog.js): [{ model: { marian }, pairs, registry }].
export async function loadRegistry(catalog, { signal, cache = true } = {}) {
  const registry = await readRegistry(catalog, { signal, cache });
  return selectModels(registry.records).models.map((m) => ({
    model: { marian: Object.fromEntries(Object.entries(m.files).map(([role, r]) => [role, marianFile(r, registry.baseUrl)])) },
    pairs: [m.pair],
    registry: { version: m.version, variant: m.variant, architecture: m.architecture, bytes: m.bytes },
  }));
}
