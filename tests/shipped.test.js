// The shipped model: the WASM engine translates a sample of the test books
// exactly as the PyTorch reference does (tests/fixtures/shipped-sample.json,
// made by tests/fixtures/make_shipped_sample.py with spm_encode + reference + spm_decode).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../js/engine/binding.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
const dir = `${root}${sample.model}/`;

test('the shipped model translates the test-book sample as the reference does', async () => {
  const e = await Engine.load();
  {
    const read = (f) => readFileSync(`${dir}${f}`);
    const model = e.loadModel({ config: read('config.json'), weights: read('model.safetensors'), spm: read('spm.model') });
    const options = { maxLenA: sample.max_len_a, maxLenB: sample.max_len_b };
    // With the model's lexical shortlist (the default), and without it.
    const searches = [['greedy', { beam: 1 }], ['beam5', { beam: 5 }]];
    if (JSON.parse(read('config.json')).shortlist_first != null) {
      assert.ok('greedy_all_words_ids' in sample.cases[0], 'the fixture has the translations without the shortlist');
      searches.push(['greedy_all_words', { beam: 1, shortlist: false }], ['beam5_all_words', { beam: 5, shortlist: false }]);
    }
    let same = 0;
    for (const lang of new Set(sample.cases.map((c) => c.target_language))) {
      const cases = sample.cases.filter((c) => c.target_language === lang);
      cases.forEach((c) => assert.deepEqual(model.tokenize(c.text), c.source_ids, `tokenization of "${c.text}"`));
      for (const [key, search] of searches) {
        const got = model.translateTexts(cases.map((c) => c.text), { ...options, ...search, targetLanguage: lang ?? undefined });
        cases.forEach((c, i) => {
          assert.deepEqual(got[i][0].ids, c[`${key}_ids`], `${key} ${c.source_language}->${lang}: "${c.text}"`);
          assert.equal(got[i][0].text, c[key]);
          same++;
        });
      }
    }
    console.log(`shipped model ${sample.model}: ${same}/${same} translations identical to the reference (${searches.map(([k]) => k).join(', ')})`);
    model.dispose();
  }
});
