// One load of tests/bounds.test.js's cases, in a process of its own so that
// its peak memory is its own: node bounds-case.js ROOT SPEC, ROOT the
// repository whose js/index.js loads (this one, or another checkout's to
// measure it as it was), SPEC a JSON { model, source, target, maxModelBytes,
// abortAfterMs, lingerMs, files: { role: path of bytes given in memory } }.
// Prints one JSON line: { ok, name, message, ms, peakMB, at } (peakMB:
// process.resourceUsage's maxRSS, the process's high-water mark of resident
// memory; at: Date.now() then).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [root, specText] = process.argv.slice(2);
const spec = JSON.parse(specText);
const { createTranslator } = await import(pathToFileURL(`${root}/js/index.js`).href);

let model = spec.model;
if (spec.files) {
  model = { marian: { ...model.marian } };
  for (const [role, path] of Object.entries(spec.files)) model.marian[role] = new Uint8Array(readFileSync(path));
}
const controller = new AbortController();
if (spec.abortAfterMs) setTimeout(() => controller.abort(new Error('aborted by the test')), spec.abortAfterMs).unref();
const start = performance.now();
let result;
try {
  const translator = await createTranslator({ sourceLanguage: spec.source, targetLanguage: spec.target, model,
    maxModelBytes: spec.maxModelBytes, signal: controller.signal });
  translator.destroy();
  result = { ok: true };
} catch (err) {
  result = { ok: false, name: err.name, message: err.message };
}
result.ms = Math.round(performance.now() - start);
result.peakMB = Math.round(process.resourceUsage().maxRSS / 1024);
result.at = Date.now();
console.log(JSON.stringify(result));
// Alive a while after its answer (lingerMs), so the server can tell whether
// the load closed its connection or only the process's end did.
setTimeout(() => process.exit(0), spec.lingerMs ?? 0);
