// One home for each policy: the search defaults and limits live in the C
// engine (src/search_params.c), which JavaScript reads rather than repeats, and
// they are the PyTorch reference's (models/residual_mt/reference.py), which defines
// correct: its beam_search() keyword defaults and its Config's max_positions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Engine } from '../js/engine/binding.js';

const root = new URL('..', import.meta.url);
const reference = readFileSync(new URL('models/residual_mt/reference.py', root), 'utf8');
const engine = await Engine.load();

// The keyword defaults of a Python function in reference.py: { name: number }
// (a bool as 1 or 0, as the engine holds it).
function pythonDefaults(functionName) {
  const signature = new RegExp(`^def ${functionName}\\(([^)]*)\\)`, 'm').exec(reference);
  assert.ok(signature, `reference.py defines ${functionName}()`);
  const defaults = {};
  for (const m of signature[1].matchAll(/(\w+)\s*:\s*\w+\s*=\s*(True|False|[-\d.]+)/g)) {
    defaults[m[1]] = m[2] === 'True' ? 1 : m[2] === 'False' ? 0 : Number(m[2]);
  }
  return defaults;
}

const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());

test('the engine\'s search defaults are reference.py\'s beam_search() defaults, field for field', () => {
  const python = pythonDefaults('beam_search');
  assert.deepEqual(Object.keys(python).sort(), ['beam', 'lenpen', 'max_len_a', 'max_len_b', 'min_len', 'nbest', 'shortlist']);
  const fromC = Object.fromEntries(Object.keys(python).map((name) => [name, engine.defaults[camel(name)]]));
  assert.deepEqual(fromC, python);
  // Every field the engine has is one of them (JS knows the fields only by asking C).
  assert.deepEqual(Object.keys(engine.defaults).sort(), Object.keys(python).map(camel).sort());
});

test('a config without max_positions gets reference.py\'s default in the engine', () => {
  const pythonDefault = Number(/^\s+max_positions: int = (\d+)$/m.exec(reference)?.[1]);
  assert.ok(pythonDefault > 0, 'reference.py\'s Config declares max_positions');
  const dir = new URL('tests/fixtures/models/residual-text/', root);
  const config = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));
  const weights = readFileSync(new URL('model.safetensors', dir));
  const spm = readFileSync(new URL('spm.model', dir));
  // With no output-length term, a sentence may have max_positions - 1 ids
  // (its </s> takes the last position), less one for a language token.
  const longest = (c) => {
    const model = engine.loadModel({ config: JSON.stringify(c), weights, spm });
    try {
      return model.maxSourceIds({ maxLenA: 0 }) + 1 + (c.languages?.target_lang_tokens ? 1 : 0);
    } finally {
      model.dispose();
    }
  };
  assert.equal(longest(config), config.max_positions, 'the measure reads max_positions back');
  assert.notEqual(config.max_positions, pythonDefault, 'the fixture sets another value, so the default shows');
  const { max_positions: _, ...withoutIt } = config; // eslint-disable-line no-unused-vars
  assert.equal(longest(withoutIt), pythonDefault);
});

test('the beam limit is the engine\'s: one above it is a RangeError naming the range', () => {
  const dir = new URL('tests/fixtures/models/residual-text/', root);
  const model = engine.loadModel({
    config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)),
    spm: readFileSync(new URL('spm.model', dir)),
  });
  try {
    const limit = /#define RMT_MAX_BEAM (\d+)/.exec(readFileSync(new URL('src/rmt.h', root), 'utf8'))?.[1];
    assert.equal(model.maxSourceIds({ beam: Number(limit) }) > 0, true);
    assert.throws(() => model.maxSourceIds({ beam: Number(limit) + 1 }), (err) => err instanceof RangeError &&
      new RegExp(`beam.*\\b${limit}\\b`).test(err.message));
  } finally {
    model.dispose();
  }
});

test('the thread cap is the engine\'s (RMT_THREADS_MAX), which defaults.js checks before any engine is loaded', async () => {
  const { MAX_THREADS } = await import('../js/defaults.js');
  assert.equal(engine.limits.threads, MAX_THREADS);
  assert.equal(engine.limits.beam, Number(/#define RMT_MAX_BEAM (\d+)/.exec(readFileSync(new URL('src/rmt.h', root), 'utf8'))?.[1]));
});

test('the CLI\'s search options and their defaults are the engine\'s fields', async () => {
  const { spawnSync } = await import('node:child_process');
  const help = spawnSync(process.execPath, [new URL('js/cli.js', root).pathname, '--help'], { encoding: 'utf8' }).stdout;
  for (const field of engine.searchFields) {
    const flag = field.name === 'shortlist' ? '--no-shortlist' : `--${field.name.replaceAll('_', '-')} ${field.integer ? 'N' : 'X'}`;
    assert.ok(help.includes(flag), `the usage lists ${flag}`);
    if (field.name !== 'shortlist') {
      const value = engine.defaults[field.option];
      const shown = field.integer || !Number.isInteger(value) ? String(value) : value.toFixed(1); // 1.0 for a real
      assert.ok(help.split('\n').some((line) => line.includes(flag) && (line.includes(`(default ${shown})`) || line.includes(`(default ${shown};`))),
        `the usage gives ${flag}'s default, ${shown}`);
    }
  }
});
