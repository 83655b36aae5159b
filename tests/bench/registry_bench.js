// create() from Firefox's model registry, timed in Node against the replica
// (tests/lib/registry.js: es-en 3.1, a tiny-shape student, 21 MB of zstd
// attachments): cold (records, download over localhost, both hashes, zstd,
// conversion, engine load; a fresh model cache each run), warm (the same
// create() again: the records read, the conversion from the model cache), and
// the same files loaded directly from disk, uncompressed (conversion and
// load only). Best of RUNS, the three in turn. Prints one JSON object.
//
//   node tests/bench/registry_bench.js
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { buildReplica, directOptions, startReplica } from '../lib/registry.js';

const RUNS = 3;
const tmp = mkdtempSync(join(tmpdir(), 'rmt-registry-bench-'));
process.env.XDG_CACHE_HOME = join(tmp, 'cache-0');
const { createTranslator } = await import('../../js/index.js');
const replica = buildReplica(tmp);
const server = await startReplica(replica);

async function timed(options) {
  const started = performance.now();
  const translator = await createTranslator(options);
  const ms = performance.now() - started;
  translator.destroy();
  return ms;
}

const best = { cold: Infinity, warm: Infinity, direct: Infinity };
try {
  const catalog = { firefox: server.root };
  for (let run = 0; run < RUNS; run++) {
    process.env.XDG_CACHE_HOME = join(tmp, `cache-${run + 1}`);
    best.cold = Math.min(best.cold, await timed({ sourceLanguage: 'es', targetLanguage: 'en', catalog }));
    best.warm = Math.min(best.warm, await timed({ sourceLanguage: 'es', targetLanguage: 'en', catalog }));
    best.direct = Math.min(best.direct, await timed(directOptions(replica, 'es-en')));
  }
} finally {
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
const bytes = replica.collections['translations-models-v2'].filter((r) => r.sourceLanguage === 'es' && r.version === '3.1' &&
  ['model', 'vocab', 'lex'].includes(r.fileType)).reduce((n, r) => n + r.attachment.size, 0);
console.log(JSON.stringify({ node: process.version, runs: RUNS, attachmentBytes: bytes,
  ms: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v)])) }));
