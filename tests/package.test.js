// The npm packages as a user installs them: residual-mt (lean: no model, no
// demo server; every module its entry points import; types for each
// JavaScript export) and the model packages residual-mt-es-en and
// residual-mt-langid (the directories models/es-en/ and models/langid/),
// packed and installed into a new project outside the repository, offline, by
// the README's own commands; there the README's example, its command lines
// through npx, the polyfill and the declarations (tsc) run as printed, their
// outputs checked against the README's and the checkout's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_MODEL, DETECTOR_MODEL } from '../js/defaults.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const MODEL_DIR = `${root}${DEFAULT_MODEL.repoPath}`;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-package-'));
const CLONE = 'residual-mt'; // the clone's directory in the README's commands: a link to this checkout
after(() => {
  rmSync(join(tmp, CLONE), { force: true }); // the link to the checkout first, on its own
  rmSync(tmp, { recursive: true, force: true });
});
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

function npm(args, cwd) {
  const run = spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
  assert.equal(run.status, 0, `npm ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

const packed = (dir) => JSON.parse(npm(['pack', '--dry-run', '--json'], dir))[0];

// The relative modules a module imports (statically or dynamically), transitively.
function importGraph(entries) {
  const seen = new Set();
  const visit = (path) => {
    if (seen.has(path)) return;
    seen.add(path);
    const source = readFileSync(`${root}${path}`, 'utf8');
    for (const m of source.matchAll(/(?:from\s+|import\s*\(?\s*)'(\.{1,2}\/[^']+\.js)'|new URL\('(\.{1,2}\/[^']+\.js)', import\.meta\.url\)/g)) {
      visit(new URL(m[1] ?? m[2], `file:///${path}`).pathname.slice(1));
    }
  };
  entries.forEach(visit);
  return seen;
}

// The limit: the JS and four engine builds (plain, relaxed SIMD, each with and
// without threads: about 80 KB each gzipped), no model. It was 300 KB with two
// builds, 360 KB with three (440 KB with four, 480 KB before the Marian
// converter's JavaScript: js/marian*.js, about 11 KB packed; 500 KB before
// the unknown characters' carry, src/carry.c in each of the four builds,
// and the catalogue: 517 KB measured; then the LanguageDetector: the
// identifier's C, about 5 KB gzipped in each build, and its JavaScript;
// 560 KB before the zstd decoder: js/zstd*.js and js/load/zstd/xxh64.js, about 13 KB
// packed, and its docs; 576 KB before the live page translation, js/text/live.js
// and js/widget.js, and Firefox's model registry, js/load/registry.js and
// js/marian/models-cli.js, about 8 KB packed, with their docs: 593 KB measured with
// them; 600 KB before the verbatim spans: src/verbatim*.c and its symbol
// table, about 22 KB more in each of the four builds, with its docs: 637 KB
// measured with them; 656 KB before the GEMM's blocks and tiles of issue 41,
// about 16 KB more in each of the four builds: 658 KB measured with them;
// 664 KB before the int8 tiles' row pointers and the shortlist's gather a k
// group at a time, about 0.9 KB more gzipped in each build, kept for their
// 1.5-5 %: 665.1 KB measured with them). Its model is a package of its own
// (models/langid/).
const PACKED_LIMIT = 668 * 1024;

test(`npm pack of residual-mt: under ${PACKED_LIMIT / 1024} KB, no model, no demo server, every module its entry points reach`, () => {
  const info = packed(root);
  const files = new Set(info.files.map((f) => f.path));
  console.log(`npm pack residual-mt: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.size} files`);
  assert.ok(info.size <= PACKED_LIMIT, `${info.size} bytes packed, over ${PACKED_LIMIT}`);
  for (const path of files) assert.doesNotMatch(path, /^(models|tests|web|fuzz|src|scripts)\/|(serve|shell|bundle)\.js$/, path);
  for (const path of ['LICENSE', 'README.md', 'package.json', 'dist/residual-mt.wasm', 'dist/residual-mt-relaxed.wasm',
    'dist/residual-mt-threads.wasm', 'dist/residual-mt-relaxed-threads.wasm']) assert.ok(files.has(path), path);
  const targets = Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
  for (const target of [...targets, pkg.bin['residual-mt'], pkg.types]) assert.ok(files.has(target.replace(/^\.\//, '')), target);
  const entries = Object.values(pkg.exports).map((t) => t.default ?? t).filter((t) => t.endsWith('.js')).map((t) => t.slice(2));
  for (const path of importGraph([...entries, pkg.bin['residual-mt']])) assert.ok(files.has(path), `${path} is imported but not packed`);
  // Every JavaScript export has its types, packed.
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // the engine's .wasm file and package.json
    assert.ok(target.types && files.has(target.types.slice(2)), `${subpath} has no packed types`);
  }
  assert.equal(pkg.license, 'MIT');
  assert.match(readFileSync(`${root}LICENSE`, 'utf8'), /^MIT License/);
  assert.ok(pkg.repository?.url && pkg.homepage, 'repository and homepage');
  // No runtime dependency: parse5 (HTML in Node) and js-yaml (a Marian model's model.yml) are
  // optional peers, imported only where used, so that installing the package fetches nothing else.
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), [], 'runtime dependencies');
  assert.deepEqual(Object.keys(pkg.peerDependenciesMeta).filter((name) => pkg.peerDependenciesMeta[name].optional).sort(),
    ['js-yaml', 'parse5']);
});

test('the model package is the directory models/es-en: its files, as its manifest lists them', () => {
  const model = JSON.parse(readFileSync(`${MODEL_DIR}package.json`, 'utf8'));
  assert.equal(model.name, DEFAULT_MODEL.package);
  assert.equal(model.version, DEFAULT_MODEL.version);
  const info = packed(MODEL_DIR);
  assert.deepEqual(info.files.map((f) => f.path).sort(),
    ['README.md', 'config.json', 'manifest.json', 'model.safetensors', 'package.json', 'spm.model']);
  const manifest = JSON.parse(readFileSync(`${MODEL_DIR}manifest.json`, 'utf8'));
  for (const [name, entry] of Object.entries(manifest.files)) {
    const bytes = readFileSync(`${MODEL_DIR}${name}`);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), entry.sha256, `${name} matches manifest.json`);
    assert.equal(bytes.length, entry.size, name);
  }
});

// README.md's "Install and use" section (between <!-- install:begin and
// <!-- install:end -->): its fenced blocks, in order, as { lang, body }.
function installSection(file = `${root}README.md`) {
  const text = readFileSync(file, 'utf8');
  const section = text.match(/<!-- install:begin[^]*?-->([^]*?)<!-- install:end -->/)?.[1];
  assert.ok(section, `${file} has its install section between <!-- install:begin and <!-- install:end -->`);
  return [...section.matchAll(/^```(\w+)\n([^]*?)^```$/gm)].map(([, lang, body]) => ({ lang, body }));
}

// The one block of `lang` whose text matches `pattern`.
function block(blocks, lang, pattern) {
  const found = blocks.filter((b) => b.lang === lang && pattern.test(b.body));
  assert.equal(found.length, 1, `one ${lang} block matching ${pattern} in the README's install section`);
  return found[0].body;
}

const readme = installSection();
// npm as a user runs it, kept offline (the packages need nothing from the registry).
const offline = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
const bash = (script, cwd, env = offline) => spawnSync('bash', ['-e', '-c', script], { cwd, encoding: 'utf8', env, timeout: 300_000 });
let app = null; // the project the README's commands made, once they ran

function installedApp() {
  assert.ok(app, 'the project made by the README\'s install commands (an earlier test in this file)');
  return app;
}

// A script run in the installed project and the same script on the checkout's
// modules (the package's specifiers mapped to js/): both outputs.
function runBoth(name, source) {
  const here = source.replace(/'residual-mt(\/polyfill)?'/g, (_, sub) => `'${pathToFileURL(`${root}js/${sub ? 'polyfill' : 'index'}.js`)}'`);
  assert.notEqual(here, source, 'the script imports residual-mt');
  writeFileSync(join(installedApp(), name), source);
  writeFileSync(join(tmp, name), here);
  return [installedApp(), tmp].map((cwd) => {
    const run = spawnSync(process.execPath, [name], { cwd, encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, `${cwd}/${name}: ${run.stderr}`);
    return run.stdout;
  });
}

test('the README\'s install commands, run as printed: the three tarballs packed from the clone install offline into a new project', () => {
  const commands = block(readme, 'sh', /npm pack/);
  symlinkSync(root, join(tmp, CLONE)); // the clone, by the name the commands give it
  const run = bash(commands, tmp);
  assert.equal(run.status, 0, `${commands}\n${run.stdout}${run.stderr}`);
  const project = commands.match(/^mkdir (\S+) && cd \1\b/m)?.[1];
  assert.ok(project, 'the commands make a project directory and enter it');
  app = join(tmp, project);
  const installed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies;
  const names = [pkg.name, DEFAULT_MODEL.package, DETECTOR_MODEL.package];
  assert.deepEqual(Object.keys(installed).sort(), [...names].sort());
  // Copies unpacked from the tarballs, not links to the checkout.
  for (const name of names) {
    assert.ok(lstatSync(join(app, 'node_modules', name)).isDirectory(), `${name} is installed as a directory`);
    assert.match(installed[name], /^file:.*\.tgz$/, `${name} from its tarball`);
  }
  // Once published, the same three packages by name.
  const published = block(readme, 'sh', /^npm install residual-mt /m).trim();
  assert.equal(published, `npm install ${names.join(' ')}`);
});

test('the README\'s example, as printed, in the installed project: the output the README shows, the checkout\'s, from the installed model', () => {
  const example = block(readme, 'js', /from 'residual-mt'/);
  const shown = block(readme, 'text', /./);
  const [there, here] = runBoth('main.mjs', example);
  assert.equal(there, shown, 'the output printed under the example');
  assert.equal(there, here, 'the checkout gives the same');
  // docs/API.md's three lines are the README's.
  assert.ok(readFileSync(`${root}docs/API.md`, 'utf8').includes(`\`\`\`js\n${example}\`\`\``), 'docs/API.md shows the same example');
  // The model it used is the installed package.
  const [model] = runBoth('model.mjs', "import { createTranslator } from 'residual-mt';\n" +
    "console.log((await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' })).model);\n");
  assert.equal(model.trim(), pathToFileURL(join(app, 'node_modules', DEFAULT_MODEL.package, '/')).href);
});

test('the README\'s command lines through npx in the installed project: the outputs shown, the checkout CLI\'s', () => {
  const lines = block(readme, 'sh', /^npx residual-mt /m).trim().split('\n');
  assert.ok(lines.length >= 2);
  for (const line of lines) {
    const [, command, shown] = line.match(/^(npx residual-mt .*?)\s+# (.*)$/) ?? [];
    assert.ok(command, `a command and its output after #: ${line}`);
    const there = bash(command, installedApp());
    assert.equal(there.status, 0, there.stderr);
    assert.equal(there.stdout, `${shown}\n`, command);
    const here = bash(command.replace(/^npx residual-mt/, `"${process.execPath}" "${root}js/cli.js"`), root, process.env);
    assert.equal(here.stdout, there.stdout, `${command}: the checkout's CLI`);
  }
  const version = bash('npx residual-mt --version', installedApp());
  assert.equal(version.stdout.trim(), pkg.version);
});

test('the polyfill, imported from the installed package: Translator and LanguageDetector as the checkout\'s', () => {
  const script = `import 'residual-mt/polyfill';
const translator = await Translator.create({ sourceLanguage: 'en', targetLanguage: 'es' });
const detector = await LanguageDetector.create();
const [best] = await detector.detect('El archivo no existe.');
console.log(JSON.stringify({ text: await translator.translate('Cannot open the file.'), language: best.detectedLanguage }));
`;
  const [there, here] = runBoth('polyfill.mjs', script);
  assert.deepEqual(JSON.parse(there), JSON.parse(here));
  assert.equal(JSON.parse(there).language, 'es');
});

// The README's page in Debian's Chromium (as tests/browser.test.js: skipped
// only where it is missing and CI is not set), served from the installed
// project by the server the README names.
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const noChromium = !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not found (apt-get install chromium); CI is not set` : false;

// `python3 -m http.server` in `dir` on a free port, for the length of fn(baseUrl).
async function withHttpServer(dir, fn) {
  const server = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const port = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (chunk) => {
        out += chunk;
        const m = out.match(/port (\d+)/);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error(`python3 -m http.server exited (${code})`)));
    });
    return await fn(`http://localhost:${port}/`);
  } finally {
    server.kill();
  }
}

test('the README\'s page, in the installed project served by python3 -m http.server, in Chromium: the output the README shows', { skip: noChromium, timeout: 120_000 }, async () => {
  const page = block(readme, 'html', /importmap/);
  const shown = block(readme, 'text', /./).trim();
  writeFileSync(join(installedApp(), 'index.html'), `<!doctype html>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n${page}`);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    await withHttpServer(installedApp(), async (base) => {
      const tab = await browser.newPage();
      const errors = [];
      tab.on('pageerror', (err) => errors.push(err.message));
      tab.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
      await tab.goto(base);
      await tab.waitForFunction((text) => document.body.textContent.includes(text), shown, { timeout: 60_000 })
        .catch((err) => { throw new Error(`${errors.join('; ')}\n${err.message}`); });
      assert.equal((await tab.textContent('body')).trim(), shown);
      assert.deepEqual(errors, []);
    });
  } finally {
    await browser.close();
  }
  // The same import map as the page tests/browser.test.js runs (a CDN origin, no workers, threads).
  const fixture = readFileSync(`${root}tests/fixtures/page/index.html`, 'utf8');
  const importMap = (html) => JSON.parse(html.match(/<script type="importmap">([^]*?)<\/script>/)[1]);
  assert.deepEqual(importMap(page), importMap(fixture));
});

test('the declarations of the installed package compile in a Node-only project with --strict (no DOM lib), every subpath; wrong use is an error', () => {
  const project = installedApp();
  // @types/node from this repository's devDependencies; the package under test is the installed one.
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'],
      types: ['node'], typeRoots: [`${root}node_modules/@types`] },
    files: ['main.mts'], // an ES module in npm init's "commonjs" project, as the README's main.mjs
  }));
  const good = [
    "import { createTranslator, availability, Translator, type TranslationDetails, translateElement, restoreElement } from 'residual-mt';",
    "import 'residual-mt/polyfill';",
    "import 'residual-mt/worker';",
    "import { Engine, planBatches } from 'residual-mt/engine';",
    "import { loadFiles, resolveDefaultModel } from 'residual-mt/loader';",
    "const t: Translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en',",
    "  monitor(m) { m.addEventListener('downloadprogress', (e) => console.log(e.loaded, e.bytesTotal), { once: true }); } });",
    "const text: string = await t.translate('Hola');",
    "const details: TranslationDetails = await t.translate('Hola', { details: true });",
    "const either: string | TranslationDetails = await t.translate('Hola', { details: Math.random() > 0.5 });",
    "for await (const chunk of t.translateStreaming('Hola')) console.log(chunk.length);",
    "const html: string = await t.translate('<p>Hola</p>', { format: 'html' });",
    "const links = (await t.translate('Hola', { details: true })).alignment?.map((l) => l.source[0] + l.target[1]);",
    "console.log(html, links, typeof translateElement, typeof restoreElement);",
    "const state: 'available' | 'downloadable' | 'downloading' | 'unavailable' = await availability({ sourceLanguage: 'es', targetLanguage: 'en' });",
    "const engine = await Engine.load();",
    "console.log(text, details.ms, either, state, engine.defaults.beam, planBatches([1], { beam: 1 }), typeof loadFiles, (await resolveDefaultModel()).href);",
  ];
  const tsc = (lines) => {
    writeFileSync(join(project, 'main.mts'), lines.join('\n'));
    return spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', project], { encoding: 'utf8', timeout: 120_000 });
  };
  const ok = tsc(good);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  // The types are real: a string is not a number, and both languages are required.
  const wrong = tsc([...good, "const n: number = await t.translate('Hola');", "await createTranslator({ sourceLanguage: 'es' });"]);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stdout, /main\.mts\(18,7\): error TS2322: Type 'string' is not assignable to type 'number'/);
  assert.match(wrong.stdout, /main\.mts\(19,\d+\): error TS2345: [^]*Property 'targetLanguage' is missing/);
});

test('without the model package, the default model is its pinned URL (resolved, not fetched here)', () => {
  const uninstall = bash(`npm uninstall ${DEFAULT_MODEL.package}`, installedApp());
  assert.equal(uninstall.status, 0, uninstall.stderr);
  const resolved = spawnSync(process.execPath, ['--input-type=module', '-e',
    "import { resolveDefaultModel } from 'residual-mt'; console.log((await resolveDefaultModel()).href);"], { cwd: installedApp(), encoding: 'utf8' });
  assert.equal(resolved.stdout.trim(), DEFAULT_MODEL.url, resolved.stderr);
});
