// The shipped model's two translators (es -> en, en -> es) for a test file:
// made before its tests, destroyed after them.
import { before, after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTranslator } from '../../js/index.js';

export const SHIPPED = fileURLToPath(new URL('../../models/es-en/', import.meta.url));

// Returns { es, en }, filled once the file's tests start.
export function shippedPair() {
  const pair = { es: null, en: null };
  before(async () => {
    pair.es = await createTranslator({ model: SHIPPED, sourceLanguage: 'es', targetLanguage: 'en' });
    pair.en = await createTranslator({ model: SHIPPED, sourceLanguage: 'en', targetLanguage: 'es' });
  });
  after(() => {
    pair.es?.destroy();
    pair.en?.destroy();
  });
  return pair;
}
