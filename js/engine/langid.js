// A thin object layer over the engine's language identifier (src/langid.h):
// a model loaded from its file's bytes, and each text's probabilities per
// language. What the LanguageDetector API makes of them is detector.js's.

export class LanguageIdentifier {
  constructor(wasm, ptr) {
    this.wasm = wasm;
    this.ptr = ptr;
    const n = wasm.exports.rmt_langid_n_languages(ptr);
    this.languages = Array.from({ length: n }, (_, i) => wasm.readString(wasm.exports.rmt_langid_language(ptr, i)));
    this.state = wasm.exports.rmt_langid_state_new(ptr);
    if (!this.state) {
      wasm.exports.rmt_langid_free(ptr);
      throw wasm.error('language identifier: ');
    }
  }

  // bytes: the model file (models/langid/model.safetensors). Throws the
  // engine's message for a file it refuses.
  static load(wasm, bytes) {
    const data = wasm.copyIn(bytes);
    try {
      const ptr = wasm.exports.rmt_langid_load(data, bytes.byteLength);
      if (!ptr) throw wasm.error('language identifier: ');
      return new LanguageIdentifier(wasm, ptr);
    } finally {
      wasm.free(data);
    }
  }

  // The model's bytes in the engine's memory.
  get bytes() {
    return this.wasm.exports.rmt_langid_bytes(this.ptr);
  }

  // { features, probabilities }: how many n-grams and words the text has
  // (0: no letters, and every probability 0), and one probability per
  // language, in this.languages' order.
  scores(text) {
    if (!this.ptr) throw new Error('residual-mt: the language identifier has been freed');
    const w = this.wasm;
    const [ptr, length] = w.copyString(text);
    try {
      const features = w.exports.rmt_langid_detect(this.state, ptr, length);
      if (features < 0) throw w.error('language identifier: ');
      const at = w.exports.rmt_langid_probs(this.state) >> 2;
      return { features, probabilities: Array.from(w.f32.subarray(at, at + this.languages.length)) };
    } finally {
      w.free(ptr);
    }
  }

  dispose() {
    if (!this.ptr) return;
    this.wasm.exports.rmt_langid_state_free(this.state);
    this.wasm.exports.rmt_langid_free(this.ptr);
    this.ptr = 0;
  }
}
