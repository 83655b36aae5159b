// A worker of tests/bounds.test.js: random mutations of real files fed to
// the JavaScript Marian readers (as the C fuzz targets do for the engine),
// for workerData.ms milliseconds from workerData.seed. Each reader must
// return or throw an Error of ours (its message "residual-mt: ..."); the
// test terminates the worker if it hangs. Posts { runs, failures: [{ target,
// seed, message }] } (the first few failures).
import { parentPort, workerData } from 'node:worker_threads';

import { convertMarian } from '../../js/marian/convert.js';
import { readBin, readNpz, readShortlist } from '../../js/marian/files.js';
import { mergedSpm, readVocabYml, spmSpecialIds } from '../../js/marian/vocab.js';
import { random } from './marian.js';

const { files, ms, seed, tally = null } = workerData; // files: name -> Uint8Array
const VOCAB = 150; // the shortlist's and the small model's vocabulary (tests/fixtures/models/residual-text)
const utf8 = new TextDecoder();

// What each reader is given: a mutated copy of one real file, the rest as they are.
const TARGETS = {
  'readBin (marian-trained model.bin)': (m) => readBin(m(files.trainedBin)),
  'readNpz (zipfile-deflated .npz)': (m) => readNpz(m(files.npz), { maxBytes: 1 << 24 }),
  'readShortlist': (m) => readShortlist(m(files.shortlist), VOCAB),
  'spmSpecialIds (spm_train model)': (m) => spmSpecialIds(m(files.spm)),
  'mergedSpm (PyYAML vocab.yml)': (m) => mergedSpm(readVocabYml(utf8.decode(m(files.yml))), files.spm, files.spm),
  'mergedSpm (its source spm)': (m) => mergedSpm(readVocabYml(utf8.decode(files.yml)), m(files.spm), null),
  'convertMarian (model.bin)': (m) => convertMarian({ model: m(files.bin), vocab: files.spm, shortlist: files.shortlist }),
  'convertMarian (shortlist)': (m) => convertMarian({ model: files.bin, vocab: files.spm, shortlist: m(files.shortlist) }),
};

const EXTREMES = [0, 1, 0x7f, 0x80, 0xff, 0x7fffffff, 0x80000000, 0xffffffff];

// One mutation of `bytes` (a copy): bytes flipped, a 4- or 8-byte field set to
// an extreme, the file cut short, bytes inserted, or a slice repeated.
function mutate(bytes, rand) {
  const at = (n = bytes.length) => Math.floor(rand() * Math.max(1, n));
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  switch (at(5)) {
    case 0:
      for (let k = 1 + at(8); k > 0; k--) out[at()] ^= 1 << at(8);
      return out;
    case 1: {
      const pos = at(out.length - 8) & ~3, value = EXTREMES[at(EXTREMES.length)];
      view.setUint32(pos, value, true);
      if (rand() < 0.5) view.setUint32(pos + 4, rand() < 0.5 ? 0 : value, true);
      return out;
    }
    case 2:
      return out.slice(0, at());
    case 3: {
      const pos = at(), extra = Uint8Array.from({ length: 1 + at(16) }, () => at(256));
      return joined(out.subarray(0, pos), extra, out.subarray(pos));
    }
    default: {
      const start = at(), end = Math.min(out.length, start + 1 + at(64));
      const pos = at();
      return joined(out.subarray(0, pos), out.subarray(start, end), out.subarray(pos));
    }
  }
}

function joined(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((offset, p) => { out.set(p, offset); return offset + p.length; }, 0);
  return out;
}

const names = Object.keys(TARGETS), failures = [];
const until = Date.now() + ms;
let runs = 0;
for (let n = 0; Date.now() < until; n++) {
  const target = names[n % names.length], caseSeed = seed + n, rand = random(caseSeed);
  try {
    await TARGETS[target]((bytes) => mutate(bytes, rand));
    if (tally) tally[`${target}: read`] = (tally[`${target}: read`] ?? 0) + 1;
  } catch (err) {
    if (tally) tally[`${target}: ${err.message.slice(0, 50)}`] = (tally[`${target}: ${err.message.slice(0, 50)}`] ?? 0) + 1;
    if (!(err instanceof Error) || !/^residual-mt: /.test(err.message)) {
      if (failures.length < 8) failures.push({ target, seed: caseSeed, message: `${err?.name}: ${err?.message}` });
    }
  }
  runs++;
}
parentPort.postMessage({ runs, failures, tally });
