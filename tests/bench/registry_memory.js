// Peak memory of one create() from Firefox's model registry in Node (the
// replica: tests/lib/registry.js, es-en 3.1, a tiny-shape student whose
// model.esen.intgemm8.bin is 17 MB, its files zstd-compressed as Firefox
// serves them), each load in a fresh child process with a fresh model cache:
// the peak resident memory (process.resourceUsage().maxRSS) of the registry
// load (download, both hashes, zstd, conversion, engine) beside the same files
// given uncompressed from disk (conversion and engine only), and beside an
// idle process. Best (lowest) of RUNS. Prints one JSON object, MB.
//
//   node tests/bench/registry_memory.js
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildReplica, directOptions, startReplica } from '../lib/registry.js';

const RUNS = 3;
const INDEX = fileURLToPath(new URL('../../js/index.js', import.meta.url));

// The child: one create() (or none), then its peak memory in MB.
const child = (options) => `
  const { createTranslator } = await import(${JSON.stringify(INDEX)});
  const options = ${JSON.stringify(options)};
  if (options) (await createTranslator(options)).destroy();
  console.log(process.resourceUsage().maxRSS / 1024);`;

const tmp = mkdtempSync(join(tmpdir(), 'rmt-registry-memory-'));
const replica = buildReplica(tmp);
const server = await startReplica(replica);
// spawnSync would block the replica's server: the child runs while this process serves.
let loads = 0;
const peak = (options) => new Promise((resolve, reject) => {
  const p = spawn(process.execPath, ['--input-type=module', '-e', child(options)],
    { env: { ...process.env, XDG_CACHE_HOME: join(tmp, `cache-${loads++}`) } });
  let out = '', err = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { err += d; });
  p.on('close', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(err))));
});

try {
  const best = { idle: Infinity, registry: Infinity, direct: Infinity };
  for (let run = 0; run < RUNS; run++) {
    best.idle = Math.min(best.idle, await peak(null));
    best.registry = Math.min(best.registry, await peak({ sourceLanguage: 'es', targetLanguage: 'en', catalog: { firefox: server.root } }));
    best.direct = Math.min(best.direct, await peak(directOptions(replica, 'es-en')));
  }
  const model = replica.models['es-en'].model;
  console.log(JSON.stringify({ model_mb: +(statSync(model).size / 2 ** 20).toFixed(1),
    ...Object.fromEntries(Object.entries(best).map(([k, v]) => [`${k}_peak_mb`, +v.toFixed(1)])),
    registry_over_direct_mb: +(best.registry - best.direct).toFixed(1) }));
} finally {
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
