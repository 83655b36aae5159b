// Search parameters and the engine's limits: the one place their names,
// ranges and defaults are defined (JS reads them through these exports).
#include <math.h>

#include "error.h"
#include "json.h"
#include "threads.h"
#include "translation.h"

// Each field of rmt_search_params: its name (the JS option is its camelCase),
// its range, whether it is an integer, and its default.
typedef struct {
  const char *name;
  double min, max, fallback;
  int integer;
} param_spec;

static const param_spec PARAMS[RMT_PARAM_COUNT] = {
    [RMT_PARAM_BEAM] = {"beam", 1, RMT_MAX_BEAM, 5, 1},
    [RMT_PARAM_NBEST] = {"nbest", 1, RMT_MAX_BEAM, 1, 1},
    [RMT_PARAM_MIN_LEN] = {"min_len", 0, RMT_MAX_LEN, 1, 1},
    [RMT_PARAM_MAX_LEN_A] = {"max_len_a", 0, 1000, 1.2, 0},
    [RMT_PARAM_MAX_LEN_B] = {"max_len_b", 0, RMT_MAX_LEN, 10, 1},
    [RMT_PARAM_LENPEN] = {"lenpen", -1000, 1000, 1.0, 0},
    [RMT_PARAM_SHORTLIST] = {"shortlist", 0, 1, 1, 1},
};

RMT_API int rmt_search_params_size(void) { return (int)sizeof(rmt_search_params); }

RMT_API const char *rmt_search_param_name(int field) {
  return field >= 0 && field < RMT_PARAM_COUNT ? PARAMS[field].name : NULL;
}

RMT_API int rmt_search_param_integer(int field) {
  if (field < 0 || field >= RMT_PARAM_COUNT) return rmt_error(RMT_E_INVALID, "unknown search parameter %d", field);
  return PARAMS[field].integer;
}

RMT_API double rmt_search_param_get(const rmt_search_params *p, int field) {
  switch (field) {
    case RMT_PARAM_BEAM: return p->beam;
    case RMT_PARAM_NBEST: return p->nbest;
    case RMT_PARAM_MIN_LEN: return p->min_len;
    case RMT_PARAM_MAX_LEN_A: return p->max_len_a;
    case RMT_PARAM_MAX_LEN_B: return p->max_len_b;
    case RMT_PARAM_LENPEN: return p->lenpen;
    case RMT_PARAM_SHORTLIST: return p->shortlist;
    default: return NAN;
  }
}

static int check_value(int field, double value) {
  const param_spec *spec = &PARAMS[field];
  if (!(value >= spec->min && value <= spec->max) || (spec->integer && value != floor(value))) {
    return rmt_error(RMT_E_LIMIT, "%s must be %s in [%.15g, %.15g], got %.15g", spec->name, spec->integer ? "an integer" : "a number",
                     spec->min, spec->max, value);
  }
  return RMT_OK;
}

RMT_API int rmt_search_param_set(rmt_search_params *p, int field, double value) {
  if (field < 0 || field >= RMT_PARAM_COUNT) return rmt_error(RMT_E_INVALID, "unknown search parameter %d", field);
  int err = check_value(field, value);
  if (err) return err;
  switch (field) {
    case RMT_PARAM_BEAM: p->beam = (int)value; break;
    case RMT_PARAM_NBEST: p->nbest = (int)value; break;
    case RMT_PARAM_MIN_LEN: p->min_len = (int)value; break;
    case RMT_PARAM_MAX_LEN_A: p->max_len_a = value; break;
    case RMT_PARAM_MAX_LEN_B: p->max_len_b = (int)value; break;
    case RMT_PARAM_LENPEN: p->lenpen = value; break;
    case RMT_PARAM_SHORTLIST: p->shortlist = (int)value; break;
  }
  return RMT_OK;
}

RMT_API void rmt_search_params_default(rmt_search_params *params) {
  for (int field = 0; field < RMT_PARAM_COUNT; field++) rmt_search_param_set(params, field, PARAMS[field].fallback);
}

int rmt_search_params_check(const rmt_search_params *p) {
  for (int field = 0; field < RMT_PARAM_COUNT; field++) {
    int err = check_value(field, rmt_search_param_get(p, field));
    if (err) return err;
  }
  if (p->nbest > p->beam) return rmt_error(RMT_E_LIMIT, "nbest must be in [1, beam], got %d (beam %d)", p->nbest, p->beam);
  return RMT_OK;
}

RMT_API const char *rmt_limit_name(int which) {
  static const char *const names[RMT_LIMIT_COUNT] = {
      [RMT_LIMIT_BEAM] = "beam", [RMT_LIMIT_TRANSLATION_BYTES] = "translation_bytes", [RMT_LIMIT_LEN] = "len",
      [RMT_LIMIT_JSON_BYTES] = "json_bytes", [RMT_LIMIT_THREADS] = "threads"};
  return which >= 0 && which < RMT_LIMIT_COUNT ? names[which] : NULL;
}

RMT_API int rmt_limit(int which) {
  switch (which) {
    case RMT_LIMIT_BEAM: return RMT_MAX_BEAM;
    case RMT_LIMIT_TRANSLATION_BYTES: return (int)RMT_MAX_TRANSLATION_BYTES;
    case RMT_LIMIT_LEN: return RMT_MAX_LEN;
    case RMT_LIMIT_JSON_BYTES: return RMT_MAX_JSON_BYTES;
    case RMT_LIMIT_THREADS: return RMT_THREADS_MAX;
    default: return rmt_error(RMT_E_INVALID, "unknown limit %d", which);
  }
}
