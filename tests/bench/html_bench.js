// HTML translation with a real model (default: the shipped es -> en model):
//
// 1. Tag placement and alignment on a hand-checked set: Spanish snippets
//    whose inline elements each hold words with known English translations
//    (GOLD, written by hand). An element is placed right when it holds one of
//    its accepted words, tightly when it also holds nothing but those and
//    function words; judged only where the plain translation has an accepted
//    word at all. Alignment: the share of the elements' source words with a
//    target token aligned to them that lies in an accepted word.
// 2. Speed: the demo's sample article (web/index.html) as HTML (format
//    'html') and as plain text (the same runs' text), words/s side by side.
//
//   node tests/bench/html_bench.js [--model DIR] [--beam N] [--verbose]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as parse5 from 'parse5';
import { createTranslator } from '../../js/index.js';
import { collectRuns } from '../../js/text/html.js';
import { countWords } from '../../js/text/groups.js';
import { parseHtml } from '../../js/text/html-tree.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const model = arg('--model', `${root}models/es-en/`);
const beam = Number(arg('--beam', 5));
const verbose = process.argv.includes('--verbose');

// [html, [accepted English words of each inline element, in document order]]
const GOLD = [
  ['<p>En el principio creó Dios los <b>cielos</b> y la tierra.</p>', [['heaven', 'heavens', 'sky', 'skies']]],
  ['<p>En el principio creó <b>Dios</b> los cielos y la <em>tierra</em>.</p>', [['god'], ['earth', 'land']]],
  ['<p>Y dijo Dios: Sea la <strong>luz</strong>; y fue la luz.</p>', [['light']]],
  ['<p>Y vio Dios que la luz era <em>buena</em>.</p>', [['good']]],
  ['<p>Y llamó Dios a la luz <b>Día</b>, y a las tinieblas llamó <i>Noche</i>.</p>', [['day'], ['night']]],
  ['<p>El <a href="/rey">rey</a> habló al pueblo.</p>', [['king']]],
  ['<p>El rey habló al <a href="/pueblo">pueblo</a>.</p>', [['people', 'nation']]],
  ['<p>Jesús fue a la <b>casa</b> de su madre.</p>', [['house', 'home']]],
  ['<p>Jesús fue a la casa de su <b>madre</b>.</p>', [['mother']]],
  ['<p>El <em>agua</em> del río era fría.</p>', [['water', 'waters']]],
  ['<p>El agua del <em>río</em> era fría.</p>', [['river']]],
  ['<p>Los <strong>discípulos</strong> siguieron a Jesús.</p>', [['disciples']]],
  ['<p>Ama a tu <b>prójimo</b> como a ti mismo.</p>', [['neighbor', 'neighbour']]],
  ['<p>Su <i>hijo</i> volvió a la ciudad.</p>', [['son', 'child']]],
  ['<p>Su hijo volvió a la <i>ciudad</i>.</p>', [['city', 'town']]],
  ['<p>El <b>pan</b> y el <i>vino</i> estaban sobre la mesa.</p>', [['bread'], ['wine']]],
  ['<p>El pan y el vino estaban sobre la <a href="/mesa">mesa</a>.</p>', [['table']]],
  ['<p>Y los hijos de Israel salieron de <b>Egipto</b>.</p>', [['egypt']]],
  ['<p>La <em>mujer</em> dio a luz un hijo.</p>', [['woman', 'wife']]],
  ['<p>El <b>pastor</b> cuida de sus ovejas.</p>', [['shepherd', 'pastor']]],
  ['<p>El pastor cuida de sus <b>ovejas</b>.</p>', [['sheep', 'flock']]],
  ['<p>Bienaventurados los <strong>pobres</strong> de espíritu.</p>', [['poor']]],
  ['<p>Había un <i>hombre</i> en la tierra de Uz.</p>', [['man']]],
  ['<p>Había un hombre en la tierra de <i>Uz</i>.</p>', [['uz']]],
  ['<p>El <a href="/senor">Señor</a> es mi pastor; nada me faltará.</p>', [['lord']]],
  ['<p>Los <b>hermanos</b> comieron juntos en el <i>templo</i>.</p>', [['brothers', 'brethren', 'brother'], ['temple']]],
  ['<p>Y el <em>mar</em> se abrió delante de ellos.</p>', [['sea']]],
  ['<p>Y subió Moisés al <b>monte</b>.</p>', [['mountain', 'mount', 'hill']]],
  ['<p>Él escribió una <b>carta</b> a la iglesia.</p>', [['letter', 'epistle']]],
  ['<p>Él escribió una carta a la <b>iglesia</b>.</p>', [['church', 'congregation', 'assembly']]],
  ['<p>El <strong>fuego</strong> descendió del cielo.</p>', [['fire']]],
  ['<p>Los <a href="/ninos">niños</a> jugaban en la calle.</p>', [['children', 'child', 'boys', 'kids']]],
  ['<p>Y la <b>palabra</b> era Dios.</p>', [['word']]],
  ['<p>Él abrió el <i>libro</i> y leyó.</p>', [['book', 'scroll']]],
  ['<p>El <b>camino</b> es <em>estrecho</em>.</p>', [['way', 'road', 'path'], ['narrow', 'strait']]],
];

const FUNCTION_WORDS = new Set(['the', 'a', 'an', 'of', 'to', 'in', 'and', 'his', 'her', 'their', 'my', 'your', 'our', 'its', 'this', 'that']);
const words = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function inlineElements(node, out = []) {
  for (const child of node.childNodes ?? []) {
    if (child.tagName && ['a', 'b', 'i', 'em', 'strong'].includes(child.tagName)) out.push(child);
    inlineElements(child, out);
  }
  return out;
}
const textOf = (node) => (node.nodeName === '#text' ? node.value : (node.childNodes ?? []).map(textOf).join(''));

async function placement(translator) {
  const totals = { judged: 0, placed: 0, tight: 0, elements: 0, aligned: 0, alignedRight: 0 };
  for (const [html, gold] of GOLD) {
    const out = await translator.translate(html, { format: 'html', beam });
    const doc = await parseHtml(html);
    const [run] = collectRuns(doc.root, doc.tree);
    const plain = await translator.translate(run.text, { details: true, beam });
    const placedElements = inlineElements(parse5.parseFragment(out));
    const lines = [];
    gold.forEach((accept, i) => {
      totals.elements++;
      const accepted = new Set(accept);
      const targetWords = words(plain.text);
      const judgeable = targetWords.some((w) => accepted.has(w));
      const inside = words(textOf(placedElements[i]));
      const placed = inside.some((w) => accepted.has(w));
      const tight = placed && inside.every((w) => accepted.has(w) || FUNCTION_WORDS.has(w));
      // Alignment of the element's source words, from the plain translation's details.
      const item = run.items[i];
      const links = plain.alignment.filter((l) => l.source[0] < item.end && l.source[1] > item.start);
      const alignedRight = links.some((l) => {
        let [s, e] = l.target;
        while (s > 0 && /[\p{L}\p{N}]/u.test(plain.text[s - 1])) s--;
        while (e < plain.text.length && /[\p{L}\p{N}]/u.test(plain.text[e])) e++;
        return words(plain.text.slice(s, e)).some((w) => accepted.has(w));
      });
      if (judgeable) {
        totals.judged++;
        totals.placed += placed;
        totals.tight += tight;
        totals.aligned++;
        totals.alignedRight += alignedRight;
      }
      lines.push(`  <${placedElements[i]?.tagName}> ${judgeable ? (placed ? (tight ? 'right, tight' : 'right') : 'WRONG') : 'not judged (no accepted word)'}` +
        `; alignment ${judgeable ? (alignedRight ? 'right' : 'WRONG') : '-'}: ${JSON.stringify(textOf(placedElements[i] ?? { childNodes: [] }))}`);
    });
    if (verbose || lines.some((l) => /WRONG/.test(l))) console.log(`${html}\n  -> ${out}\n${lines.join('\n')}`);
  }
  const pct = (a, b) => `${a}/${b} (${(100 * a / Math.max(1, b)).toFixed(0)}%)`;
  console.log(`\ntag placement on the hand-checked set: ${pct(totals.placed, totals.judged)} right, ${pct(totals.tight, totals.judged)} tight ` +
    `(${totals.elements} elements, ${totals.judged} judgeable)`);
  console.log(`alignment of the tagged words: ${pct(totals.alignedRight, totals.aligned)} with a target token in an accepted word`);
}

async function speed(translator) {
  const index = readFileSync(`${root}web/index.html`, 'utf8');
  const template = index.match(/<template id="sample-es">([^]*?)<\/template>/)[1];
  const doc = await parseHtml(template);
  const runs = collectRuns(doc.root, doc.tree);
  const plain = runs.map((run) => run.text).join('\n\n');
  const n = runs.reduce((sum, run) => sum + countWords(run.text), 0);
  await translator.translate('Hola, mundo.', { beam });  // warm-up
  const time = async (input, options) => {
    const started = performance.now();
    await translator.translate(input, { beam, ...options });
    return (performance.now() - started) / 1000;
  };
  const rows = [];
  for (let i = 0; i < 3; i++) rows.push([await time(template, { format: 'html' }), await time(plain, {})]);
  console.log(`\nspeed on the demo's sample article (${runs.length} runs, ${n} words, beam ${beam}), 3 alternating runs:`);
  for (const [html, text] of rows) {
    console.log(`  html ${(n / html).toFixed(1)} words/s   plain text ${(n / text).toFixed(1)} words/s   ratio ${(text / html).toFixed(2)}`);
  }
  const ratios = rows.map(([html, text]) => text / html).sort((a, b) => a - b);
  console.log(`  median ratio (html speed / plain-text speed): ${ratios[1].toFixed(2)}`);
}

const translator = await createTranslator({ model, sourceLanguage: 'es', targetLanguage: 'en' });
console.log(`model ${model}, beam ${beam}`);
await placement(translator);
await speed(translator);
translator.destroy();
