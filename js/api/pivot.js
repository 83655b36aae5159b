// A translator through a pivot language: two translators, source → pivot and
// pivot → target, behind the Translator API's shape (catalog.js finds them).
// Each call is the second's translation of the first's: plain text or HTML
// (format: 'html' both ways), one string or a batch; a stream is the second
// model's stream over the first's whole translation. The input quota and its
// usage are the first's, which reads the input.

import { abortError } from '../util/errors.js';
import { anySignal, streamOf } from '../util/streams.js';

export class PivotTranslator {
  #first;
  #second;

  constructor(first, second) {
    this.#first = first;
    this.#second = second;
    this.sourceLanguage = first.sourceLanguage;
    this.targetLanguage = second.targetLanguage;
    this.pivotLanguage = first.targetLanguage;
    this.inputQuota = first.inputQuota;
    this.model = [first.model, second.model];
    this.inWorker = first.inWorker;
    this.threads = first.threads;
  }

  // options.details: the second model's details of each result.
  async translate(input, options = {}) {
    const { details, ...rest } = options;
    const middle = await this.#first.translate(input, rest);
    return this.#second.translate(middle, options);
  }

  translateStreaming(input, options = {}) {
    const [first, second] = [this.#first, this.#second];
    return streamOf(async function* pivoted(cancelled) {
      const opts = { ...options, signal: anySignal([cancelled, options.signal]) };
      yield* second.translateStreaming(await first.translate(input, opts), opts);
    });
  }

  measureInputUsage(input, options) {
    return this.#first.measureInputUsage(input, options);
  }

  destroy(reason = abortError('residual-mt: the translator has been destroyed')) {
    this.#first.destroy(reason);
    this.#second.destroy(reason);
  }

  get destroyed() {
    return this.#first.destroyed;
  }
}
