// Language tags as the Translator API takes them: BCP 47, validated and
// canonicalized as ECMA-402 does ("EN-gb" -> "en-GB", RangeError for "en_US"),
// then matched to a model's languages by language and script, so "es-ES" and
// "es-419" use an "es" model and "en-US" -> "en-GB" is the same language.

// Language pairs [source, target] a model config supports.
export function languagePairs(config, modelUrl) {
  const langs = config?.languages ?? {};
  const targets = langs.target_lang_tokens ? Object.keys(langs.target_lang_tokens) : langs.target ?? [];
  const sources = langs.source ?? [];
  const pairs = [];
  for (const s of sources) for (const t of targets) if (s !== t) pairs.push([s, t]);
  if (!pairs.length) {
    const m = /(?:^|\/)([a-z]{2,3})-([a-z]{2,3})\/?$/.exec(String(modelUrl ?? '').replace(/\/$/, ''));
    if (m) pairs.push([m[1], m[2]]);
  }
  return pairs;
}

// The target language the engine is told for `target`: the model's tag for
// it where the model translates into several languages (it then starts each
// source with that language's token: config.languages.target_lang_tokens),
// its first one when `target` is not given; undefined for a one-direction model.
export function engineTarget(config, target) {
  const tokens = config?.languages?.target_lang_tokens;
  if (!tokens) return undefined;
  if (target === undefined) return Object.keys(tokens)[0];
  return Object.hasOwn(tokens, target) ? target : undefined;
}

// The canonical form of a required tag option (TypeError when missing,
// RangeError when not a well-formed tag).
export function canonicalTag(tag, member) {
  if (tag === undefined || tag === null) {
    throw new TypeError(`residual-mt: ${member} is required (a BCP 47 language tag such as "es")`);
  }
  try {
    return Intl.getCanonicalLocales(String(tag))[0];
  } catch {
    throw new RangeError(`residual-mt: ${member} ${JSON.stringify(String(tag))} is not a valid BCP 47 language tag`);
  }
}

// What two tags are compared by: the language, and the script it is written
// in (given or likely: "zh-TW" is Hant, "zh-CN" Hans).
function matchKey(tag) {
  const locale = new Intl.Locale(tag);
  let script = locale.script;
  try {
    script ??= locale.maximize().script;
  } catch { /* no likely script */ }
  return `${locale.language}-${script ?? ''}`;
}

// Whether `wanted` may use a model language `have` (both canonical).
export function sameLanguage(have, wanted) {
  return matchKey(have) === matchKey(wanted);
}

// The pair a translator from `sourceLanguage` to `targetLanguage` uses:
// { sourceLanguage, targetLanguage, identity }. The model's own tags when one
// of its pairs matches; the requested (canonical) tags, identity true, when
// both name the same language (the text comes back as it is); null when the
// model cannot translate them.
export function resolvePair(pairs, sourceLanguage, targetLanguage) {
  const source = canonicalTag(sourceLanguage, 'sourceLanguage');
  const target = canonicalTag(targetLanguage, 'targetLanguage');
  const pair = pairs.find(([s, t]) => sameLanguage(s, source) && sameLanguage(t, target));
  if (pair) return { sourceLanguage: pair[0], targetLanguage: pair[1], identity: false };
  if (sameLanguage(source, target)) return { sourceLanguage: source, targetLanguage: target, identity: true };
  return null;
}

export function describePairs(pairs) {
  return pairs.length ? pairs.map(([s, t]) => `${s} → ${t}`).join(', ') : 'no language pair it declares';
}
