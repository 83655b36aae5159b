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
// A lost thread: a worker whose instance trapped (js/pool-worker.js reports
// it: rmt_thread_lost) or ended (js/engine/threads.js, on its exit event), or one
// holding a chunk of a job while no chunk of it finishes for stall_ms
// (thread 0 declares it: nothing else can, the thread the runtime would tell
// being the one that waits). From then on no job is posted: every loop runs on
// thread 0. A job still waiting for a lost thread's chunk cannot be finished
// here (the chunk may have written part of its items, and chunks are not
// safe to run twice: loops update rows in place), so thread 0 leaves the
// call by a trap (unreachable) with the reason as its last error; js/engine/wasm.js
// turns it into an error, restores the stack and stops the pool, and the
// engine goes on on one thread.
//
// Memory: the pool's state is this file's statics, in the shared linear
// memory, so every instance sees the same. Worker stacks and thread-local
// blocks are one arena, allocated by rmt_threads_prepare on thread 0 and
// freed by rmt_threads_stop; workers never allocate (malloc's lock is then
// never contended, and no worker touches errno or the libc state of thread 0).
#include "threads.h"

#include "arena.h"
#include "error.h"
#include "ops.h"
#include "profile.h"

// Multiply-adds below which a loop stays on one thread (a GEMM's M * N * K). At
// d_model 256: a batch-1 step's projections (1 x 256 x 256) stay, its
// feed-forward layers (1 x 1024 x 256) and output layer (1 x 8000 x 256) split.
// Tests and benchmarks move it (rmt_threads_set_min_macs): 0 splits every
// product, so that tiny test models exercise the threaded path.
static long long parallel_min_macs = 1 << 18;

RMT_API void rmt_threads_set_min_macs(int macs) { parallel_min_macs = macs < 0 ? 0 : macs; }

// Products of one input as a loop over their weight panels (8 output
// features each), the parts' panels one after another: a range of panels is
// ranges of columns of the parts' C, each computed as the whole product
// computes it, and its epilogue (scale, ReLU) applied to those columns only.
typedef struct {
  const rmt_gemm_part *parts;
  int n_parts;
  const float *A;
  int16_t *Aq;
  float *a_scale;
  int kr, qmax, offset, M, K;  // the integer parts' quantization (kr 0: none)
} gemm_job;

static void part_panels(const gemm_job *g, const rmt_gemm_part *p, int first, int end) {
  int n_begin = first * RMT_GEMM_NR, n_end = end * RMT_GEMM_NR < p->N ? end * RMT_GEMM_NR : p->N;
  if (p->packed_weight) {
    rmt_gemm_f32_cols(p->C, g->A, p->packed_weight, p->bias, g->M, p->N, g->K, n_begin, n_end);
  } else if (p->packed_weight_i16) {
    rmt_gemm_i16_cols(p->C, g->Aq, g->a_scale, p->packed_weight_i16, p->w_scale, p->bias, g->M, p->N, g->K, first,
                      end - first);
  } else {
    rmt_gemm_i8_cols(p->C, g->Aq, g->a_scale, p->packed_weight_i8, p->kr, p->w_scale, p->w_offset_sum, p->bias, g->M,
                     p->N, g->K, first, end - first);
  }
  if (p->scale == 1.0f && !p->relu) return;
  for (int m = 0; m < g->M; m++) {
    float *row = p->C + (size_t)m * p->N + n_begin;
    if (p->scale != 1.0f) rmt_scale_f32(row, p->scale, (size_t)(n_end - n_begin));
    if (p->relu) rmt_relu_f32(row, (size_t)(n_end - n_begin));
  }
}

static void gemm_panels(void *ctx, int begin, int end, int thread) {
  const gemm_job *g = ctx;
  (void)thread;
  int offset = 0;  // the first panel of part i in the job's numbering
  for (int i = 0; i < g->n_parts && offset < end; i++) {
    int panels = rmt_gemm_panels(g->parts[i].N);
    int from = begin > offset ? begin - offset : 0, to = end - offset < panels ? end - offset : panels;
    if (from < to) part_panels(g, &g->parts[i], from, to);
    offset += panels;
  }
}

// The int8 parts' input quantized by ranges of rows (each row has its own scale).
static void quantize_rows(void *ctx, int begin, int end, int thread) {
  const gemm_job *g = ctx;
  (void)thread;
  rmt_quantize_rows_i8(rmt_quantized_row(g->Aq, begin, g->K, g->kr), g->a_scale + begin, g->A + (size_t)begin * g->K,
                       end - begin, g->K, g->kr, g->qmax, g->offset);
}

void rmt_gemm_parts(const rmt_gemm_part *parts, int n_parts, const float *A, int16_t *Aq, float *a_scale, int M,
                    int K) {
  gemm_job job = {parts, n_parts, A, Aq, a_scale, 0, 0, 0, M, K};
  int panels = 0;
  long long work = 0;
  for (int i = 0; i < n_parts; i++) {
    const rmt_gemm_part *p = &parts[i];
    if (!p->packed_weight && job.kr && (p->kr != job.kr || p->qmax != job.qmax || p->act_offset != job.offset)) {
      // another quantization: one job each
      for (int j = 0; j < n_parts; j++) rmt_gemm_parts(&parts[j], 1, A, Aq, a_scale, M, K);
      return;
    }
    if (!p->packed_weight) job.kr = p->kr, job.qmax = p->qmax, job.offset = p->act_offset;
    panels += rmt_gemm_panels(p->N);
    work += (long long)M * p->N * K;
  }
  // The quantization by its own size (about 8 operations a value, as many as
  // 8 multiply-adds take): a decoding step's few rows stay on thread 0, where
  // a job of their own would cost about what the split saves.
  if (job.kr) {
    rmt_profile_begin(RMT_OP_QUANTIZE, (long long)M * K);
    rmt_parallel_for(M, quantize_rows, &job, 8LL * M * K, RMT_THREADS_ALL);
    rmt_profile_end();
  }
  rmt_parallel_for(panels, gemm_panels, &job, work, RMT_THREADS_ALL);
}

// The loop rmt_parallel_post posted to the workers (gen, 0: none), or the one
// it left for rmt_parallel_join to run on thread 0 (fn: no workers).
static struct {
  int gen, n;
  rmt_range_fn fn;
  void *ctx;
} posted;

#ifdef RMT_THREADS
#include <stdatomic.h>
#include <stdint.h>

#define WORKER_STACK_BYTES (64 * 1024)  // a share of a GEMM or of attention needs a few hundred bytes
#define SPIN_ROUNDS (1 << 18)           // atomic loads before sleeping: a few hundred microseconds
#define WAIT_SLICE_NS 20000000LL        // a wait sleeps at most this long before looking for lost threads
// No chunk of a job finishing for this long while thread 0 waits: the thread
// holding one is lost. Far above any chunk (blocks are balanced, so thread 0
// waits little after its own); tests lower it (rmt_threads_set_stall_ms).
static int stall_ms = 10000;

// Milliseconds of a monotonic clock (js/engine/wasm.js: performance.now()).
__attribute__((import_module("env"), import_name("rmt_now_ms"))) double rmt_now_ms(void);

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
  _Atomic int lost;            // the first lost worker's index (0: none); then no job is posted
  _Atomic int lost_why;        // LOST_FAILED or LOST_STALLED
  _Atomic int inside[RMT_THREADS_MAX];   // worker i is inside rmt_thread_run
  _Atomic int gone[RMT_THREADS_MAX];     // worker i is lost (its own report, its exit, or a stall)
  int fail_after[RMT_THREADS_MAX];       // tests: chunks before worker i fails (0: never)
  int fail_how[RMT_THREADS_MAX];         // tests: RMT_THREAD_TRAP or RMT_THREAD_HANG
} pool = {.n_threads = 1};

// Waits until *word differs from `value` and returns its new value. A
// thread that may not block (a browser's main thread) only spins. Workers
// wait here for jobs, unbounded: an idle pool takes no CPU.
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

// Waits at most about WAIT_SLICE_NS for *word to differ from `value` (or for
// a notify: rmt_thread_lost wakes thread 0 so); returns its value then.
static int wait_a_while(_Atomic int *word, int value, int can_block) {
  for (int i = 0; i < SPIN_ROUNDS; i++) {
    int now = atomic_load(word);
    if (now != value) return now;
  }
  if (can_block) __builtin_wasm_memory_atomic_wait32((int *)word, value, WAIT_SLICE_NS);
  return atomic_load(word);
}

// Why a worker was lost (pool.lost_why), in thread 0's error when it leaves a call.
enum { LOST_FAILED = 1, LOST_STALLED = 2 };
static const char *const LOST_WHY[] = {"", "failed (its instance trapped or ended)",
                                       "stopped responding in the middle of a job"};

// Marks worker `index` lost (see the top of this file) and wakes thread 0.
// Any thread may call it; it writes no error (that is thread-local): join does.
static void lose(int index, int why) {
  int none = 0;
  atomic_store(&pool.gone[index], 1);
  if (atomic_compare_exchange_strong(&pool.lost, &none, index)) atomic_store(&pool.lost_why, why);
  __builtin_wasm_memory_atomic_notify((int *)&pool.done, -1u);
  __builtin_wasm_memory_atomic_notify((int *)&pool.running, -1u);
}

// The workers inside rmt_thread_run that are not lost.
static int workers_left(void) {
  int left = 0;
  for (int i = 1; i < pool.n_threads; i++) left += atomic_load(&pool.inside[i]) && !atomic_load(&pool.gone[i]);
  return left;
}

// Items a chunk takes when `left` of the job's are not yet taken.
static int chunk_size(const range_job *job, int left) {
  int size = left / (CHUNK_SHARE * job->n_threads);
  if (size < job->min_chunk) size = job->min_chunk;
  return size < left ? size : left;
}

// The thread running a chunk of a job (-1: none), so that a loop inside the
// job runs on that thread, with its scratch, instead of posting a job of its own.
static _Thread_local int job_thread = -1;

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
    job_thread = thread;
    if (thread && pool.fail_after[thread] && --pool.fail_after[thread] == 0) {  // tests: a worker that fails
      if (pool.fail_how[thread] == RMT_THREAD_TRAP) __builtin_trap();
      for (;;) __builtin_wasm_memory_atomic_wait32((int *)&pool.stop, -1, -1);  // never finishes its chunk
    }
    job.fn(job.ctx, begin, begin + size, thread);
    job_thread = -1;
    if (atomic_fetch_add(&pool.done, size) + size == job.n) __builtin_wasm_memory_atomic_notify((int *)&pool.done, 1);
    word = atomic_load(&pool.claim);
  }
}

// Posts a loop of n items over n_threads threads and wakes the workers; returns its number.
static int post(int n, rmt_range_fn fn, void *ctx, int n_threads, int max_threads) {
  int gen = atomic_load(&pool.generation) + 1;
  int min_chunk = n / (MAX_CHUNKS_PER_THREAD * n_threads);
  pool.jobs[gen & 1] = (range_job){fn, ctx, n, n_threads, min_chunk > 1 ? min_chunk : 1, max_threads};
  atomic_store(&pool.done, 0);
  atomic_store(&pool.claim, (uint64_t)(uint32_t)gen << 32);
  atomic_store(&pool.generation, gen);  // publishes the job (sequentially consistent)
  if (atomic_load(&pool.sleepers) > 0) __builtin_wasm_memory_atomic_notify((int *)&pool.generation, -1u);
  return gen;
}

// Takes thread 0's part of job `gen` (of n items), then waits until all are
// done, or leaves the call when a thread holding a chunk is lost (see the top).
static void join(int gen, int n) {
  work_on(gen, 0);
  double since = rmt_now_ms();
  for (int done = atomic_load(&pool.done); done != n;) {
    int lost = atomic_load(&pool.lost);
    if (lost) {
      rmt_error(RMT_E_STATE, "engine thread %d %s", lost, LOST_WHY[atomic_load(&pool.lost_why)]);
      __builtin_trap();
    }
    int now = wait_a_while(&pool.done, done, pool.can_block);
    if (now != done) {
      done = now, since = rmt_now_ms();
    } else if (rmt_now_ms() - since > stall_ms) {
      for (int i = 1; i < pool.n_threads; i++) {
        if (!atomic_load(&pool.gone[i])) lose(i, LOST_STALLED);
      }
    }
  }
}

void rmt_parallel_for(int n, rmt_range_fn fn, void *ctx, long long work, int max_threads) {
  if (job_thread >= 0) {  // inside a job: all of it here
    if (n > 0) fn(ctx, 0, n, job_thread);
    return;
  }
  int n_threads = pool.n_threads < max_threads ? pool.n_threads : max_threads;
  if (n_threads <= 1 || n <= 1 || work < parallel_min_macs || atomic_load(&pool.lost)) {
    if (n > 0) fn(ctx, 0, n, 0);
    return;
  }
  join(post(n, fn, ctx, n_threads, max_threads), n);
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
  if (n > RMT_THREADS_MAX) return rmt_error(RMT_E_LIMIT, "threads can be at most %d, got %d", RMT_THREADS_MAX, n);
  pool.can_block = can_block;
  if (n == 1) return RMT_OK;
  atomic_store(&pool.lost, 0);
  for (int i = 0; i < n; i++) atomic_store(&pool.gone[i], 0), pool.fail_after[i] = 0;
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
  atomic_store(&pool.inside[index], 1);
  atomic_fetch_add(&pool.running, 1);
  // Jobs are numbered from 1: starting from 0, a worker sees the latest job
  // (one it was too late for is done by then: thread 0 took its chunks).
  int seen = 0;
  for (;;) {
    seen = wait_for_change(&pool.generation, seen, 1, &pool.sleepers);
    if (atomic_load(&pool.stop)) break;
    work_on(seen, index);
  }
  atomic_store(&pool.inside[index], 0);
  atomic_fetch_sub(&pool.running, 1);
  __builtin_wasm_memory_atomic_notify((int *)&pool.running, -1u);
}

RMT_API void rmt_threads_stop(void) {
  if (!atomic_load(&pool.lost)) rmt_parallel_join();  // a posted loop ends first, on whichever thread
  posted.gen = 0;  // (with a lost thread: left unfinished, as the call that posted it failed)
  if (pool.n_threads == 1) return;
  atomic_store(&pool.stop, 1);
  atomic_fetch_add(&pool.generation, 1);
  __builtin_wasm_memory_atomic_notify((int *)&pool.generation, -1u);
  // Waits for the workers that are not lost, for at most stall_ms (workers
  // that never started, their instance failing, are not waited for).
  double since = rmt_now_ms();
  for (int left; (left = workers_left()) != 0 && rmt_now_ms() - since <= stall_ms;) {
    wait_a_while(&pool.running, atomic_load(&pool.running), pool.can_block);
  }
  // A stack a worker may still be on (lost, or not out in time) is kept, never reused.
  int on_stacks = 0;
  for (int i = 1; i < pool.n_threads; i++) on_stacks += atomic_load(&pool.inside[i]);
  if (!on_stacks) rmt_arena_free(&pool.blocks);
  pool.blocks = (rmt_arena){0};
  pool.n_threads = 1;
}

RMT_API void rmt_thread_lost(int index) {
  if (index >= 1 && index < pool.n_threads && !atomic_load(&pool.gone[index])) lose(index, LOST_FAILED);
}

RMT_API int rmt_threads_lost(void) { return atomic_load(&pool.lost); }

RMT_API void rmt_threads_set_stall_ms(int ms) { stall_ms = ms < 1 ? 1 : ms; }

RMT_API void rmt_threads_fail_after(int index, int chunks, int how) {
  if (index < 1 || index >= pool.n_threads) return;
  pool.fail_how[index] = how;
  pool.fail_after[index] = chunks < 0 ? 0 : chunks;
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
RMT_API void rmt_thread_lost(int index) { (void)index; }
RMT_API int rmt_threads_lost(void) { return 0; }
RMT_API void rmt_threads_set_stall_ms(int ms) { (void)ms; }
RMT_API void rmt_threads_fail_after(int index, int chunks, int how) { (void)index, (void)chunks, (void)how; }
RMT_API int rmt_threads_count(void) { return 1; }
RMT_API int rmt_threads_running(void) { return 0; }
#endif


void rmt_parallel_post(int n, rmt_range_fn fn, void *ctx) {
  rmt_parallel_join();
  if (n <= 0) return;
  posted.n = n;
#ifdef RMT_THREADS
  if (pool.n_threads > 1 && job_thread < 0 && !atomic_load(&pool.lost)) {
    posted.gen = post(n, fn, ctx, pool.n_threads, RMT_THREADS_ALL);
    return;
  }
#endif
  posted.fn = fn, posted.ctx = ctx;
}

void rmt_parallel_join(void) {
  int gen = posted.gen;
  rmt_range_fn fn = posted.fn;
  posted.gen = 0, posted.fn = NULL;
#ifdef RMT_THREADS
  if (gen) join(gen, posted.n);
  int thread = job_thread >= 0 ? job_thread : 0;
#else
  int thread = 0;
  (void)gen;
#endif
  if (fn) fn(posted.ctx, 0, posted.n, thread);
}
