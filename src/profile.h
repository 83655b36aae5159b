// Where a translation's time goes, by operation (tests/bench/profile.js writes
// docs/speed.md from it). Compiled in only by the profiling build (bash
// build.sh profile: -DRMT_PROFILE, one thread); in every other build
// rmt_profile_begin / rmt_profile_end are empty and their arguments unused.
//
// Operations nest (a GEMM's activation quantization runs inside the GEMM, the
// network inside a search step): each one's time is its own, what the
// operations inside it took left out, so the times add up to the whole.
#ifndef RMT_PROFILE_H
#define RMT_PROFILE_H

// Each operation's name is rmt_profile_name's (profile.c), in this order.
enum {
  RMT_OP_SETUP,        // a translation's setup: its memory, the sources, the shortlist's words
  RMT_OP_EMBED,        // embeddings and positions
  RMT_OP_GEMM_QKV,     // attention's q, k and v projections (the decoder's encoder attention: q)
  RMT_OP_GEMM_CROSS_KV,// the decoder's encoder-attention k and v, once a sentence
  RMT_OP_GEMM_OUT,     // attention's output projection
  RMT_OP_GEMM_FFN_UP,  // the feed-forward layer's first product (and ReLU)
  RMT_OP_GEMM_FFN_DOWN,// its second
  RMT_OP_GEMM_SSRU,    // the SSRU's two products
  RMT_OP_GEMM_VOCAB,   // the output (vocabulary) layer, a shortlist's scatter included
  RMT_OP_QUANTIZE,     // integer products' activations quantized by rows
  RMT_OP_ATTENTION,    // attention: scores, softmax, weighted sums of values
  RMT_OP_NORM,         // residual adds and layer norms
  RMT_OP_ACTIVATION,   // swish (ReLU runs in its product)
  RMT_OP_SSRU_CELL,    // the SSRU's gates and cell
  RMT_OP_LOG_SOFTMAX,  // the output's log-softmax and masks
  RMT_OP_SEARCH,       // the search step: top-k, beam and greedy bookkeeping
  RMT_OP_OTHER,        // the rest of the forward passes (their loops between operations)
  RMT_OP_COUNT
};

#ifdef RMT_PROFILE
// Starts operation `op` (an RMT_OP_*), which does `work` (multiply-adds for a
// product or attention, values for the others) on top of its count.
void rmt_profile_begin(int op, long long work);
// Ends the operation begun last.
void rmt_profile_end(void);
#else
static inline void rmt_profile_begin(int op, long long work) { (void)op, (void)work; }
static inline void rmt_profile_end(void) {}
#endif
#endif
