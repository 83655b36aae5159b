// Where a model package is (the default translation model, the language
// detector's): installed beside residual-mt, the repository's own copy (a
// checkout: npm start, the tests and the CLI run offline), or its pinned
// version on an npm CDN.

import { CONFIG, DEFAULT_MODEL, packageUrl } from '../defaults.js';
import { isNode, timeStep } from '../util/env.js';
import { open, readJson } from './files.js';
import { untilAborted } from '../util/streams.js';

async function fileExists(url) {
  const { stat } = await import('node:fs/promises');
  try {
    return (await stat(url)).isFile();
  } catch {
    return false;
  }
}

// The default model (defaults.js's DEFAULT_MODEL), first found of: the model
// package installed next to residual-mt (Node: resolved like an import;
// browsers: an import map entry for "residual-mt-es-en/", or the sibling
// directory under node_modules/), the repository's own copy (a checkout:
// npm start, the tests and the CLI run offline), then the package at its
// pinned version on an npm CDN. Over HTTP the answer is kept for the page's
// lifetime (one probe per page load), and so is the config.json the probe
// read (readConfig's, without a second request).
let defaultOverHttp = null;
const probedConfigs = new Map(); // config.json URL -> { bytes, contentType }
export function resolveDefaultModel({ signal } = {}) {
  if (isNode()) return findDefaultModelNode();
  defaultOverHttp ??= findDefaultModelHttp();
  defaultOverHttp.catch(() => { defaultOverHttp = null; });
  return untilAborted(defaultOverHttp, signal);
}

// A model package (DEFAULT_MODEL's shape: package, repoPath, url) in Node:
// installed, the repository's copy (when it holds `probe`), or its pinned URL.
async function findModelPackageNode(desc, probe) {
  const { createRequire } = await import('node:module');
  try {
    const manifest = createRequire(import.meta.url).resolve(`${desc.package}/package.json`);
    const { pathToFileURL } = await import('node:url');
    return new URL('./', pathToFileURL(manifest));
  } catch { /* not installed */ }
  const repo = packageUrl(desc.repoPath);
  if (repo.protocol === 'file:' && await fileExists(new URL(probe, repo))) return repo;
  return new URL(desc.url);
}

const findDefaultModelNode = () => findModelPackageNode(DEFAULT_MODEL, CONFIG);

async function findDefaultModelHttp() {
  const done = timeStep('find the default model');
  try {
    return await findDefaultModelHttpOnce();
  } finally {
    done();
  }
}

// Over HTTP: the page's import map entry, the sibling of residual-mt under
// node_modules/ or the repository's copy (where `probe` answers), else the
// pinned URL. found(file, url): what to keep of the probe's answer.
async function findModelPackageHttp(desc, probe, found = async () => {}) {
  try {
    return new URL(import.meta.resolve(`${desc.package}/`));
  } catch { /* not in the page's import map */ }
  const root = packageUrl('./');
  const local = /\/node_modules\/residual-mt\/$/.test(root.pathname)
    ? new URL(`../${desc.package}/`, root) : packageUrl(desc.repoPath);
  try {
    const url = new URL(probe, local);
    const file = await open(url, `the model's ${probe}`);
    if (!file.missing && !file.error) {
      await found(file, url);
      return local;
    }
  } catch { /* offline and not cached: the pinned URL */ }
  return new URL(desc.url);
}

// The probe's copy of a config.json (readConfig's, without a second request), or undefined.
export const probedConfig = (href) => probedConfigs.get(href);

// config.json is in every model directory (manifest.json may not be); the
// probe's copy is kept for readConfig.
function findDefaultModelHttpOnce() {
  return findModelPackageHttp(DEFAULT_MODEL, CONFIG, async (file, url) => {
    try {
      probedConfigs.set(url.href, { bytes: await readJson(file, url), contentType: file.contentType });
    } catch (err) {
      if (err.name !== 'OperationError') throw err;
    } // too large: readConfig reads it again, and says so
  });
}

// Another model package (the language detector's: defaults.js), found as the
// default model is; kept per package for the page's lifetime over HTTP.
const foundPackages = new Map();
export function resolveModelPackage(desc, probe) {
  if (isNode()) return findModelPackageNode(desc, probe);
  if (!foundPackages.has(desc.package)) {
    const finding = findModelPackageHttp(desc, probe);
    finding.catch(() => foundPackages.delete(desc.package));
    foundPackages.set(desc.package, finding);
  }
  return foundPackages.get(desc.package);
}

