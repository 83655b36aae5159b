// Engines compared pass by pass in one process or page (tests/bench/threads_bench.js
// drives it in Node, and in Chromium through page.evaluate): no Node modules here.
import { Engine } from '../../js/engine/binding.js';

export class SideBySide {
  // builds: [{ wasm: bytes of an engine build, threads }], each loaded as an application loads it.
  static async create(builds) {
    const bench = new SideBySide();
    bench.engines = [];
    for (const { wasm, threads } of builds) bench.engines.push(await Engine.load(wasm, { threads }));
    bench.models = [];
    return bench;
  }

  // The same model ({ config, weights, spm } bytes) on every engine.
  loadModel(files) {
    this.disposeModels();
    this.models = this.engines.map((e) => e.loadModel(files));
    this.targetLanguage = this.models[0].config.languages?.target_lang_tokens ? 'en' : undefined;
  }

  // Engine i translates `texts`, `per` a call: target tokens/s (with </s>) and the first hypotheses' ids.
  pass(i, texts, per, options) {
    const model = this.models[i];
    let tokens = 0;
    const outputs = [];
    const start = performance.now();
    for (let k = 0; k < texts.length; k += per) {
      for (const hyps of model.translateTexts(texts.slice(k, k + per), { ...options, batch: per, targetLanguage: this.targetLanguage })) {
        tokens += hyps[0].ids.length + 1;
        outputs.push(hyps[0].ids.join(' '));
      }
    }
    return { tokensPerSecond: tokens / ((performance.now() - start) / 1000), outputs };
  }

  disposeModels() {
    for (const m of this.models) m.dispose();
    this.models = [];
  }

  dispose() {
    this.disposeModels();
    for (const e of this.engines) e.dispose();
  }
}
