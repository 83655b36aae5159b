// The thread pool of threads.h. Thread 0 (the engine's caller) posts a job (a
// loop over items: rmt_parallel_for) by filling a job slot and bumping
// `pool.generation`; workers, parked on that word, wake and take chunks of the
// items (an atomic counter, `pool.claim`) alongside thread 0 until none is
// left; thread 0 then waits until every item is done. It posts a job only
// once the previous one is done. Chunks shrink as the job runs out (a share
// of the items left): few claims while there is much to do, and the threads
// finish within a small chunk of each other.
//
// Waiting: a short spin first (in a decoding step the next GEMM comes within
// microseconds, and waking a sleeping thread costs tens of them), then
// memory.atomic.wait32 (a futex: no CPU used while the engine is idle).
// Loops smaller than parallel_min_macs run on thread 0 alone: for them the
// hand-off would cost about what it saves (batch-1 decoding is mostly such).
//
// Memory: the pool's state is this file's statics, in the shared linear
// memory, so every instance sees the same. Worker stacks and thread-local
// blocks are one arena, allocated by rmt_threads_prepare on thread 0 and
// freed by rmt_threads_stop; workers never allocate (malloc's lock is then
// never contended, and no worker touches errno or the libc state of thread 0).
#include "threads.h"

#include "arena.h"
#include "error.h"
#include "kernels.h"

// Multiply-adds below which a loop stays on one thread (a GEMM's M * N * K). At
// d_model 256: a batch-1 step's projections (1 x 256 x 256) stay, its
// feed-forward layers (1 x 1024 x 256) and output layer (1 x 8000 x 256) split.
// Tests and benchmarks move it (rmt_threads_set_min_macs): 0 splits every
// product, so that tiny test models exercise the threaded path.
static long long parallel_min_macs = 1 << 18;

RMT_API void rmt_threads_set_min_macs(int macs) { parallel_min_macs = macs < 0 ? 0 : macs; }

// The GEMM as a loop over its weight panels (8 output features each): a
// range of panels is a range of columns of C, computed as the whole product
// computes them.
typedef struct {
  float *C;
  const float *A, *packed_weight, *bias;
  int M, N, K;
} gemm_args;

static void gemm_panels(void *ctx, int begin, int end, int thread) {
  const gemm_args *g = ctx;
  (void)thread;
  int n_end = end * RMT_GEMM_NR < g->N ? end * RMT_GEMM_NR : g->N;
  rmt_gemm_f32_4x8_cols__wasmsimd(g->C, g->A, g->packed_weight, g->bias, g->M, g->N, g->K, begin * RMT_GEMM_NR, n_end);
}

void rmt_gemm_f32(float *C, const float *A, const float *packed_weight, const float *bias, int M, int N, int K) {
  gemm_args args = {C, A, packed_weight, bias, M, N, K};
  rmt_parallel_for((N + RMT_GEMM_NR - 1) / RMT_GEMM_NR, gemm_panels, &args, (long long)M * N * K, RMT_THREADS_ALL);
}

// The int8 product the same way: its input quantized first (ranges of rows
// on the threads: each row has its own scale), then ranges of weight panels.
// The 16-bit one likewise.
typedef struct {
  float *C;
  const float *A;
  int16_t *Aq;
  float *a_scale;
  const float *w_scale, *bias;
  const int8_t *packed_weight;
  const int16_t *packed_weight16;  // instead of packed_weight for a 16-bit product
  int kr, qmax, M, N, K;
} gemm_i8_args;

static void quantize_rows(void *ctx, int begin, int end, int thread) {
  const gemm_i8_args *g = ctx;
  (void)thread;
  rmt_quantize_rows_i8(rmt_quantized_row(g->Aq, begin, g->K, g->kr), g->a_scale + begin, g->A + (size_t)begin * g->K,
                       end - begin, g->K, g->kr, g->qmax);
}

static void gemm_i8_panels(void *ctx, int begin, int end, int thread) {
  const gemm_i8_args *g = ctx;
  (void)thread;
  if (g->packed_weight16) {
    rmt_gemm_i16_cols(g->C, g->Aq, g->a_scale, g->packed_weight16, g->w_scale, g->bias, g->M, g->N, g->K, begin,
                      end - begin);
  } else {
    rmt_gemm_i8_cols(g->C, g->Aq, g->a_scale, g->packed_weight, g->kr, g->w_scale, g->bias, g->M, g->N, g->K, begin,
                     end - begin);
  }
}

static void run_gemm_int(gemm_i8_args *args) {
  long long work = (long long)args->M * args->N * args->K;  // both loops split when the product does
  rmt_parallel_for(args->M, quantize_rows, args, work, RMT_THREADS_ALL);
  rmt_parallel_for((args->N + RMT_GEMM_NR - 1) / RMT_GEMM_NR, gemm_i8_panels, args, work, RMT_THREADS_ALL);
}

void rmt_gemm_i8(float *C, const float *A, int16_t *Aq, float *a_scale, const int8_t *packed_weight, int kr, int qmax,
                 const float *w_scale, const float *bias, int M, int N, int K) {
  gemm_i8_args args = {C, A, Aq, a_scale, w_scale, bias, packed_weight, NULL, kr, qmax, M, N, K};
  run_gemm_int(&args);
}

void rmt_gemm_i16(float *C, const float *A, int16_t *Aq, float *a_scale, const int16_t *packed_weight,
                  const float *w_scale, const float *bias, int M, int N, int K) {
  gemm_i8_args args = {C, A, Aq, a_scale, w_scale, bias, NULL, packed_weight, RMT_GEMM_I8_KR_DOT16, rmt_qmax_w16(K),
                       M, N, K};
  run_gemm_int(&args);
}

#ifdef RMT_THREADS
#include <stdatomic.h>
#include <stdint.h>

#define WORKER_STACK_BYTES (64 * 1024)  // a share of a GEMM or of attention needs a few hundred bytes
#define SPIN_ROUNDS (1 << 18)           // atomic loads before sleeping: a few hundred microseconds

// A chunk is 1 / (CHUNK_SHARE * threads) of the items not yet taken, and at
// least 1 / (MAX_CHUNKS_PER_THREAD * threads) of the job's (at least 1 item).
#define CHUNK_SHARE 2
#define MAX_CHUNKS_PER_THREAD 128

typedef struct {
  rmt_range_fn fn;
  void *ctx;
  int n, n_threads, min_chunk;  // items, threads sharing them, the smallest chunk
  int max_threads;              // threads with scratch for this job
} range_job;

static struct {
  int n_threads;   // thread 0 and the workers
  int can_block;   // whether thread 0 may sleep in memory.atomic.wait32
  rmt_arena blocks; // per worker: its stack, then its thread-local block
  size_t block_bytes, tls_offset;
  // Job g is jobs[g & 1], written by thread 0 before it publishes g; g's slot
  // is written again only for g + 2, once g and g + 1 are done, so a worker
  // that is late for g may read a changing slot only once claim has moved on.
  range_job jobs[2];
  _Atomic int generation;      // the latest job's number: workers wait for it to change
  _Atomic uint64_t claim;      // (generation << 32) | the next item to take
  _Atomic int done;            // items of the current job finished
  _Atomic int sleepers;        // workers in (or about to enter) memory.atomic.wait32 on generation
  _Atomic int running;         // workers inside rmt_thread_run
  _Atomic int stop;            // set by rmt_threads_stop
} pool = {.n_threads = 1};

// Waits until *word differs from `value` and returns its new value. A
// thread that may not block (a browser's main thread) only spins.
static int wait_for_change(_Atomic int *word, int value, int can_block, _Atomic int *sleepers) {
  for (int i = 0; i < SPIN_ROUNDS; i++) {
    int now = atomic_load(word);
    if (now != value) return now;
  }
  for (;;) {
    if (sleepers) atomic_fetch_add(sleepers, 1);
    int now = atomic_load(word);
    // wait32 returns at once if *word is no longer `value` (checked atomically with going to sleep).
    if (now == value && can_block) __builtin_wasm_memory_atomic_wait32((int *)word, value, -1);
    if (sleepers) atomic_fetch_sub(sleepers, 1);
    if (now != value) return now;
    now = atomic_load(word);
    if (now != value) return now;
  }
}

// Items a chunk takes when `left` of the job's are not yet taken.
static int chunk_size(const range_job *job, int left) {
  int size = left / (CHUNK_SHARE * job->n_threads);
  if (size < job->min_chunk) size = job->min_chunk;
  return size < left ? size : left;
}

// Takes chunks of job `gen` and runs them until none is left (or the job is
// over): every thread does, thread 0 included. Chunks are taken, not dealt,
// so a worker that is asleep or descheduled holds up only a chunk it has
// taken, and thread 0 takes the rest: a busy machine is never much slower
// than one thread.
static void work_on(int gen, int thread) {
  range_job job = pool.jobs[gen & 1];  // g's own whenever claim below still holds g
  atomic_thread_fence(memory_order_seq_cst);  // the copy comes before claim is read
  if (thread >= job.max_threads) return;  // no scratch of its own for this job
  uint64_t word = atomic_load(&pool.claim);
  for (;;) {
    int begin = (int)(uint32_t)word;
    if ((int)(word >> 32) != gen || begin >= job.n) return;
    int size = chunk_size(&job, job.n - begin);
    if (!atomic_compare_exchange_weak(&pool.claim, &word, word + (uint64_t)size)) continue;  // word reloaded
    job.fn(job.ctx, begin, begin + size, thread);
    if (atomic_fetch_add(&pool.done, size) + size == job.n) __builtin_wasm_memory_atomic_notify((int *)&pool.done, 1);
    word = atomic_load(&pool.claim);
  }
}

void rmt_parallel_for(int n, rmt_range_fn fn, void *ctx, long long work, int max_threads) {
  int n_threads = pool.n_threads < max_threads ? pool.n_threads : max_threads;
  if (n_threads <= 1 || n <= 1 || work < parallel_min_macs) {
    if (n > 0) fn(ctx, 0, n, 0);
    return;
  }
  int gen = atomic_load(&pool.generation) + 1;
  int min_chunk = n / (MAX_CHUNKS_PER_THREAD * n_threads);
  pool.jobs[gen & 1] = (range_job){fn, ctx, n, n_threads, min_chunk > 1 ? min_chunk : 1, max_threads};
  atomic_store(&pool.done, 0);
  atomic_store(&pool.claim, (uint64_t)(uint32_t)gen << 32);
  atomic_store(&pool.generation, gen);  // publishes the job (sequentially consistent)
  if (atomic_load(&pool.sleepers) > 0) __builtin_wasm_memory_atomic_notify((int *)&pool.generation, -1u);
  work_on(gen, 0);
  for (int done; (done = atomic_load(&pool.done)) != n;) wait_for_change(&pool.done, done, pool.can_block, NULL);
}

int rmt_threads_available(void) { return pool.n_threads; }

extern void __wasm_init_tls(void *block);  // made by wasm-ld for shared memory

// Two hooks of Emscripten's threaded libc that its JS glue would provide
// (this build has none). The first, called by libc's constructor, records
// thread 0 as the main thread, so that errno and pthread_self work there
// (workers never use them). The second belongs to pthread cancellation and
// blocking on a browser's main thread, neither of which happens here.
void _emscripten_thread_init(void *thread, int is_main, int is_runtime, int can_block, int start_profiling);
void __emscripten_init_main_thread_js(void *thread) { _emscripten_thread_init(thread, 1, 1, 0, 0); }
void emscripten_unwind_to_js_event_loop(void) {}

RMT_API int rmt_threads_prepare(int n, int can_block) {
  if (n < 1) return rmt_error(RMT_E_INVALID, "threads must be at least 1, got %d", n);
  if (pool.n_threads != 1 || atomic_load(&pool.running)) return rmt_error(RMT_E_LIMIT, "the thread pool is already running");
  pool.can_block = can_block;
  if (n == 1) return RMT_OK;
  size_t tls_bytes = rmt_arena_bytes(__builtin_wasm_tls_size(), 1);
  pool.tls_offset = WORKER_STACK_BYTES;
  pool.block_bytes = rmt_size_add(WORKER_STACK_BYTES, tls_bytes);
  int err = rmt_arena_init(&pool.blocks, rmt_size_mul(pool.block_bytes, (size_t)(n - 1)));
  if (err) return err;
  (void)rmt_arena_alloc(&pool.blocks, pool.blocks.size);  // all of it: rmt_thread_stack_top carves it
  atomic_store(&pool.stop, 0);
  pool.n_threads = n;
  return RMT_OK;
}

// Worker `index`'s block: stack first (it grows down from the TLS block's start).
static unsigned char *worker_block(int index) {
  unsigned char *base = pool.blocks.base + (RMT_ALIGN - (size_t)pool.blocks.base % RMT_ALIGN) % RMT_ALIGN;
  return base + (size_t)(index - 1) * pool.block_bytes;
}

RMT_API void *rmt_thread_stack_top(int index) {
  if (index < 1 || index >= pool.n_threads) return NULL;
  return worker_block(index) + pool.tls_offset;
}

RMT_API void rmt_thread_run(int index) {
  if (index < 1 || index >= pool.n_threads) return;
  __wasm_init_tls(worker_block(index) + pool.tls_offset);
  atomic_fetch_add(&pool.running, 1);
  // Jobs are numbered from 1: starting from 0, a worker sees the latest job
  // (one it was too late for is done by then: thread 0 took its chunks).
  int seen = 0;
  for (;;) {
    seen = wait_for_change(&pool.generation, seen, 1, &pool.sleepers);
    if (atomic_load(&pool.stop)) break;
    work_on(seen, index);
  }
  if (atomic_fetch_sub(&pool.running, 1) == 1) __builtin_wasm_memory_atomic_notify((int *)&pool.running, 1);
}

RMT_API void rmt_threads_stop(void) {
  if (pool.n_threads == 1) return;
  atomic_store(&pool.stop, 1);
  atomic_fetch_add(&pool.generation, 1);
  __builtin_wasm_memory_atomic_notify((int *)&pool.generation, -1u);
  // Workers that never started (their instance failed) are not waited for.
  for (int left; (left = atomic_load(&pool.running)) != 0;) wait_for_change(&pool.running, left, pool.can_block, NULL);
  rmt_arena_free(&pool.blocks);
  pool.n_threads = 1;
}

RMT_API int rmt_threads_count(void) { return pool.n_threads; }
RMT_API int rmt_threads_running(void) { return atomic_load(&pool.running); }

#else  // one thread: no pool

void rmt_parallel_for(int n, rmt_range_fn fn, void *ctx, long long work, int max_threads) {
  (void)work, (void)max_threads, (void)parallel_min_macs;
  if (n > 0) fn(ctx, 0, n, 0);
}

int rmt_threads_available(void) { return 1; }

RMT_API int rmt_threads_prepare(int n, int can_block) {
  (void)can_block;
  if (n < 1) return rmt_error(RMT_E_INVALID, "threads must be at least 1, got %d", n);
  if (n > 1) return rmt_error(RMT_E_LIMIT, "this build of the engine has no threads (dist/residual-mt-threads.wasm has)");
  return RMT_OK;
}

RMT_API void *rmt_thread_stack_top(int index) { (void)index; return NULL; }
RMT_API void rmt_thread_run(int index) { (void)index; }
RMT_API void rmt_threads_stop(void) {}
RMT_API int rmt_threads_count(void) { return 1; }
RMT_API int rmt_threads_running(void) { return 0; }
#endif
