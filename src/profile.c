// The profiling build's timers (profile.h): a stack of the operations under
// way, each one's own time summed by operation. Nothing here in other builds.
#ifdef RMT_PROFILE
#include "profile.h"

#include "rmt.h"

// Milliseconds of a monotonic clock (js/engine/wasm.js: performance.now()).
__attribute__((import_module("env"), import_name("rmt_now_ms"))) double rmt_now_ms(void);

#define DEPTH_MAX 8  // nesting: a step, the network's pass, a product, its quantization

static const char *const names[RMT_OP_COUNT] = {
    "setup", "embedding", "QKV projections", "encoder-attention K/V", "attention output projection",
    "FFN up", "FFN down", "SSRU products", "output layer", "activation quantization", "attention (softmax included)",
    "residual adds and layer norms", "swish", "SSRU cell", "log-softmax", "search step", "other",
};

static struct {
  double ms[RMT_OP_COUNT], work[RMT_OP_COUNT];
  int calls[RMT_OP_COUNT];
  int depth, op[DEPTH_MAX];
  double start[DEPTH_MAX], inner[DEPTH_MAX];  // when each began; the time of those inside it
} prof;

void rmt_profile_begin(int op, long long work) {
  prof.work[op] += (double)work;
  prof.calls[op]++;
  if (prof.depth < DEPTH_MAX) {
    prof.op[prof.depth] = op;
    prof.inner[prof.depth] = 0;
    prof.start[prof.depth] = rmt_now_ms();
  }
  prof.depth++;
}

void rmt_profile_end(void) {
  if (--prof.depth >= DEPTH_MAX) return;
  double elapsed = rmt_now_ms() - prof.start[prof.depth];
  prof.ms[prof.op[prof.depth]] += elapsed - prof.inner[prof.depth];
  if (prof.depth > 0) prof.inner[prof.depth - 1] += elapsed;
}

// ---- For tests/bench/profile.js: the operations, and each one's figures since the last reset.
RMT_API int rmt_profile_ops(void) { return RMT_OP_COUNT; }
RMT_API const char *rmt_profile_name(int op) { return op >= 0 && op < RMT_OP_COUNT ? names[op] : ""; }
RMT_API double rmt_profile_ms(int op) { return op >= 0 && op < RMT_OP_COUNT ? prof.ms[op] : 0; }
RMT_API double rmt_profile_work(int op) { return op >= 0 && op < RMT_OP_COUNT ? prof.work[op] : 0; }
RMT_API int rmt_profile_calls(int op) { return op >= 0 && op < RMT_OP_COUNT ? prof.calls[op] : 0; }
RMT_API void rmt_profile_reset(void) {
  for (int i = 0; i < RMT_OP_COUNT; i++) prof.ms[i] = prof.work[i] = 0, prof.calls[i] = 0;
}
#endif
