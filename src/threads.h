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
// that JS starts (js/threads.js), each an instance of the same module over
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

// ---- For JS (js/threads.js), in this order:
// 1. On thread 0: sizes the pool for n threads (1 = no workers), allocating
//    each worker's stack and thread-local block. can_block: whether thread 0
//    may sleep in memory.atomic.wait (not a browser's main thread: it then
//    spins while workers finish). RMT_E_LIMIT when n > 1 in a build without
//    threads or while a pool runs; RMT_E_INVALID when n < 1.
RMT_API int rmt_threads_prepare(int n, int can_block);
// 2. Worker `index` (1..n-1) sets its instance's __stack_pointer to this (the
//    top of its own stack) before any other call, then calls rmt_thread_run.
RMT_API void *rmt_thread_stack_top(int index);
// 3. A worker's life: set up its thread-local block, then wait for jobs and
//    do its share of each, until rmt_threads_stop. Returns then.
RMT_API void rmt_thread_run(int index);
// 4. On thread 0: ends the workers' loops, waits until each has left it, and
//    frees their stacks; the pool is a single thread again.
RMT_API void rmt_threads_stop(void);
// A worker that failed (its instance trapped: js/pool-worker.js; or it ended:
// js/threads.js): thread 0 stops waiting for it, and a call waiting for its
// part of a job leaves by a trap with the reason as its last error (threads.c).
RMT_API void rmt_thread_lost(int index);
// The first lost worker's index, 0 while none is: js/wasm.js asks after a trap.
RMT_API int rmt_threads_lost(void);
// How many threads share the work (1 until rmt_threads_prepare), and how
// many workers are inside rmt_thread_run (JS waits for all before the first job).
RMT_API int rmt_threads_count(void);
RMT_API int rmt_threads_running(void);
// The size (M * N * K multiply-adds) from which a GEMM is split over the
// threads; smaller ones run on thread 0 alone. For tests (0: split them all)
// and benchmarks; the default suits batch-1 decoding (threads.c).
RMT_API void rmt_threads_set_min_macs(int macs);
// For tests: how long thread 0 waits for a chunk while none finishes before
// it declares the thread holding it lost (default 10 s), and a worker that
// fails in its `chunks`-th chunk from now: its instance traps
// (RMT_THREAD_TRAP), or it never finishes the chunk (RMT_THREAD_HANG: as a
// worker terminated from outside, which reports nothing).
#define RMT_THREAD_TRAP 1
#define RMT_THREAD_HANG 2
RMT_API void rmt_threads_set_stall_ms(int ms);
RMT_API void rmt_threads_fail_after(int index, int chunks, int how);
// The most threads a pool can have (rmt_threads_prepare), and so the most a
// caller may ask for (JS reads it: rmt_limit): past a few threads the model's
// small products gain nothing, and the forward passes cut a batch into at
// most this many blocks (transformer.c).
#define RMT_THREADS_MAX 16
#endif
