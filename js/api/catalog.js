// A catalogue of models: which model translates which language pair, so that
// create({ sourceLanguage, targetLanguage, catalog }) finds its model, and a
// pair no model covers is translated through English by two (a pivot).
//
//   { "models": [ { "model": "https://mirror.example/de-en/", "pairs": [["de", "en"]] },
//                 { "model": "https://mirror.example/en-fr/" } ] }
//
// `model` is what createTranslator's `model` option takes: a model directory's
// URL or path, or { marian: { model, vocab, shortlist, ... } } (Firefox
// Translations' or OPUS-MT's files, each a URL or { url, sha256 }); `pairs`
// saves reading a directory's config.json to learn them, and a Marian entry
// must have them. `catalog` is that object, or the URL (or path, in Node) of
// its JSON. Relative URLs are resolved against the catalogue's. It may also
// be Firefox's model registry: 'firefox' or { firefox: URL } (registry.js).

import { makeError } from '../util/errors.js';
import { canonicalTag, languagePairs, sameLanguage } from '../util/languages.js';
import { readJsonFile, toLocation, toUrl } from '../load/files.js';
import { readConfig } from '../load/loader.js';
import { isRegistry, loadRegistry } from '../load/registry.js';

// The language a pivot goes through (as Firefox Translations does).
export const PIVOT_LANGUAGE = 'en';

// The catalogue's entries as [{ model, pairs }], pairs canonical and each
// entry's model resolved. A malformed catalogue is a TypeError naming the entry.
export async function loadCatalog(catalog, { signal, cache = true } = {}) {
  if (isRegistry(catalog)) return loadRegistry(catalog, { signal, cache });
  let data = catalog, base = null;
  if (typeof catalog === 'string' || catalog instanceof URL) {
    base = await toUrl(catalog);
    try {
      data = await readJsonFile(base, 'the catalogue', signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err.name === 'OperationError') throw err;  // more than a JSON file read whole may have
      throw makeError('NetworkError', `residual-mt: cannot read the catalogue ${base.href}: ${err.message}`);
    }
  }
  if (!data || !Array.isArray(data.models)) throw new TypeError('residual-mt: a catalogue is { "models": [ { "model": ... } ] }');
  return Promise.all(data.models.map(async (entry, i) => {
    const marian = entry?.model?.marian;
    if (typeof entry?.model !== 'string' && !marian) throw new TypeError(`residual-mt: catalogue entry ${i} has no "model" URL`);
    if (marian && !entry.pairs) throw new TypeError(`residual-mt: catalogue entry ${i}: a Marian model needs its "pairs"`);
    const resolve = (url) => (base && typeof url === 'string' ? new URL(url, base).href : url);
    const model = marian ? { marian: resolveFiles(marian, resolve) } : resolve(entry.model);
    const pairs = entry.pairs ?? languagePairs(await readConfig(await toLocation(model), { signal }), model);
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && p.length === 2)) {
      throw new TypeError(`residual-mt: catalogue entry ${i}: "pairs" must be [[source, target], ...]`);
    }
    return { model, pairs: pairs.map(([s, t]) => [canonicalTag(s, 'sourceLanguage'), canonicalTag(t, 'targetLanguage')]) };
  }));
}

// A Marian entry's files, each URL (or { url, sha256 }'s) resolved.
function resolveFiles(files, resolve) {
  return Object.fromEntries(Object.entries(files).map(([name, file]) =>
    [name, file?.url ? { ...file, url: resolve(file.url) } : resolve(file)]));
}

const translates = (entry, source, target) => entry.pairs.some(([s, t]) => sameLanguage(s, source) && sameLanguage(t, target));

// The models that take source to target: [model] when one does, else
// [first, second] through PIVOT_LANGUAGE, else null.
export function findRoute(entries, source, target) {
  const direct = entries.find((e) => translates(e, source, target));
  if (direct) return [direct.model];
  const first = entries.find((e) => translates(e, source, PIVOT_LANGUAGE));
  const second = entries.find((e) => translates(e, PIVOT_LANGUAGE, target));
  return first && second ? [first.model, second.model] : null;
}

export function describeCatalog(entries) {
  const pairs = entries.flatMap((e) => e.pairs.map(([s, t]) => `${s} → ${t}`));
  return pairs.length ? pairs.join(', ') : 'no pair';
}
