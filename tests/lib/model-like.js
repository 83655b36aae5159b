// A 16.5 MB "model-like" file for the zstd tests and benchmark: real model
// bytes, no random filler (the shipped model's int8 weights, then Firefox's
// es->en shortlist and vocabulary), about the size of a Firefox Translations
// model file (model.esen.intgemm.alphas.bin, ~17 MB).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const FIREFOX = new URL('../fixtures/firefox-esen/', import.meta.url);

export function modelLike() {
  return Buffer.concat([
    readFileSync(new URL('../../models/es-en/model.safetensors', import.meta.url)),
    gunzipSync(readFileSync(new URL('lex.50.50.esen.s2t.bin.gz', FIREFOX))),
    gunzipSync(readFileSync(new URL('vocab.esen.spm.gz', FIREFOX))),
  ]);
}
