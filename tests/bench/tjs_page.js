// The page side of tests/bench/tjs_bench.js: transformers.js (ONNX Runtime
// Web's WebAssembly) and our engine in one page, on the same model's files and
// the same source ids, greedy, each output forced to its source's length + 1.
// The server mounts /project/ (this repository), /deps/ (the benchmark's
// node_modules: @huggingface/transformers) and /model/ (models/tjs_export.py's
// folder).
const loaded = new Map();  // variant name -> { info, translate(chunk) }
const now = () => performance.now();
// Ours, greedy; maxLenA 1: each sentence's own limit, ceil(1 x (source + </s>)) tokens.
const SEARCH = { beam: 1, maxLenA: 1, maxLenB: 0, minLen: 0 };

async function bytes(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

// transformers.js as a page gets it from npm, its ONNX Runtime files (the
// asyncify build, transformers.js' default in Chromium) from localhost
// instead of its CDN; threads: ORT's numThreads, fixed at its first session.
async function transformers(threads) {
  const T = await import('/deps/node_modules/@huggingface/transformers/dist/transformers.js');
  Object.assign(T.env, { allowRemoteModels: false, allowLocalModels: true, localModelPath: '/', useBrowserCache: false, useWasmCache: false });
  const wasm = T.env.backends.onnx.wasm;
  const dist = `${location.origin}/deps/node_modules/onnxruntime-web/dist/`;
  wasm.wasmPaths = { mjs: `${dist}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${dist}ort-wasm-simd-threaded.asyncify.wasm` };
  wasm.numThreads = threads;
  wasm.proxy = false;
  return T;
}

async function loadTjs(v, threads, eos, pad) {
  const T = await transformers(threads);
  const model = await T.AutoModelForSeq2SeqLM.from_pretrained('model/tjs', { dtype: v.dtype, device: 'wasm' });
  return {
    info: { version: T.env.version, ort: T.env.backends.onnx.versions?.web, threads: T.env.backends.onnx.wasm.numThreads },
    // Rows padded on the right with <pad>, each with its </s>; every row is
    // decoded to the longest length of the call (transformers.js has no
    // per-row limit) and cut to its own.
    async translate(chunk) {
      const width = Math.max(...chunk.map((s) => s.length)) + 1;
      const ids = new BigInt64Array(chunk.length * width).fill(BigInt(pad));
      const mask = new BigInt64Array(chunk.length * width);
      chunk.forEach((s, r) => {
        [...s, eos].forEach((id, i) => { ids[r * width + i] = BigInt(id); mask[r * width + i] = 1n; });
      });
      const dims = [chunk.length, width];
      const out = await model.generate({ input_ids: new T.Tensor('int64', ids, dims), attention_mask: new T.Tensor('int64', mask, dims),
        max_new_tokens: width, do_sample: false, num_beams: 1 });
      return out.tolist().map((row, r) => row.slice(1, chunk[r].length + 2).map(Number));
    },
  };
}

// Our engine: the plain SIMD build on one thread, the threads build on more.
async function loadRmt(v, threads) {
  const { Engine } = await import('/project/js/engine/binding.js');
  const build = threads > 1 ? 'residual-mt-threads.wasm' : 'residual-mt.wasm';
  const engine = await Engine.load(`${location.origin}/project/dist/${build}`, { threads });
  const [config, weights, spm] = await Promise.all(['config.json', 'model.safetensors', 'spm.model'].map((f) => bytes(`/model/${v.dir}/${f}`)));
  const model = engine.loadModel({ config: new TextDecoder().decode(config), weights, spm });
  return {
    info: { threads: engine.threads, build, weightBytes: model.bytes },
    translate: (chunk) => model.translateIds(chunk, { ...SEARCH, batch: chunk.length })
      .map((hyps) => Array.from(hyps[0].ids)),
  };
}

// Loads a variant ({ name, runtime, dtype | dir }); its load time in ms.
export async function load(v, threads, eos, pad) {
  const t0 = now();
  const handle = v.runtime === 'tjs' ? await loadTjs(v, threads, eos, pad) : await loadRmt(v, threads);
  const ms = now() - t0;
  loaded.set(v.name, handle);
  return { ms, info: handle.info, isolated: self.crossOriginIsolated };
}

// The peaks of the int8 and float32 products' instructions in this page
// (tests/bench/kernels.js: i32x4.dot_i16x8_s, f32x4 mul + add), G operations
// a second, the best of three: what bounds any WebAssembly SIMD128 engine here.
export async function peaks() {
  const { peakRunner } = await import('/bench/kernels.js');
  const best = (kind) => { const run = peakRunner(kind); return Math.max(run(), run(), run()); };
  return { dot_i16: best('dot_i16'), f32: best('f32') };
}

// The profiling build (bash build.sh profile: src/profile.h's timers) on our
// model in `dir` over the chunks, after a warm-up pass: each operation's
// { name, ms, work } (work: its multiply-adds) and the whole pass' ms.
export async function profile(dir, chunks) {
  const { Engine } = await import('/project/js/engine/binding.js');
  const { profileOps } = await import('/bench/kernels.js');
  const engine = await Engine.load(`${location.origin}/project/build/wasm-profile/residual-mt.wasm`, { threads: 1 });
  const [config, weights, spm] = await Promise.all(['config.json', 'model.safetensors', 'spm.model'].map((f) => bytes(`/model/${dir}/${f}`)));
  const model = engine.loadModel({ config: new TextDecoder().decode(config), weights, spm });
  const w = engine.wasm.exports;
  const pass = () => chunks.forEach((chunk) => model.translateIds(chunk, { ...SEARCH, batch: chunk.length }));
  pass();
  w.rmt_profile_reset();
  const t0 = now();
  pass();
  const ms = now() - t0;
  const ops = profileOps(engine.wasm);
  model.dispose();
  engine.dispose();
  return { ms, ops };
}

// Translates the chunks with one variant: the time of each call and the ids.
export async function run(name, chunks) {
  const handle = loaded.get(name);
  const times = [], ids = [];
  for (const chunk of chunks) {
    const t0 = now();
    const out = await handle.translate(chunk);
    times.push(now() - t0);
    ids.push(...out);
  }
  return { times, ids };
}
