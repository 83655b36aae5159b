// The README's benchmark table is what scripts/bench-table.js makes of
// docs/bench.json (the saved `npm run bench -- --json`): the figures it shows
// come from that run, every variant of it in each runtime, every row as wide
// as the header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { benchTable } from '../scripts/bench-table.js';

const BEGIN = '<!-- bench:begin -->', END = '<!-- bench:end -->';
const cells = (line) => line.split(' | ').length;

test('README.md shows the table scripts/bench-table.js makes of docs/bench.json', () => {
  const report = JSON.parse(readFileSync(new URL('../docs/bench.json', import.meta.url), 'utf8'));
  const table = benchTable(report);
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes(BEGIN) && readme.indexOf(END) > readme.indexOf(BEGIN));
  assert.equal(readme.slice(readme.indexOf(BEGIN) + BEGIN.length, readme.indexOf(END)).trim(), table.trim(),
    'README.md is out of date: node scripts/bench-table.js docs/bench.json --write README.md');
  const lines = table.split('\n').filter((line) => line.startsWith('| '));
  const [header, , ...rows] = lines;
  const runtimes = ['node', 'chromium'].filter((key) => report[key]);
  assert.equal(rows.length, Object.keys(report.node).length * runtimes.length);
  for (const row of rows) assert.equal(cells(row), cells(header), row);
  for (const name of Object.keys(report.node)) assert.ok(rows.some((row) => row.startsWith(`| ${name} | Node |`)), name);
});
