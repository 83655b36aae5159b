// Loops split over threads: a large decoding step's rows (each thread runs
// the decoder for a block of them: transformer.c); matrix products (an int8
// one's input quantized by rows first when it has many; the products of one
// input, such as attention's q, k and v, as one loop over all their weight
// panels: rmt_gemm_parts), attention rows, the residual adds and LayerNorms
// of many rows (the encoder's), the output layer's log-softmax and top-k. Only the threads build
// (dist/residual-mt-threads.wasm: shared memory and atomics, -DRMT_THREADS)
// has more than one thread; in every other build the pool is a single thread,
// rmt_parallel_for a plain call and rmt_gemm_parts the SIMD kernels themselves.
//
// The pool: the thread that calls the engine (thread 0) and n - 1 workers
// that JS starts (js/engine/threads.js), each an instance of the same module over
// the same shared memory, parked in rmt_thread_run. A GEMM large enough to be
// worth waking them is cut into chunks of weight panels that the threads
// take: each chunk reads its own weights and writes its own columns of C, and
// every value is summed in the same order as in one thread, so results are
// bit-identical whatever the thread count.
#ifndef RMT_THREADS_H
#define RMT_THREADS_H
#include <stdint.h>

#include "rmt.h"

// One of several products of the same input (rmt_gemm_parts): C[M,N] =
// A W^T + bias, W packed for the float32 kernel (packed_weight: kernels.h
// rmt_gemm_f32) or, when that is NULL, for an int8 one (packed_weight_i8,
// w_scale, kr: kernels.h rmt_linear_i8) or the 16-bit one (packed_weight_i16,
// w_scale: rmt_gemm_i16_cols), the input of an integer part quantized to
// [-qmax, qmax] (rmt_linear.act_qmax) and stored with act_offset (the
// relaxed kernel then subtracts w_offset_sum: kernels.h); then C *= scale unless scale is 1,
// and C = max(C, 0) if relu, on the columns just computed.
typedef struct {
  float *C;
  const float *packed_weight;
  const int8_t *packed_weight_i8;
  const int16_t *packed_weight_i16;
  const float *w_scale, *bias;
  const int32_t *w_offset_sum;
  int N, kr, qmax, act_offset;
  float scale;
  int relu;
} rmt_gemm_part;
// The products of one input A[M,K] as one loop over all their weight panels
// (attention's q, k and v): one job on the pool instead of one each, and for
// integer parts (all with the same kr and qmax) one quantization of A into Aq / a_scale,
// not one per product. Every value is computed as the kernel computes the
// whole product, on every thread of the pool when the products are large
// enough (see threads.c), and each part's C may lie anywhere (a row of the
// decoder's cache).
void rmt_gemm_parts(const rmt_gemm_part *parts, int n_parts, const float *A, int16_t *Aq, float *a_scale, int M,
                    int K);

// One thread's share of a loop over items 0..n-1: items begin..end-1, on
// thread `thread` (0 is the caller), which indexes per-thread scratch.
typedef void (*rmt_range_fn)(void *ctx, int begin, int end, int thread);
// Runs fn over items 0..n-1 cut into contiguous ranges, one per thread (at
// most max_threads of them: the copies of scratch the caller has), when
// `work` (about the multiply-adds the loop takes) reaches the threshold
// below; otherwise fn(ctx, 0, n, 0) on this thread. Items must be
// independent: each range writes only its own items' outputs. Called from
// inside such a loop (a decoding step's block of rows on each thread:
// transformer.c), it runs all of fn there, on the calling thread, which
// must then be one of the inner loop's max_threads too.
void rmt_parallel_for(int n, rmt_range_fn fn, void *ctx, long long work, int max_threads);
#define RMT_THREADS_ALL 0x7fffffff  // max_threads of a loop without per-thread scratch
// A loop for the workers alone, for work that overlaps thread 0's own (the
// weights' SHA-256 while the model loads from them: sha256.c).
// rmt_parallel_post returns at once; rmt_parallel_join runs on thread 0 what
// no worker has taken (all of it without workers, or before they have
// started) and waits for the rest. Thread 0 posts nothing else in between.
void rmt_parallel_post(int n, rmt_range_fn fn, void *ctx);
void rmt_parallel_join(void);
// How many threads rmt_parallel_for may use (1 in builds without threads).
int rmt_threads_available(void);

// The most threads a pool can have (rmt_threads_prepare), and so the most a
// caller may ask for (JS reads it: rmt_limit): past a few threads the model's
// small products gain nothing, and the forward passes cut a batch into at
// most this many blocks (transformer.c).
#define RMT_THREADS_MAX 16
#endif
