// The npm packages as they would be published: residual-mt (lean: no model,
// no demo server; every module its entry points import; types for each
// JavaScript export that compile in a Node-only strict project) and the model
// package residual-mt-es-en (the directory models/es-en/), installed from
// their tarballs into a project outside the repository, offline.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL } from '../js/defaults.js';
import { createTranslator } from '../js/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const MODEL_DIR = `${root}${DEFAULT_MODEL.repoPath}`;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-package-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
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
// 560 KB before the zstd decoder: js/zstd*.js and js/xxh64.js, about 13 KB
// packed, and its docs). Its model is a package of its own (models/langid/).
const PACKED_LIMIT = 576 * 1024;

test('npm pack of residual-mt: under 576 KB, no model, no demo server, every module its entry points reach', () => {
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

test('installed from the tarballs: the model package is the default model; without it, the pinned URL', async () => {
  npm(['pack', '--pack-destination', tmp], root);
  npm(['pack', '--pack-destination', tmp], MODEL_DIR);
  const app = join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true, "type": "module" }');
  npm(['install', '--offline', '--no-audit', '--no-fund', join(tmp, `residual-mt-${pkg.version}.tgz`),
    join(tmp, `${DEFAULT_MODEL.package}-${DEFAULT_MODEL.version}.tgz`)], app);
  // The README's three lines, as a user of the installed packages writes them.
  writeFileSync(join(app, 'main.js'), `import { createTranslator } from 'residual-mt';
const translator = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
const text = await translator.translate('Hola, mundo.', { beam: 1 });
console.log(JSON.stringify({ model: translator.model, text }));
translator.destroy();
`);
  const run = spawnSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.match(out.model, new RegExp(`/app/node_modules/${DEFAULT_MODEL.package}/$`));
  const here = await createTranslator({ sourceLanguage: 'es', targetLanguage: 'en' });
  assert.equal(out.text, await here.translate('Hola, mundo.', { beam: 1 }), 'the same model as the repository\'s copy');
  here.destroy();
  // The command line, installed.
  const cli = spawnSync(join(app, 'node_modules/.bin/residual-mt'), ['--version'], { encoding: 'utf8' });
  assert.equal(cli.stdout.trim(), pkg.version);
  // Without the model package the default is the pinned URL (resolved, not fetched here).
  npm(['uninstall', '--offline', '--no-audit', '--no-fund', DEFAULT_MODEL.package], app);
  const resolved = spawnSync(process.execPath, ['--input-type=module', '-e',
    "import { resolveDefaultModel } from 'residual-mt'; console.log((await resolveDefaultModel()).href);"], { cwd: app, encoding: 'utf8' });
  assert.equal(resolved.stdout.trim(), DEFAULT_MODEL.url, resolved.stderr);
});

test('the declarations compile in a Node-only project with --strict (no DOM lib), every subpath; wrong use is an error', () => {
  const project = join(tmp, 'ts');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  // The package as installed, and @types/node from this repository's devDependencies.
  spawnSync('ln', ['-s', root, join(project, 'node_modules/residual-mt')]);
  spawnSync('ln', ['-s', `${root}node_modules/@types`, join(project, 'node_modules/@types')]);
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }');
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'], types: ['node'] },
    files: ['main.ts'],
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
    writeFileSync(join(project, 'main.ts'), lines.join('\n'));
    return spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', project], { encoding: 'utf8', timeout: 120_000 });
  };
  const ok = tsc(good);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  // The types are real: a string is not a number, and both languages are required.
  const wrong = tsc([...good, "const n: number = await t.translate('Hola');", "await createTranslator({ sourceLanguage: 'es' });"]);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stdout, /main\.ts\(18,7\): error TS2322: Type 'string' is not assignable to type 'number'/);
  assert.match(wrong.stdout, /main\.ts\(19,\d+\): error TS2345: [^]*Property 'targetLanguage' is missing/);
});
