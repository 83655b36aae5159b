// What tests/bounds.test.js (and scripts/bounds-table.js, its before/after
// table) throws at the loaders: a local HTTP server of hostile responses,
// compression bombs, and each load run in a child process whose peak memory
// is measured (and which is killed past a memory or time limit, so that
// measuring code without bounds cannot take the machine down).
import { spawn } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';

import { createStaticServer } from '../../scripts/serve.js';

const CASE = fileURLToPath(new URL('./bounds-case.js', import.meta.url));
const ZEROS = Buffer.alloc(1 << 16);

// Bombs by codec: bombs[codec](path, bytes) writes a file that decompresses
// to `bytes` zero bytes, with the size its format declares (gzip's trailer)
// when `lying` is false, else a small one. Another codec is one more line.
export const bombs = {
  gzip: (path, bytes, lying = false) => writeCompressed(createGzip({ level: 1 }), path, bytes, lying &&
    ((file) => file.writeUInt32LE(100, file.length - 4))),
  zstd: (path, bytes, lying = false) => writeZstd(path, bytes, lying),
};

// A zstd bomb as Debian's zstd writes it, its frame header declaring its size
// (--stream-size), or, lying, declaring 100 bytes (the Frame_Content_Size
// field patched: RFC 8878, 3.1.1.1).
async function writeZstd(path, bytes, lying) {
  const child = spawn('zstd', ['-1', '-q', '-c', `--stream-size=${bytes}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const parts = [];
  child.stdout.on('data', (chunk) => parts.push(chunk));
  const closed = new Promise((resolve, reject) => child.on('error', reject).on('close', resolve));
  for (let left = bytes; left > 0; left -= ZEROS.length) {
    if (!child.stdin.write(left >= ZEROS.length ? ZEROS : ZEROS.subarray(0, left))) await new Promise((r) => child.stdin.once('drain', r));
  }
  child.stdin.end();
  if (await closed !== 0) throw new Error(`zstd failed writing ${path}`);
  const file = Buffer.concat(parts);
  if (lying) {
    const descriptor = file[4], single = (descriptor >> 5) & 1;
    const at = 5 + (single ? 0 : 1) + [0, 1, 2, 4][descriptor & 3];
    const size = [single, 2, 4, 8][descriptor >> 6];
    if (size !== 4 && size !== 8) throw new Error(`zstd wrote a ${size}-byte content size for ${bytes} bytes`);
    if (size === 4) file.writeUInt32LE(100, at);
    else file.writeBigUInt64LE(100n, at);
  }
  await new Promise((resolve, reject) => createWriteStream(path).on('error', reject).end(file, resolve));
  return file.length;
}

async function writeCompressed(compressor, path, bytes, patch) {
  const parts = [];
  compressor.on('data', (chunk) => parts.push(chunk));
  const done = new Promise((resolve, reject) => compressor.on('end', resolve).on('error', reject));
  for (let left = bytes; left > 0; left -= ZEROS.length) {
    if (!compressor.write(left >= ZEROS.length ? ZEROS : ZEROS.subarray(0, left))) await new Promise((r) => compressor.once('drain', r));
  }
  compressor.end();
  await done;
  const file = Buffer.concat(parts);
  if (patch) patch(file);
  await new Promise((resolve, reject) => createWriteStream(path).on('error', reject).end(file, resolve));
  return file.length;
}

// Responses by mode, for the file `bytes` (a Buffer) at this path:
//   file: the file; endless: zeros without end, no Content-Length; huge: the
//   same, with a Content-Length of 1 TiB; short/long: the file with a
//   Content-Length 1000 bytes smaller/larger than it (then the connection
//   closes); slow: a byte every 100 ms; gzipenc: `bytes` sent as
//   Content-Encoding: gzip (a bomb, which fetch inflates itself).
// stats[path]: { sent, closedAt } (closedAt: Date.now() when the client closed
// the connection, or the response ended).
const MODES = {
  file: (res, bytes) => res.writeHead(200, { 'Content-Length': bytes.length }).end(bytes),
  endless: (res, _, stat) => pump(res.writeHead(200), stat),
  huge: (res, _, stat) => pump(res.writeHead(200, { 'Content-Length': 2 ** 40 }), stat),
  gzipenc: (res, bytes) => res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': bytes.length }).end(bytes),
  short: (res, bytes) => lying(res, bytes, bytes.length - 1000),
  long: (res, bytes) => lying(res, bytes, bytes.length + 1000),
  slow: (res, _, stat) => {
    res.writeHead(200);
    const timer = setInterval(() => { res.write(ZEROS.subarray(0, 1)); stat.sent++; }, 100);
    res.on('close', () => clearInterval(timer));
  },
};
export const MODE_NAMES = Object.keys(MODES);

function pump(res, stat) {
  const more = () => {
    while (!res.destroyed) {
      const room = res.write(ZEROS);
      stat.sent += ZEROS.length;
      if (!room) return res.once('drain', more);
    }
  };
  more();
}

// A response whose Content-Length is not its body's, written on the socket
// itself (Node's http refuses to send one), then the connection closed.
function lying(res, bytes, length) {
  const socket = res.socket;
  res.detachSocket(socket);
  socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`);
  socket.end(bytes);
}

// A server on 127.0.0.1: /h/MODE/NAME answers `files[NAME]` (a path; none
// for endless, huge and slow) as MODE says; /dir/MODE/m|n/FILE is a model directory (`dir`) whose
// model.safetensors comes as MODE says, with (m) or without (n) its
// manifest.json; `pages` (path -> HTML) are pages; every other path is
// served from `root` (js/, node_modules/).
// Closed with close() (its connections too).
export async function hostileServer({ files = {}, dir, root, pages = {} }) {
  const stats = {};
  const statics = createStaticServer({ mounts: [{ prefix: '/', dir: root }], csp: null }).listeners('request')[0];
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    const [, kind, mode, ...rest] = path.split('/');
    const stat = { sent: 0, closedAt: null };
    res.on('close', () => { stat.closedAt = Date.now(); });
    stats[path] = stat;
    if (pages[path]) return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(pages[path]);
    if (kind === 'h' && MODES[mode]) return MODES[mode](res, files[rest.join('/')] ? readFileSync(files[rest.join('/')]) : Buffer.alloc(0), stat);
    if (kind === 'dir' && MODES[mode]) {
      const [manifest, name] = rest;
      if (name === 'manifest.json' && manifest !== 'm') return res.writeHead(404).end();
      const bytes = readFileSync(name === 'model.safetensors' && mode === 'gzipenc' ? files['weights-bomb'] : join(dir, name));
      return (name === 'model.safetensors' ? MODES[mode] : MODES.file)(res, bytes, stat);
    }
    return statics(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}/`,
    stats,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

// Reads a process's resident memory and its peak (VmRSS, VmHWM) in MB, or null once it is gone.
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

// Runs one load (bounds-case.js) of the repository at `root`: its printed
// result ({ ok, name, message, ms, peakMB, at }), or, when it passed
// killAboveMB of memory or timeoutMs, { killed: why, ms, peakMB }.
export function runCase(root, spec, { env = {}, timeoutMs = 30000, killAboveMB = 3072 } = {}) {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(process.execPath, [CASE, root, JSON.stringify(spec)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '', killed = null, peak = 0;
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const watch = setInterval(() => {
      const memory = processMemory(child.pid);
      if (memory) peak = Math.max(peak, memory.peak);
      if (memory && memory.rss > killAboveMB) killed = `over ${killAboveMB} MB of memory`;
      else if (Date.now() - start > timeoutMs) killed = `still pending after ${timeoutMs / 1000} s`;
      if (killed) child.kill('SIGKILL');
    }, 50);
    child.on('close', (code, signal) => {
      clearInterval(watch);
      const line = out.trim().split('\n').at(-1);
      if (killed) resolve({ killed, ms: Date.now() - start, peakMB: Math.round(peak) });
      else if (line?.startsWith('{')) resolve(JSON.parse(line));
      else {
        const why = `the process ended (${signal ?? `exit code ${code}`}) without an answer: ${err.trim().split('\n').slice(-2).join(' ')}`;
        resolve({ killed: why, ms: Date.now() - start, peakMB: Math.round(peak) });
      }
    });
  });
}

// The model files the cases load, written under `dir`: a model directory
// (tests/fixtures/models/residual-text, with its manifest.json), a Marian
// model (a random SSRU student, its vocabulary spm and shortlist) and bombs
// of `bombBytes` zeros by codec, their declared size true and lying.
// Returns the paths by name, as hostileServer's `files`.
export async function writeModels(dir, { root, bombBytes, marian }) {
  const model = join(dir, 'model');
  mkdirSync(model, { recursive: true });
  for (const f of ['config.json', 'spm.model', 'model.safetensors', 'manifest.json']) {
    copyFileSync(join(root, 'tests/fixtures/models/residual-text', f), join(model, f));
  }
  const files = { 'model.bin': join(dir, 'model.bin'), 'vocab.spm': join(model, 'spm.model'), 'lex.bin': join(dir, 'lex.bin') };
  writeFileSync(files['model.bin'], marian.model);
  writeFileSync(files['lex.bin'], marian.shortlist);
  for (const [codec, write] of Object.entries(bombs)) {
    for (const lie of [false, true]) {
      files[`bomb${lie ? '-lying' : ''}.${codec}`] = join(dir, `bomb${lie ? '-lying' : ''}.${codec}`);
      await write(files[`bomb${lie ? '-lying' : ''}.${codec}`], bombBytes, lie);
    }
  }
  files['weights-bomb'] = files['bomb-lying.gzip'];
  return { files, model };
}

// The cases: name -> the load's spec (bounds-case.js), each bounded by
// maxBytes, with `file`: what its error must name; `base` the
// hostileServer's URL, `files` writeModels' paths.
// A Marian file given as a path is read from disk (bounded as a download is).
export function boundsCases(base, files, maxBytes) {
  const marian = (roles) => ({ marian: { model: `${base}h/file/model.bin`, vocab: `${base}h/file/vocab.spm`, shortlist: `${base}h/file/lex.bin`, ...roles } });
  const cases = {
    'model directory, no manifest: endless model.safetensors': { model: `${base}dir/endless/n/` },
    'model directory, no manifest: model.safetensors a gzip bomb (Content-Encoding)': { model: `${base}dir/gzipenc/n/` },
    'model directory: model.safetensors with a Content-Length of 1 TiB': { model: `${base}dir/huge/m/` },
    'model directory: endless model.safetensors': { model: `${base}dir/endless/m/` },
    'model directory: Content-Length smaller than the body': { model: `${base}dir/short/m/` },
    'model directory: Content-Length larger than the body': { model: `${base}dir/long/m/` },
    'model directory: a slow model.safetensors, aborted by the signal after 0.5 s': { model: `${base}dir/slow/m/`, abortAfterMs: 500 },
    'Marian: endless model URL': { model: marian({ model: `${base}h/endless/model.bin` }) },
    'Marian: model URL with a Content-Length of 1 TiB': { model: marian({ model: `${base}h/huge/model.bin` }) },
  };
  for (const codec of Object.keys(bombs)) {
    for (const role of ['model', 'vocab', 'shortlist']) {
      cases[`Marian: ${role} a ${codec} bomb (URL)`] = { model: marian({ [role]: `${base}h/file/bomb.${codec}` }) };
      cases[`Marian: ${role} a ${codec} bomb declaring a small size (URL)`] = { model: marian({ [role]: `${base}h/file/bomb-lying.${codec}` }) };
    }
    cases[`Marian: model a ${codec} bomb declaring a small size (path)`] = { model: marian({ model: files[`bomb-lying.${codec}`] }) };
    cases[`Marian: model a ${codec} bomb declaring a small size (bytes)`] = { model: marian({}), files: { model: files[`bomb-lying.${codec}`] } };
  }
  for (const [name, spec] of Object.entries(cases)) {
    const role = /^Marian: (\w+)/.exec(name)?.[1];
    const file = name.startsWith('Marian') ? `the Marian ${{ model: 'model', vocab: 'vocabulary', shortlist: 'shortlist', endless: 'model' }[role] ?? 'model'} file` : 'model.safetensors';
    Object.assign(spec, { source: 'es', target: 'en', maxModelBytes: maxBytes, file });
  }
  return cases;
}

// The page Chromium loads each case in (served as hostileServer's `pages`),
// `imports` added to its import map: window.load(spec) answers as
// bounds-case.js prints (spec.detector: createLanguageDetector's load).
export const boundsPage = (imports = {}) => `<!doctype html><meta charset="utf-8">
<script type="importmap">${JSON.stringify({ imports: { 'js-yaml': '/node_modules/js-yaml/dist/js-yaml.mjs', ...imports } })}</script>
<script type="module">
  import { createLanguageDetector, createTranslator } from '/js/index.js';
  window.load = async (spec) => {
    const controller = new AbortController();
    if (spec.abortAfterMs) setTimeout(() => controller.abort(new Error('aborted by the test')), spec.abortAfterMs);
    const start = performance.now();
    try {
      const loaded = spec.detector ? createLanguageDetector({ signal: controller.signal })
        : createTranslator({ sourceLanguage: spec.source, targetLanguage: spec.target, model: spec.model,
          maxModelBytes: spec.maxModelBytes, signal: controller.signal, cache: false });
      (await loaded).destroy();
      return { ok: true, ms: performance.now() - start };
    } catch (err) {
      return { ok: false, name: err.name, message: err.message, ms: performance.now() - start, at: Date.now() };
    }
  };
  window.ready = true;
</script>`;

// load(spec) in a fresh page of `browser` (playwright-core) at
// `base`bounds.html (or spec.page): its answer with peakMB, the renderer's peak memory
// (VmHWM, reset before the load: clear_refs 5), or { killed } when the
// renderer passed killAboveMB (it is killed) or the load timeoutMs; the page
// is closed lingerMs after it answers.
export function chromiumLoader(browser, base, { timeoutMs = 30000, killAboveMB = 3072, lingerMs = 0 } = {}) {
  const cdp = browser.newBrowserCDPSession();
  return async (spec) => {
    const tab = await browser.newPage();
    const start = Date.now();
    let watch = null;
    try {
      await tab.goto(`${base}${spec.page ?? 'bounds.html'}`);
      await tab.waitForFunction(() => window.ready);
      const renderers = (await (await cdp).send('SystemInfo.getProcessInfo')).processInfo.filter((p) => p.type === 'renderer').map((p) => p.id);
      for (const pid of renderers) writeFileSync(`/proc/${pid}/clear_refs`, '5');
      let killed = null, peak = 0;
      const stopped = new Promise((resolve) => {
        watch = setInterval(() => {
          for (const pid of renderers) {
            const memory = processMemory(pid);
            if (memory) peak = Math.max(peak, memory.peak);
            if (memory && memory.rss > killAboveMB) killed = `over ${killAboveMB} MB of memory`;
          }
          if (!killed && Date.now() - start > timeoutMs) killed = `still pending after ${timeoutMs / 1000} s`;
          if (killed) {
            for (const pid of renderers) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
            resolve({ killed });
          }
        }, 50);
      });
      const r = await Promise.race([tab.evaluate((s) => window.load(s), spec).catch((err) => ({ killed: `the page died: ${err.message.split('\n')[0]}` })), stopped]);
      if (r.killed) r.ms = Date.now() - start;
      r.peakMB = Math.round(Math.max(peak, ...renderers.map((pid) => processMemory(pid)?.peak ?? 0)));
      r.ms = Math.round(r.ms);
      await new Promise((done) => setTimeout(done, lingerMs)); // the page kept open: what closes a connection is the load
      return r;
    } finally {
      clearInterval(watch);
      await tab.close().catch(() => {});
    }
  };
}
