// Verbatim spans (issue 37, src/verbatim_find.c, src/verbatim.c): URLs,
// e-mail addresses, numbers, times, dates, codes, tags, paths, inline code
// and symbols come back byte for byte through the shipped model, both
// directions, plainly, streamed, with details (which list them) and in HTML.
// The sentences below are ones the shipped model alone changes or drops
// spans of (tests/fixtures/verbatim/set.tsv's "before" run, issue 37's table).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { shippedPair } from './lib/pair.js';

const pair = shippedPair();  // es -> en, en -> es

const count = (text, part) => text.split(part).length - 1;

const CASES = [
  [() => pair.es, 'Cuesta 1.234,56 € con IVA incluido.', ['1.234,56 €']],
  [() => pair.es, 'Escríbeme a ana.garcia@example.com mañana por la tarde.', ['ana.garcia@example.com']],
  [() => pair.es, 'Visita https://example.org/es/ayuda?id=42 para más información.', ['https://example.org/es/ayuda?id=42']],
  [() => pair.es, 'Pulse ★ para guardar la página en favoritos.', ['★']],
  [() => pair.es, 'Usa ~/Documentos/informe_final.pdf como plantilla.', ['~/Documentos/informe_final.pdf']],
  [() => pair.es, 'La versión v2.3.1 corrige el error 0x80070005.', ['v2.3.1', '0x80070005']],
  [() => pair.es, 'El pedido PED-2026-00417 llegará el 2026-12-06.', ['PED-2026-00417', '2026-12-06']],
  [() => pair.es, 'Puedes ver el vídeo en https://example.com/a/b?q=casa&lang=es#top desde el móvil.', ['https://example.com/a/b?q=casa&lang=es#top']],
  [() => pair.en, 'Press ⌘+C to copy the selected text.', ['⌘+C']],
  [() => pair.en, 'It costs $19.99 plus tax.', ['$19.99']],
  [() => pair.en, 'Run `git pull --rebase` before you commit the changes.', ['`git pull --rebase`']],
  [() => pair.en, 'See you on 15.03.2027 in the square 👩‍💻', ['15.03.2027', '👩‍💻']],
];

test('each span comes back byte for byte, plainly, streamed and with details', async () => {
  for (const [translator, text, spans] of CASES) {
    const out = await translator().translate(text);
    let streamed = '';
    for await (const chunk of translator().translateStreaming(text)) streamed += chunk;
    assert.equal(streamed, out, `streamed as translated: ${JSON.stringify(text)}`);
    const details = await translator().translate(text, { details: true });
    assert.equal(details.text, out);
    for (const span of spans) assert.equal(count(out, span), count(text, span), `${span} in ${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
    // details.spans: each in the input and where it is in the output, the same text.
    const listed = details.spans.map((s) => text.slice(...s.source));
    for (const span of spans) assert.ok(listed.includes(span), `${span} listed: ${JSON.stringify(details.spans)}`);
    for (const s of details.spans) {
      assert.equal(out.slice(...s.target), text.slice(...s.source), `${s.kind} ${s.how} at its place in ${JSON.stringify(out)}`);
      assert.ok(['kept', 'replaced', 'inserted'].includes(s.how));
    }
  }
});

test('details say what became of each span: kept, replaced (the model changed it) or inserted (it dropped it)', async () => {
  // The shipped model writes these with the address changed (issue 37) or the symbol left out.
  const changed = await pair.es.translate('Escribe a soporte@empresa.com si tienes dudas.', { details: true });
  assert.deepEqual(changed.spans.map(({ kind, how }) => [kind, how]), [['email', 'replaced']]);
  const dropped = await pair.en.translate('Press ⏎ to confirm.', { details: true });
  assert.deepEqual(dropped.spans.map(({ kind, how }) => [kind, how]), [['symbol', 'inserted']]);
  assert.equal(dropped.text.slice(...dropped.spans[0].target), '⏎');
  assert.match(dropped.text, /⏎\.$/, 'no word aligned after it: put before the closing full stop');
  const moved = await pair.en.translate('Press ← to go back.', { details: true });
  assert.deepEqual(moved.spans.map(({ kind, how }) => [kind, how]), [['symbol', 'inserted']]);
  assert.match(moved.text, /← volver\.$/, 'put before the first word aligned after it ("go back")');
  const kept = await pair.es.translate('Usa /etc/nginx/nginx.conf como plantilla.', { details: true });
  assert.deepEqual(kept.spans.map(({ kind, how }) => [kind, how]), [['path', 'kept']]);
  // Positions count in the whole text, over several sentences.
  const two = 'Hola. Mi vuelo IB3456 sale a las 10:30.';
  const both = await pair.es.translate(two, { details: true });
  assert.deepEqual(both.spans.map((s) => two.slice(...s.source)), ['IB3456', '10:30']);
  for (const s of both.spans) assert.equal(both.text.slice(...s.target), two.slice(...s.source));
});

test('what only looks like a span is translated: words, a date\'s words, an ordinal\'s suffix', async () => {
  const none = await pair.es.translate('Compra pan, leche, huevos, etc.', { details: true });
  assert.deepEqual(none.spans, []);
  const date = 'Llega el 3 de mayo.';
  const may = await pair.es.translate(date, { details: true });
  assert.deepEqual(may.spans.map((s) => [s.kind, date.slice(...s.source)]), [['number', '3']]);
  assert.ok(!may.text.includes('mayo'), `the month translated: ${may.text}`);
  const first = await pair.en.translate('The 1st floor is closed.', { details: true });
  assert.deepEqual(first.spans.map((s) => s.kind), ['number']);
});

test('HTML: spans in a run\'s text and the elements not to translate come back as they were', async () => {
  const html = '<p>Visita <b>https://example.org/es/ayuda?id=42</b> y ejecuta <code>ls -la</code> antes del 2026-12-06.</p>';
  const out = await pair.es.translate(html, { format: 'html' });
  for (const part of ['<b>https://example.org/es/ayuda?id=42</b>', '<code>ls -la</code>', '2026-12-06']) {
    assert.ok(out.includes(part), `${part} in ${out}`);
  }
  let streamed = '';
  for await (const chunk of pair.es.translateStreaming(html, { format: 'html' })) streamed += chunk;
  assert.equal(streamed, out);
});

// Sentences mixing the set's span values (tests/fixtures/verbatim/values.tsv)
// with words at random (a fixed seed): several spans a sentence, equal ones
// repeated, spans side by side. Each comes back, streamed as translated, and
// details place each where it is. (Such mixes found the repair's faults
// fixed in cfbf822.)
test('random mixes of spans and words: every span back, streamed as translated, details in place', async () => {
  const values = readFileSync(new URL('./fixtures/verbatim/values.tsv', import.meta.url), 'utf8').split('\n')
    .filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t')[3]);
  const words = { es: 'el la de que y en casa perro grande hoy precio cuenta archivo abre pulsa'.split(' '),
    en: 'the a of and in house dog big today price account file open press'.split(' ') };
  let seed = 99;
  const pick = (n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (const [translator, lang] of [[pair.es, 'es'], [pair.en, 'en']]) {
    for (let i = 0; i < 12; i++) {
      const parts = Array.from({ length: 4 + pick(10) }, () => (pick(3) ? words[lang][pick(words[lang].length)] : values[pick(values.length)]));
      const text = `${parts.join(' ')}${['.', '!', '?', ''][pick(4)]}`;
      const out = await translator.translate(text);
      let streamed = '';
      for await (const chunk of translator.translateStreaming(text)) streamed += chunk;
      assert.equal(streamed, out, `streamed as translated: ${JSON.stringify(text)}`);
      const details = await translator.translate(text, { details: true });
      for (const span of parts.filter((p) => values.includes(p))) {
        assert.ok(count(out, span) >= count(text, span), `${span} in ${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
      }
      for (const s of details.spans ?? []) assert.equal(out.slice(...s.target), text.slice(...s.source), `${JSON.stringify(text)} -> ${out}`);
    }
  }
});
