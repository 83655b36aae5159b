// A catalogue site for tests (tests/catalog.test.js, tests/browser.test.js):
// the shipped es ↔ en model declared as two models of one pair each, es → en
// and en → "fr" (its Spanish under another tag), and catalog.json listing
// them by relative URLs (one with its pairs, one whose pairs come from its
// config.json). The copies have no manifest.json: their configs changed.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIPPED = fileURLToPath(new URL('../../models/es-en/', import.meta.url));

function modelFor(site, name, source, target) {
  const dir = join(site, name);
  mkdirSync(dir);
  for (const file of ['config.json', 'model.safetensors', 'spm.model']) cpSync(join(SHIPPED, file), join(dir, file));
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const token = config.languages.target_lang_tokens[target === 'en' ? 'en' : 'es'];
  config.languages = { source: [source], target: [target], target_lang_tokens: { [target]: token } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

// { site, catalog, esEn, enFr, remove() }: paths.
export function catalogSite() {
  const site = mkdtempSync(join(tmpdir(), 'rmt-catalog-'));
  const esEn = modelFor(site, 'es-en', 'es', 'en'), enFr = modelFor(site, 'en-fr', 'en', 'fr');
  const catalog = join(site, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ models: [{ model: 'es-en/' }, { model: 'en-fr/', pairs: [['en', 'fr']] }] }));
  return { site, catalog, esEn, enFr, remove: () => rmSync(site, { recursive: true, force: true }) };
}
