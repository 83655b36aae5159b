#!/usr/bin/env node
// The README's benchmark table, made from the JSON of `npm run bench -- --json`
// (tests/bench/report.js), so that the figures it shows come from a real run.
//
//   npm run bench -- --json > docs/bench.json
//   node scripts/bench-table.js docs/bench.json                   prints the markdown
//   node scripts/bench-table.js docs/bench.json --write README.md replaces the part between
//                                                                 <!-- bench:begin --> and <!-- bench:end -->
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

const fixed = (x, digits = 0) => (x === null || x === undefined ? '–' : Number(x).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

export function benchTable(report) {
  const m = report.machine;
  const lines = [];
  lines.push(`Measured ${report.date.slice(0, 10)} on ${m.cpu} (${m.cores} cores), Node ${m.node}, ${m.chromium ?? 'no Chromium'}` +
    `${report.quick ? ' (a --quick run: fewer sentences, rounds and passes)' : ''}. ` +
    `Workload: ${report.workload.texts} (${report.workload.sentences} sentences), target tokens/s with </s>; ` +
    `batched: ${report.workload.batched} sentences a call.`);
  lines.push('');
  lines.push('| variant | runtime | greedy, 1 a call | greedy, batched | beam 5, 1 a call | beam 5, batched | batched greedy vs f32 | load ms | first translation ms | peak memory MB | wasm KB (gzip) | peak GFLOP/s | GEMM GFLOP/s (of peak) | int8 peak GOP/s: dot_i16x8 (relaxed dot) | int8 GEMM GOP/s (of its instruction\'s peak) | greedy = f32 |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const runtimes = [['node', 'Node'], ['chromium', 'Chromium']].filter(([key]) => report[key]);
  for (const name of Object.keys(report.node)) {
    for (const [key, label] of runtimes) {
      const v = report[key][name];
      if (!v) continue;
      if (v.skipped) {
        lines.push(`| ${name} | ${label} | ${v.skipped} |${' |'.repeat(13)}`);
        continue;
      }
      const t = v.tokens_per_s, base = report[key].f32?.tokens_per_s?.greedy_batched;
      const size = report.sizes[name];
      lines.push(`| ${name} | ${label} | ${fixed(t.greedy_batch1)} | ${fixed(t.greedy_batched)} | ${fixed(t.beam5_batch1)} | ${fixed(t.beam5_batched)} | ` +
        `${base ? `${fixed(t.greedy_batched / base, 2)}×` : '–'} | ${fixed(v.load_ms)} | ${fixed(v.first_translation_ms)} | ` +
        `${fixed(v.peak_memory_bytes / 2 ** 20)} | ${fixed(size.wasm_bytes / 1024)} (${fixed(size.wasm_gzip_bytes / 1024)}) | ` +
        `${fixed(v.peak_gflops, 1)} | ${fixed(v.gemm_gflops, 1)} (${fixed(100 * v.gemm_efficiency)}%) | ` +
        `${fixed(v.int8_peak_gops, 1)}${v.relaxed_dot_peak_gops ? ` (${fixed(v.relaxed_dot_peak_gops, 1)})` : ''} | ` +
        `${v.int8_gemm_gops ? `${fixed(v.int8_gemm_gops, 1)} (${fixed(100 * v.int8_gemm_efficiency)}% of ${v.int8_kernel === 'relaxed_dot' ? 'relaxed dot' : 'dot_i16x8'})` : '–'} | ${v.greedy_equal_to_f32 ?? '–'} |`);
    }
  }
  lines.push('');
  if (report.demo) {
    lines.push(`The demo page in Chromium (tests/bench/load_bench.js, median of ${report.demo.cold.runs.length} runs): ` +
      `ready ${fixed(report.demo_cold_ready_ms)} ms after a cold load from localhost, ${fixed(report.demo_warm_ready_ms)} ms after a warm reload; ` +
      `the first translation of a 20-word sentence ${fixed(report.first_translation_ms)} ms after ready.`);
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const input = args[0] && !args[0].startsWith('--') ? args[0] : 0;
  const report = JSON.parse(readFileSync(input, 'utf8'));
  const table = benchTable(report);
  const at = args.indexOf('--write');
  if (at < 0) {
    console.log(table);
  } else {
    const file = args[at + 1];
    const text = readFileSync(file, 'utf8');
    const begin = text.indexOf(BEGIN), end = text.indexOf(END);
    if (begin < 0 || end < begin) throw new Error(`${file} has no ${BEGIN} ... ${END} section`);
    writeFileSync(file, `${text.slice(0, begin + BEGIN.length)}\n${table}\n${text.slice(end)}`);
    console.log(`wrote the benchmark table into ${file}`);
  }
}
