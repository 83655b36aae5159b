// Two checkouts' demo load side by side: `node tests/bench/load_bench.js
// --runs 3 --json` in DIR_A and DIR_B, alternately (A B, B A, ...) for
// ROUNDS rounds, so that both see the same minutes of a shared machine; then
// each one's median over all its runs (warm reload, cold load, first
// translation), their first quartile (runs that other jobs on the machine
// slowed the least), and its median step times (ms since navigation start).
//
//   node tests/bench/load_ab.js DIR_A DIR_B [ROUNDS]      (default 4)
//
// Each directory needs its engine built (bash build.sh wasm) and node_modules.

import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const [a, b, rounds = '4'] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node tests/bench/load_ab.js DIR_A DIR_B [ROUNDS]');
  process.exit(2);
}

function run(dir) {
  const out = execFileSync(process.execPath, ['tests/bench/load_bench.js', '--runs', '3', '--json'],
    { cwd: resolve(dir), encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out.slice(out.indexOf('{')));
}

const quantile = (values, q) => {
  const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) * q + 0.5)] : NaN;
};
const median = (values) => quantile(values, 0.5);

const results = new Map([[a, []], [b, []]]);
for (let r = 0; r < Number(rounds); r++) {
  for (const dir of r % 2 ? [b, a] : [a, b]) {
    const j = run(dir);
    results.get(dir).push(j);
    console.log(`${dir}: warm ${j.warm.runs.join(', ')}; cold ${j.cold.runs.join(', ')}; first translation ${j.first_translation_runs_ms.join(', ')}`);
  }
}
for (const [dir, all] of results) {
  const figures = (q) => `warm ${quantile(all.flatMap((j) => j.warm.runs), q)} ms, cold ${quantile(all.flatMap((j) => j.cold.runs), q)} ms, ` +
    `first translation ${quantile(all.flatMap((j) => j.first_translation_runs_ms), q)} ms`;
  console.log(`\n${dir}: ${figures(0.5)} (medians of ${all.length * 3} runs each); first quartiles: ${figures(0.25)}`);
  for (const which of ['warm', 'cold']) {
    const names = [...new Set(all.flatMap((j) => Object.keys(j[which].steps)))];
    const rows = names.map((name) => [name, median(all.map((j) => j[which].steps[name]?.start)), median(all.map((j) => j[which].steps[name]?.end))])
      .sort((x, y) => x[1] - y[1]);
    console.log(`  ${which}: ${rows.map(([name, start, end]) => `${name} ${Math.round(start)}-${Math.round(end)}`).join(' | ')}`);
  }
}
