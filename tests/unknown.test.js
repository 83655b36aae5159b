// Characters the model has no piece for (emoji, names in other scripts,
// symbols, control characters) come back in the translation byte for byte
// (src/carry.c), on the shipped model, both directions: never as "⁇", never
// lost. Lone surrogates come back as U+FFFD (docs/API.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createTranslator } from '../js/index.js';

const model = fileURLToPath(new URL('../models/es-en/', import.meta.url));
let es, en; // es -> en, en -> es
before(async () => {
  es = await createTranslator({ model, sourceLanguage: 'es', targetLanguage: 'en' });
  en = await createTranslator({ model, sourceLanguage: 'en', targetLanguage: 'es' });
});
after(() => {
  es?.destroy();
  en?.destroy();
});

const count = (text, part) => text.split(part).length - 1;

// Translates `text` plainly, streamed and with details (each the same text),
// and checks that every one of `kept` comes through as often as it is in the
// input, and that nothing became "⁇".
async function carried(translator, text, kept) {
  const out = await translator.translate(text);
  let streamed = '';
  for await (const chunk of translator.translateStreaming(text)) streamed += chunk;
  assert.equal(streamed, out, `streamed as translated: ${JSON.stringify(text)}`);
  assert.equal((await translator.translate(text, { details: true })).text, out);
  assert.ok(!out.includes('⁇'), `no ⁇ in ${JSON.stringify(out)}`);
  for (const part of kept) {
    assert.equal(count(out, part), count(text, part), `${JSON.stringify(part)} kept in ${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
  }
  return out;
}

test('an emoji inside a sentence comes back where the model put its <unk>', async () => {
  assert.equal(await carried(es, 'El archivo 😀 no existe.', ['😀']), 'The file 😀 does not exist.');
  assert.equal(await carried(en, 'The file 😀 does not exist.', ['😀']), 'El archivo 😀 no existe.');
  await carried(es, 'Instale el paquete 📦 con apt 🙂 y reinicie 🔁 el servidor 🖥️ ahora.', ['📦', '🙂', '🔁', '🖥️']);
  await carried(en, 'Install the package 📦 with apt 🙂 and restart 🔁 the server 🖥️ now.', ['📦', '🙂', '🔁', '🖥️']);
  await carried(es, '👨‍👩‍👧 Mi familia es grande.', ['👨‍👩‍👧']);
  await carried(es, 'Hola mundo 😀', ['😀']);
});

test('names in Hebrew and Arabic and symbols come back whole', async () => {
  assert.equal(await carried(es, 'Mi amigo דוד vive en Madrid.', ['דוד']), 'My friend דוד lives in Madrid.');
  await carried(en, 'My friend דוד lives in Madrid.', ['דוד']);
  await carried(es, 'El usuario محمد no tiene permiso.', ['محمد']);
  await carried(en, 'The user محمد does not have permission.', ['محمد']);
  // Arabic letters the vocabulary happens to have go with the unknown ones.
  await carried(es, 'La palabra مرحبا significa hola y שלום también.', ['مرحبا', 'שלום']);
  await carried(es, 'El archivo ☃ no existe: ✗ error ⚠.', ['☃', '✗', '⚠']);
  await carried(en, 'The file ☃ does not exist: ✗ error ⚠.', ['☃', '✗', '⚠']);
});

test('bidi controls come back with the text they hold, as many of each', async () => {
  const controls = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];
  const isolated = 'El archivo \u2068שלום\u2069 no existe.';
  assert.ok((await carried(es, isolated, controls)).includes('\u2068שלום\u2069'));
  assert.ok((await carried(en, 'The file \u2067محمد\u2069 does not exist.', controls)).includes('\u2067محمد\u2069'));
  await carried(es, 'El archivo \u202Eabc.txt no existe.', controls);
  await carried(en, 'The file \u202Eabc\u202C does not exist.', controls);
});

test('NUL and other control characters are kept, each where the alignment puts it', async () => {
  await carried(es, 'El archivo a\u0000b no existe.', ['\u0000']);
  await carried(en, 'The file a\u0000b does not exist.', ['\u0000']);
  // Characters the tokenizer drops (BEL, a zero-width space) are kept too.
  await carried(es, 'El archivo\u0007 no existe y \u200Bel usuario tampoco.', ['\u0007', '\u200B']);
  await carried(en, 'The file\u0007 does not exist.', ['\u0007']);
});

test('a lone surrogate comes back as U+FFFD, in translated text and in text kept as it was', async () => {
  for (const [translator, text] of [[es, 'El archivo \uD800 no existe.'], [en, 'The file \uDC00 does not exist.']]) {
    const out = await carried(translator, text, []);
    assert.equal(count(out, '\uFFFD'), 1, JSON.stringify(out));
    assert.ok(out.isWellFormed(), JSON.stringify(out));
  }
  assert.equal(await es.translate('😀 \uDBFF'), '😀 \uFFFD');
  assert.deepEqual(await es.translate(['\uDC00', 'Hola \uD83D.']).then((r) => r.map((t) => t.isWellFormed() && count(t, '\uFFFD'))), [1, 1]);
  let streamed = '';
  for await (const chunk of es.translateStreaming('42 \uD800')) streamed += chunk;
  assert.equal(streamed, '42 \uFFFD');
});
