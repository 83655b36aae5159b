// The command-line tool (npx residual-mt) on fixture models, against the
// PyTorch reference's outputs (tests/fixtures/make_fixtures.py) and the API's own
// answers for the same text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTranslator } from '../js/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fixture = (name) => `${root}tests/fixtures/models/${name}`;
const reference = (name) => JSON.parse(readFileSync(`${fixture(name)}/reference.json`, 'utf8'));

function cli(args, input = '') {
  const run = spawnSync(process.execPath, [`${root}js/cli.js`, ...args], { input, encoding: 'utf8', timeout: 60_000 });
  // a run ended by a signal says which in its stderr, the failure message of the asserts below
  const stderr = run.signal ? `${run.stderr}(ended by ${run.signal}${run.error ? `: ${run.error.message}` : ''})` : run.stderr;
  return { code: run.status, stdout: run.stdout, stderr, lines: run.stdout.split('\n').slice(0, -1) };
}

test('--ids greedy output equals the reference, one line per input line', () => {
  const ref = reference('residual-2x2');
  const input = `${ref.sentences.map((s) => s.join(' ')).join('\n')}\n\n`;
  const run = cli(['--model', fixture('residual-2x2'), '--ids', '--beam', '1'], input);
  assert.equal(run.code, 0, run.stderr);
  const greedy = ref.searches.find((s) => s.beam === 1).hyps.map((h) => h[0].tokens.join(' '));
  assert.deepEqual(run.lines, [...greedy, '']);
});

test('--ids beam 5 with --nbest and --scores equals the reference n-best lists', () => {
  const ref = reference('pre-3x1');
  const search = ref.searches.find((s) => s.beam === 5);
  const input = ref.sentences.map((s) => s.join(' ')).join('\n');
  const run = cli(['--model', fixture('pre-3x1'), '--ids', '--beam', '5', '--nbest', '5', '--scores'], input);
  assert.equal(run.code, 0, run.stderr);
  const want = search.hyps.flat();
  assert.equal(run.lines.length, want.length);
  run.lines.forEach((line, i) => {
    const [score, ids] = line.split('\t');
    assert.equal(ids, want[i].tokens.join(' '));
    assert.ok(Math.abs(Number(score) - want[i].score) < 1e-4, `score ${score} vs ${want[i].score}`);
  });
});

test('--lenpen, --min-len, --max-len-a, --max-len-b other than the defaults equal the reference', () => {
  for (const name of ['residual-2x2', 'post-3x1']) {
    const ref = reference(name);
    const input = ref.sentences.map((s) => s.join(' ')).join('\n');
    const custom = ref.searches.filter((s) => s.max_len_a !== ref.max_len_a || s.min_len !== ref.min_len);
    assert.ok(custom.length >= 2, 'the fixtures have searches with other length settings');
    for (const search of custom) {
      const run = cli(['--model', fixture(name), '--ids', '--beam', String(search.beam), '--nbest', String(search.nbest),
        '--lenpen', String(search.lenpen), '--min-len', String(search.min_len), '--max-len-a', String(search.max_len_a),
        '--max-len-b', String(search.max_len_b), '--scores'], input);
      assert.equal(run.code, 0, run.stderr);
      const want = search.hyps.flat();
      assert.deepEqual(run.lines.map((line) => line.split('\t')[1]), want.map((h) => h.tokens.join(' ')), `${name} beam ${search.beam}`);
      run.lines.forEach((line, i) => assert.ok(Math.abs(Number(line.split('\t')[0]) - want[i].score) < 1e-4, `score ${line}`));
    }
  }
});

test('--batch N: any batch size gives the reference, in input order', () => {
  const ref = reference('pre-2x2');
  const input = `${ref.sentences.map((s) => s.join(' ')).join('\n')}\n`;
  const greedy = ref.searches.find((s) => s.beam === 1).hyps.map((h) => h[0].tokens.join(' '));
  for (const batch of ['1', '4', '100']) {
    const run = cli(['--model', fixture('pre-2x2'), '--ids', '--beam', '1', '--batch', batch], input);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, greedy, `--batch ${batch}`);
  }
});

test('--threads N: the same translations on 1, 2 and 3 threads, and the engine runs on that many (--verbose)', () => {
  const ref = reference('residual-2x2');
  const input = `${ref.sentences.map((s) => s.join(' ')).join('\n')}\n`;
  const greedy = ref.searches.find((s) => s.beam === 1).hyps.map((h) => h[0].tokens.join(' '));
  for (const threads of ['1', '2', '3']) {
    const run = cli(['--model', fixture('residual-2x2'), '--ids', '--beam', '1', '--threads', threads, '--verbose'], input);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, greedy, `--threads ${threads}`);
    // The engine's pool has that many threads, its workers inside their loop.
    const n = Number(threads), workers = n - 1;
    assert.match(run.stderr, new RegExp(`^residual-mt: model file://.*residual-2x2/; engine on ${n} threads? ` +
      `\\(this one and ${workers} workers? running\\)\n$`), `--threads ${threads}`);
  }
  // Without --verbose, nothing on stderr.
  assert.equal(cli(['--model', fixture('residual-2x2'), '--ids', '--beam', '1', '--threads', '2'], input).stderr, '');
});

test('--no-shortlist scores every word: the shipped model then translates as the reference does without its shortlist', () => {
  const sample = JSON.parse(readFileSync(`${root}tests/fixtures/shipped-sample.json`, 'utf8'));
  const cases = sample.cases.filter((c) => c.target_language === 'en').slice(0, 4);
  const input = `${cases.map((c) => c.text).join('\n')}\n`;
  const args = ['--model', `${root}${sample.model}`, '--to', 'en', '--beam', '1'];
  const withShortlist = cli(args, input), allWords = cli([...args, '--no-shortlist'], input);
  assert.equal(allWords.code, 0, allWords.stderr);
  assert.deepEqual(withShortlist.lines, cases.map((c) => c.greedy));
  assert.deepEqual(allWords.lines, cases.map((c) => c.greedy_all_words));
});

test('--help prints the usage and exits 0', () => {
  for (const flag of ['--help', '-h']) {
    const run = cli([flag]);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^usage:\n {2}residual-mt \[--model DIR\]/);
    for (const option of ['--beam N', '--nbest N', '--lenpen X', '--max-len-a X', '--max-len-b N', '--min-len N', '--batch N', '--threads N', '--verbose']) {
      assert.ok(run.stdout.includes(option), option);
    }
  }
});

test('text mode translates through the tokenizer, both directions', () => {
  const ref = reference('residual-text');
  for (const lang of ['en', 'es']) {
    const run = cli(['--model', fixture('residual-text'), '--to', lang, '--beam', '1'], `${ref.texts.join('\n')}\n`);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.lines, ref.translations[lang].text);
  }
  const args = cli(['--model', fixture('residual-text'), '--to', 'en', '--beam', '1', ref.texts[0], ref.texts[1]]);
  assert.deepEqual(args.lines, ref.translations.en.text.slice(0, 2));
  // Without --to, the model's first target language (config languages.target[0]: en).
  const byDefault = cli(['--model', fixture('residual-text'), '--beam', '1', ref.texts[0]]);
  assert.deepEqual(byDefault.lines, ref.translations.en.text.slice(0, 1));
});

test('tokenize and detokenize match spm_encode / spm_decode', () => {
  const ref = reference('residual-text');
  const tok = cli(['tokenize', '--model', fixture('residual-text')], `${ref.texts.join('\n')}\n`);
  assert.equal(tok.code, 0, tok.stderr);
  assert.deepEqual(tok.lines, ref.ids.map((ids) => ids.join(' ')));
  const detok = cli(['detokenize', '--model', fixture('residual-text')], tok.stdout);
  assert.deepEqual(detok.lines, ref.texts);
});

test('CLI errors are clear and exit non-zero', () => {
  const cases = [
    [['--model', fixture('residual-2x2'), '--ids', '--bogus'], /Unknown option '--bogus'[^]*usage:/],
    [['--model', fixture('residual-text'), '-v'], /Unknown option '-v'/],
    [['--model', fixture('residual-2x2'), '--ids', '--beam'], /'--beam <value>' argument missing/],
    [['--model', fixture('residual-2x2'), '--ids', '--beam', 'x'], /--beam expects a non-negative integer/],
    [['--model', `${root}tests/fixtures/models/nope`, '--ids'], /cannot read .*config\.json: no such file/],
    [['--model', fixture('residual-2x2'), '--ids'], /token id 500 .* outside the vocabulary/, '5 500\n'],
    [['--model', fixture('residual-2x2'), '--ids'], /line 1: "a" is not a token id/, '5 a\n'],
    [['--model', fixture('residual-2x2'), 'some text'], /cannot read .*spm\.model/],
    [['--model', fixture('residual-text'), '--to', 'fr', 'hi'], /cannot translate \? → fr \(it translates en → es, es → en\)/],
    [['--model', fixture('residual-text'), '--to', 'en_US', 'hi'], /--to "en_US" is not a valid BCP 47 language tag/],
    [['--model', fixture('residual-2x2'), '--ids', '--beam', '300'], /beam must be an integer in \[1, 256\], got 300/, '5 6\n'],
    [['--model', fixture('residual-2x2'), '--ids', '--batch', '0'], /--batch expects a positive integer/],
    [['--model', fixture('residual-2x2'), '--ids', '--threads', 'two'], /--threads expects a positive integer, got "two"/],
    [['--model', fixture('residual-2x2'), '--ids', '--threads', '0'], /threads must be from 1 to \d+, got 0/, '5 6\n'],
  ];
  for (const [args, pattern, input] of cases) {
    const run = cli(args, input ?? '');
    assert.equal(run.code, 1, `${args.join(' ')}: exit ${run.code}`);
    assert.match(run.stderr, pattern);
  }
});

test('--name=value, -- before text that looks like an option, --version', () => {
  const ref = reference('residual-text');
  const model = `--model=${fixture('residual-text')}`;
  const eq = cli([model, '--to=en', '--beam=1', '--', ref.texts[0]]);
  assert.equal(eq.code, 0, eq.stderr);
  assert.deepEqual(eq.lines, ref.translations.en.text.slice(0, 1));
  // After --, "-v" and "--help" are text, translated as the same lines from stdin are.
  const dashed = cli([model, '--to=en', '--beam=1', '--', '-v', '--help']);
  assert.equal(dashed.code, 0, dashed.stderr);
  assert.deepEqual(dashed.lines, cli([model, '--to=en', '--beam=1'], '-v\n--help\n').lines);
  assert.equal(dashed.lines.length, 2);
  const version = cli(['--version']);
  assert.equal(version.code, 0);
  assert.equal(version.stdout, `${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`);
});

test('--from and --to: the other language from the model\'s pairs, tags matched by language', () => {
  const ref = reference('residual-text');
  const model = ['--model', fixture('residual-text'), '--beam', '1'];
  // en -> es, named by either side (and by a regional tag).
  for (const args of [['--to', 'es'], ['--from', 'en'], ['--from', 'en-GB'], ['--from', 'EN', '--to', 'es-419']]) {
    const run = cli([...model, ...args, ref.texts[1]]);
    assert.equal(run.code, 0, `${args}: ${run.stderr}`);
    assert.deepEqual(run.lines, ref.translations.es.text.slice(1, 2), args.join(' '));
  }
  // Two tags of one language: the text as it is, as the API does.
  assert.deepEqual(cli([...model, '--from', 'en-US', '--to', 'en-GB', 'Hello, world.']).lines, ['Hello, world.']);
});

test('text is split into sentences as the API splits it; --nbest N gives N lines for every input line', async () => {
  const text = 'In the beginning God created the heavens. Hello, world!';
  const translator = await createTranslator({ model: fixture('residual-text'), sourceLanguage: 'en', targetLanguage: 'es' });
  const api = await translator.translate([text, 'Hello, world!'], { beam: 1 });
  translator.destroy();
  const run = cli(['--model', fixture('residual-text'), '--to', 'es', '--beam', '1'], `${text}\nHello, world!\n`);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.lines, api);
  const nbest = cli(['--model', fixture('residual-text'), '--to', 'es', '--beam', '3', '--nbest', '2', '--scores'], `Hello, world!\n\n42\n`);
  assert.equal(nbest.code, 0, nbest.stderr);
  assert.equal(nbest.lines.length, 6);
  assert.match(nbest.lines[0], /^-?\d+\.\d{6}\t/);
  assert.deepEqual(nbest.lines.slice(2), ['', '', '42', '42'], 'empty and untranslatable lines: N lines each, as they were');
  const ids = cli(['--model', fixture('residual-2x2'), '--ids', '--beam', '2', '--nbest', '2'], '5 6\n\n');
  assert.equal(ids.lines.length, 4);
  assert.deepEqual(ids.lines.slice(2), ['', '']);
});

// `script` (Debian's essential bsdutils) gives the command a terminal for stdin.
test('on a terminal with no input, the usage is printed instead of waiting', () => {
  const run = spawnSync('/usr/bin/script', ['-qec', `${process.execPath} ${root}js/cli.js --model ${fixture('residual-text')}`, '/dev/null'],
    { encoding: 'utf8', timeout: 60_000, input: '' });
  assert.equal(run.status, 1, run.stdout);
  assert.match(run.stdout, /no TEXT and no input on stdin[^]*usage:/);
});
