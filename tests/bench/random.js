// The benchmarks' random inputs: a model of a given shape with random weights,
// written as safetensors in memory (config and weights for Engine.loadModel),
// and sentences of random token ids.

// The default model's shape (models/es-en/config.json when this was written).
export const DEFAULT_SHAPE = Object.freeze({
  format: 'residual-mt/1', style: 'residual', d_model: 256, ffn_dim: 1024, n_heads: 4, encoder_layers: 6,
  decoder_layers: 2, vocab_size: 8000, max_positions: 256,
});

function tensorShapes(c) {
  const shapes = { 'encoder.embed_tokens.weight': [c.vocab_size, c.d_model] };
  const linear = (name, out, inp) => { shapes[`${name}.weight`] = [out, inp]; shapes[`${name}.bias`] = [out]; };
  const norm = (name) => { shapes[`${name}.weight`] = [c.d_model]; shapes[`${name}.bias`] = [c.d_model]; };
  const attention = (name) => ['q_proj', 'k_proj', 'v_proj', 'out_proj'].forEach((p) => linear(`${name}.${p}`, c.d_model, c.d_model));
  for (const [stack, n] of [['encoder', c.encoder_layers], ['decoder', c.decoder_layers]]) {
    for (let i = 0; i < n; i++) {
      const p = `${stack}.layers.${i}`;
      attention(`${p}.self_attn`);
      norm(`${p}.self_attn_layer_norm`);
      if (stack === 'decoder') { attention(`${p}.encoder_attn`); norm(`${p}.encoder_attn_layer_norm`); }
      linear(`${p}.fc1`, c.ffn_dim, c.d_model);
      linear(`${p}.fc2`, c.d_model, c.ffn_dim);
      norm(`${p}.final_layer_norm`);
    }
    if (c.style !== 'post') norm(`${stack}.layer_norm`);
  }
  return shapes;
}

// { int8: true }: every matrix (Linear weights, the embedding) as an int8
// model stores it (models/quantize.py): I8 with one F32 scale per row, here
// random int8 values whose scales give the float model's weight range.
export function randomModel(config, seed = 1, { int8 = false } = {}) {
  let state = seed;
  const rand = () => { state = (state * 1664525 + 1013904223) >>> 0; return state / 2 ** 32 - 0.5; };
  const header = {};
  const blobs = [];
  let offset = 0;
  const add = (name, dtype, shape, data) => {
    header[name] = { dtype, shape, data_offsets: [offset, offset + data.byteLength] };
    blobs.push(Buffer.from(data.buffer));
    offset += data.byteLength;
    offset += (4 - (offset % 4)) % 4;  // keep F32 data 4-byte aligned
    if (offset > header[name].data_offsets[1]) blobs.push(Buffer.alloc(offset - header[name].data_offsets[1]));
  };
  for (const [name, shape] of Object.entries(tensorShapes(config))) {
    const n = shape.reduce((a, b) => a * b, 1);
    const scale = name.includes('layer_norm') ? 0 : 2 / Math.sqrt(shape[shape.length - 1]);
    if (int8 && shape.length === 2) {
      const q = new Int8Array(n);
      for (let i = 0; i < n; i++) q[i] = Math.round(rand() * 254);
      add(name, 'I8', shape, q);
      add(`${name}.qscale`, 'F32', [shape[0]], new Float32Array(shape[0]).fill(scale / 254));  // as rand() * scale
      continue;
    }
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = (name.endsWith('layer_norm.weight') ? 1 : 0) + rand() * scale;
    add(name, 'F32', shape, data);
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(text.length));
  return { config: JSON.stringify(config), weights: Buffer.concat([len, Buffer.from(text), ...blobs]) };
}

export function randomSentences(count, vocab, seed) {
  let state = seed;
  const rand = () => { state = (state * 1103515245 + 12345) >>> 0; return state; };
  return Array.from({ length: count }, () => Array.from({ length: 8 + (rand() % 25) }, () => 4 + (rand() % (vocab - 4))));
}
