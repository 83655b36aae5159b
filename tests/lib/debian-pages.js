// Debian's own Spanish HTML manuals for the browser tests: the packages
// downloaded with apt-get (the Debian archive is the tests' one source of text
// nobody here wrote) into a cache folder outside the repository and the pages
// extracted from them with dpkg-deb; where apt-get cannot download them, the
// one page committed with its licence (tests/fixtures/live/NOTICE), and the
// caller says so.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(tmpdir(), 'rmt-debian-pages');
const EXCERPT = fileURLToPath(new URL('../fixtures/live/debian-handbook-es-sect.why-debian.html', import.meta.url));

// package -> the pages read from it
export const PAGES = {
  'debian-reference-es': ['./usr/share/debian-reference/pr01.es.html'],
  'debian-handbook': ['./usr/share/doc/debian-handbook/html/es-ES/sect.why-debian.html'],
};
// The longest page of the manuals (the live translation's benchmark).
export const LONGEST = ['debian-reference-es', './usr/share/debian-reference/ch09.es.html'];

function deb(pkg) {
  mkdirSync(CACHE, { recursive: true });
  const find = () => readdirSync(CACHE).find((name) => name.startsWith(`${pkg}_`) && name.endsWith('.deb'));
  if (!find()) execFileSync('apt-get', ['download', pkg], { cwd: CACHE, stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
  return join(CACHE, find());
}

// The text of `path` in package `pkg` (downloaded and extracted once).
export function debianPage(pkg, path) {
  const file = deb(pkg);
  const out = join(CACHE, `${pkg}.x`);
  if (!existsSync(join(out, path))) {
    mkdirSync(out, { recursive: true });
    execFileSync('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" "$3"', 'sh', file, out, path], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  return readFileSync(join(out, path), 'utf8');
}

// [{ name, html }] and where they came from: 'apt' or 'excerpt' (with why).
export function debianPages() {
  try {
    const pages = Object.entries(PAGES).flatMap(([pkg, paths]) => paths.map((path) => ({ name: `${pkg}:${path.slice(1)}`, html: debianPage(pkg, path) })));
    return { pages, source: 'apt' };
  } catch (err) {
    return { pages: [{ name: 'committed excerpt: debian-handbook es-ES sect.why-debian.html', html: readFileSync(EXCERPT, 'utf8') }],
      source: `excerpt (apt-get download failed: ${String(err.stderr ?? err.message).trim().split('\n').pop()})` };
  }
}
