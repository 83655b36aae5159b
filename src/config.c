// config.json -> rmt_config, with every value checked.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "model.h"

typedef struct {
  const char *key;
  int *value;
  int required;
  int min, max;
  int nullable;  // null stands for "none" and gives -1
} int_field;

typedef struct {
  const char *key;
  float *value;
} float_field;

static int parse_ints(const rmt_json *json, const int_field *fields, int n) {
  for (int i = 0; i < n; i++) {
    int tok = rmt_json_find(json, 0, fields[i].key);
    if (tok < 0) {
      if (fields[i].required) return rmt_error(RMT_E_FORMAT, "config.json: missing \"%s\"", fields[i].key);
      continue;
    }
    if (fields[i].nullable && rmt_json_equals(json, tok, "null")) {
      *fields[i].value = -1;
      continue;
    }
    uint64_t v;
    if (rmt_json_uint(json, tok, (uint64_t)fields[i].max, &v) || v < (uint64_t)fields[i].min) {
      return rmt_error(RMT_E_FORMAT, "config.json: \"%s\" must be an integer in [%d, %d]", fields[i].key,
                       fields[i].min, fields[i].max);
    }
    *fields[i].value = (int)v;
  }
  return RMT_OK;
}

static int parse_floats(const rmt_json *json, const float_field *fields, int n) {
  for (int i = 0; i < n; i++) {
    int tok = rmt_json_find(json, 0, fields[i].key);
    if (tok < 0) continue;
    double v;
    if (rmt_json_number(json, tok, &v) || !isfinite(v)) {
      return rmt_error(RMT_E_FORMAT, "config.json: \"%s\" must be a finite number", fields[i].key);
    }
    *fields[i].value = (float)v;
  }
  return RMT_OK;
}

// A string key with a fixed set of values: *value becomes the index of the
// one given (left as it is when the key is absent).
static int parse_choice(const rmt_json *json, const char *key, const char *const *names, int n, int *value) {
  int tok = rmt_json_find(json, 0, key);
  if (tok < 0) return RMT_OK;
  for (int i = 0; i < n; i++) {
    if (rmt_json_equals(json, tok, names[i]) && json->tokens[tok].type == JSMN_STRING) {
      *value = i;
      return RMT_OK;
    }
  }
  char list[128] = "";
  for (int i = 0; i < n; i++) {
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s\"%s\"", i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
  }
  return rmt_error(RMT_E_FORMAT, "config.json: unsupported \"%s\" (expected %s)", key, list);
}

static int parse_bool(const rmt_json *json, const char *key, int *value) {
  int tok = rmt_json_find(json, 0, key);
  if (tok < 0) return RMT_OK;
  if (rmt_json_equals(json, tok, "true")) *value = 1;
  else if (rmt_json_equals(json, tok, "false")) *value = 0;
  else return rmt_error(RMT_E_FORMAT, "config.json: \"%s\" must be true or false", key);
  return RMT_OK;
}

static int parse_languages(const rmt_json *json, rmt_config *config) {
  int langs = rmt_json_find(json, 0, "languages");
  int tokens = langs >= 0 ? rmt_json_find(json, langs, "target_lang_tokens") : -1;
  if (tokens < 0) return RMT_OK;
  if (json->tokens[tokens].type != JSMN_OBJECT || json->tokens[tokens].size > RMT_MAX_LANGS) {
    return rmt_error(RMT_E_FORMAT, "config.json: languages.target_lang_tokens must be an object of at most %d entries",
                     RMT_MAX_LANGS);
  }
  int i = tokens + 1;
  for (int k = 0; k < json->tokens[tokens].size; k++, i = rmt_json_skip(json, i + 1)) {
    uint64_t id;
    if (rmt_json_string(json, i, config->target_lang_codes[k], sizeof config->target_lang_codes[k]) ||
        !config->target_lang_codes[k][0] || rmt_json_uint(json, i + 1, (uint64_t)config->vocab_size - 1, &id)) {
      return rmt_error(RMT_E_FORMAT, "config.json: bad entry in languages.target_lang_tokens (a language code and "
                       "an id below vocab_size)");
    }
    // A language token must be an ordinary id of its own: it steers the decoder.
    for (int j = 0; j < k; j++) {
      if (config->target_lang_ids[j] == (int)id) {
        return rmt_error(RMT_E_FORMAT, "config.json: languages.target_lang_tokens: \"%s\" and \"%s\" share id %d",
                         config->target_lang_codes[j], config->target_lang_codes[k], (int)id);
      }
    }
    if ((int)id == config->bos_id || (int)id == config->pad_id || (int)id == config->eos_id || (int)id == config->unk_id) {
      return rmt_error(RMT_E_FORMAT, "config.json: languages.target_lang_tokens: \"%s\" uses special id %d",
                       config->target_lang_codes[k], (int)id);
    }
    config->target_lang_ids[k] = (int)id;
    config->n_target_langs = k + 1;
  }
  return RMT_OK;
}

// What a config that does not say otherwise has (models/residual_mt/reference.py's defaults).
static void set_defaults(rmt_config *config) {
  config->bos_id = 0, config->pad_id = 1, config->eos_id = 2, config->unk_id = 3;
  config->max_positions = 256;
  config->ln_eps = 1e-5f, config->final_ln_eps = 1e-7f;
  config->res_scale = config->enc_alpha = config->dec_alpha = 1.0f;
  config->share_embeddings = 1;
  config->shortlist_first = -1;
}

static int parse_numbers(const rmt_json *json, rmt_config *config) {
  const int_field ints[] = {
      {"d_model", &config->d_model, 1, 1, 1 << 16, 0},
      {"ffn_dim", &config->ffn_dim, 1, 1, 1 << 18, 0},
      {"n_heads", &config->n_heads, 1, 1, 1024, 0},
      {"encoder_layers", &config->encoder_layers, 1, 1, 256, 0},
      {"decoder_layers", &config->decoder_layers, 1, 1, 256, 0},
      {"vocab_size", &config->vocab_size, 1, 4, 1 << 22, 0},
      {"max_positions", &config->max_positions, 0, 2, 1 << 16, 0},
      {"bos_id", &config->bos_id, 0, 0, 1 << 22, 1},
      {"pad_id", &config->pad_id, 0, 0, 1 << 22, 1},
      {"eos_id", &config->eos_id, 0, 0, 1 << 22, 0},
      {"unk_id", &config->unk_id, 0, 0, 1 << 22, 0},
      {"shortlist_first", &config->shortlist_first, 0, 0, 1 << 22, 1},
  };
  const float_field floats[] = {
      {"ln_eps", &config->ln_eps},       {"final_ln_eps", &config->final_ln_eps},
      {"res_scale", &config->res_scale}, {"enc_alpha", &config->enc_alpha},
      {"dec_alpha", &config->dec_alpha},
  };
  int err = parse_ints(json, ints, sizeof ints / sizeof ints[0]);
  return err ? err : parse_floats(json, floats, sizeof floats / sizeof floats[0]);
}

static int parse_style(const rmt_json *json, rmt_config *config) {
  int tok = rmt_json_find(json, 0, "format");
  if (tok >= 0 && !rmt_json_equals(json, tok, "residual-mt/1")) {
    return rmt_error(RMT_E_FORMAT, "config.json: unsupported \"format\" (expected \"residual-mt/1\")");
  }
  tok = rmt_json_find(json, 0, "style");
  if (tok < 0) return rmt_error(RMT_E_FORMAT, "config.json: missing \"style\"");
  if (rmt_json_equals(json, tok, "post")) config->style = RMT_STYLE_POST;
  else if (rmt_json_equals(json, tok, "pre")) config->style = RMT_STYLE_PRE;
  else if (rmt_json_equals(json, tok, "residual")) config->style = RMT_STYLE_RESIDUAL;
  else return rmt_error(RMT_E_FORMAT, "config.json: \"style\" must be \"post\", \"pre\" or \"residual\"");
  return RMT_OK;
}

// The architecture's named choices (activation, positions, decoder, search, output layer).
static int parse_choices(const rmt_json *json, rmt_config *config) {
  static const char *const activations[] = {"relu", "swish"}, *const positions[] = {"fairseq", "marian"},
                           *const starts[] = {"eos", "zeros"}, *const selfs[] = {"attention", "ssru"},
                           *const searches[] = {"fairseq", "marian"}, *const output_layers[] = {"float", "int16"};
  int activation = RMT_ACT_RELU, marian_positions = 0, search = RMT_SEARCH_FAIRSEQ, err;
  if ((err = parse_choice(json, "activation", activations, 2, &activation)) ||
      (err = parse_choice(json, "positions", positions, 2, &marian_positions)) ||
      (err = parse_choice(json, "decoder_start", starts, 2, &config->decoder_start_zero)) ||
      (err = parse_choice(json, "decoder_self", selfs, 2, &config->ssru)) ||
      (err = parse_choice(json, "search", searches, 2, &search)) ||
      (err = parse_bool(json, "share_embeddings", &config->share_embeddings)) ||
      (err = parse_bool(json, "output_bias", &config->output_bias)) ||
      (err = parse_choice(json, "output_layer", output_layers, 2, &config->output_int16))) {
    return err;
  }
  config->activation = (rmt_activation)activation;
  config->search = (rmt_search_kind)search;
  if (!marian_positions && config->pad_id < 0) {
    return rmt_error(RMT_E_FORMAT, "config.json: fairseq positions count from pad_id + 1: \"pad_id\" is required");
  }
  config->position_offset = marian_positions ? 0 : config->pad_id + 1;
  return RMT_OK;
}

// Shapes and ids that parse one by one but not together.
static int check_consistent(rmt_config *config) {
  if (config->d_model % config->n_heads) {
    return rmt_error(RMT_E_FORMAT, "config.json: d_model %d is not divisible by n_heads %d", config->d_model,
                     config->n_heads);
  }
  if (config->d_model < 4) {  // the sinusoidal table divides by d_model / 2 - 1
    return rmt_error(RMT_E_FORMAT, "config.json: d_model must be at least 4");
  }
  config->head_dim = config->d_model / config->n_heads;
  int ids[] = {config->bos_id, config->pad_id, config->eos_id, config->unk_id};
  for (int i = 0; i < 4; i++) {
    if (ids[i] < 0) continue;  // none
    if (ids[i] >= config->vocab_size) {
      return rmt_error(RMT_E_FORMAT, "config.json: special token id %d is outside the vocabulary (%d)", ids[i],
                       config->vocab_size);
    }
    // Search tells these apart by id (pad is masked, eos ends a hypothesis):
    // pad_id == eos_id would mask every ending.
    for (int j = 0; j < i; j++) {
      if (ids[i] == ids[j]) {
        return rmt_error(RMT_E_FORMAT, "config.json: special token ids must differ (bos_id %d, pad_id %d, eos_id %d, "
                         "unk_id %d)", ids[0], ids[1], ids[2], ids[3]);
      }
    }
  }
  if (!(config->ln_eps > 0) || !(config->final_ln_eps > 0)) {
    return rmt_error(RMT_E_FORMAT, "config.json: layer norm eps must be positive");
  }
  return RMT_OK;
}

int rmt_config_parse(rmt_config *config, const char *text, size_t len) {
  memset(config, 0, sizeof *config);
  if (len > RMT_MAX_JSON_BYTES) {
    return rmt_error(RMT_E_LIMIT, "config.json has %zu bytes, more than a config may have (%d): not a model's config", len,
                     RMT_MAX_JSON_BYTES);
  }
  rmt_json json;
  int err = rmt_json_parse(&json, text, len, "config.json");
  if (err) return err;
  set_defaults(config);
  if (!(err = parse_numbers(&json, config)) && !(err = parse_style(&json, config)) &&
      !(err = parse_choices(&json, config)) && !(err = check_consistent(config))) {
    err = parse_languages(&json, config);
  }
  rmt_json_free(&json);
  return err;
}
