// residual-mt public C API: every function the engine exports (the WASM
// module's exports, which js/engine/binding.js, the CLI and the C tests
// call), declared here and nowhere else; the other headers in src/ are the
// library's own. (The kernels' benchmark exports, kernels_export.c, are
// declared nowhere: only tests/bench calls them.)
//
// Conventions: opaque types; functions return 0 (or a valid pointer) on
// success and a negative RMT_E* code (or NULL) on failure, with a message in
// rmt_last_error(). Nothing in the library calls exit() or abort(): a bad
// model file or a bad input is an error return, never a crash.
#ifndef RMT_H
#define RMT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define RMT_API EMSCRIPTEN_KEEPALIVE
#else
#define RMT_API
#endif

enum {
  RMT_OK = 0,
  RMT_E_INVALID = -1,   // bad argument or input (ids out of range, empty input, ...)
  RMT_E_FORMAT = -2,    // malformed or inconsistent model file
  RMT_E_NOMEM = -3,     // allocation failed
  RMT_E_LIMIT = -4,     // input longer than the model's positions or a set limit
  RMT_E_STATE = -5,     // call out of order
  RMT_E_SIZE = -6,      // the work needs more memory than a set limit or than 32-bit sizes can address
};

// The last error message of this thread (never NULL; "" when none).
RMT_API const char *rmt_last_error(void);
// The code of that error (RMT_OK when none).
RMT_API int rmt_last_error_code(void);

// The objects the API hands out, opaque here (their layouts are the
// library's: model.h, spm.h, translation.h, langid.h).
typedef struct rmt_model rmt_model;
typedef struct rmt_spm rmt_spm;
typedef struct rmt_translation rmt_translation;
typedef struct rmt_sources rmt_sources;
typedef struct rmt_search_params rmt_search_params;
typedef struct rmt_verbatim rmt_verbatim;
typedef struct rmt_langid rmt_langid;
typedef struct rmt_langid_state rmt_langid_state;

// ---------------------------------------------------------------- Models (model.c)

// Loads a model from config.json text and model.safetensors bytes (both are
// only read during the call). NULL on failure, with rmt_last_error().
RMT_API rmt_model *rmt_model_load(const char *config_json, size_t config_len,
                                  const uint8_t *safetensors, size_t safetensors_len);
// The same for a float model, quantized as it loads: every matrix that
// models/quantize.py would make int8 (Linear weights, embeddings, the output
// projection) becomes int8 with one scale per row exactly as that script
// computes it, so the model runs as its quantize.py copy does. (I8 matrices
// are kept as int8 by either call, Marian's one scale for a whole tensor
// becoming every row's.)
RMT_API rmt_model *rmt_model_load_quantized(const char *config_json, size_t config_len,
                                            const uint8_t *safetensors, size_t safetensors_len);
RMT_API void rmt_model_free(rmt_model *model);
// The bytes the model's weights take in memory (its arena): what a load keeps.
RMT_API size_t rmt_model_bytes(const rmt_model *model);

// ---------------------------------------------------------------- The SentencePiece tokenizer (spm.c)

// Parses a .model file; copies what it needs, so `data` may be freed after.
// NULL on failure, with the reason in rmt_last_error().
RMT_API rmt_spm *rmt_spm_load(const uint8_t *data, size_t size);
RMT_API void rmt_spm_free(rmt_spm *spm);

// Encodes `len` bytes of `text` (need not be NUL-terminated or valid UTF-8)
// into ids, as spm_encode --output_format=id prints them (no bos/eos).
// Writes at most `max_ids` ids; returns how many ids the text has (call again
// with a bigger buffer when that exceeds max_ids), or a negative RMT_E_* code.
RMT_API int rmt_spm_encode(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                           int max_ids);

// As rmt_spm_encode, but the result never holds any of the `n_excluded` ids in
// `excluded` (a translation model's language tokens): text that spells such a
// piece, like "<2en>", is encoded as ordinary pieces instead.
RMT_API int rmt_spm_encode_excluding(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                                     int max_ids, const int32_t *excluded, int n_excluded);

// As rmt_spm_encode_excluding, and with each id the bytes of `text` it
// stands for: spans[2i] and spans[2i + 1] (begin and end, exclusive) for id
// i, as far as max_ids. A piece's span covers the input characters its bytes
// were normalized from (a leading "▁" from a space includes that space; the
// dummy prefix adds nothing); the ids of a byte-fallback character share the
// character's span. spans may be NULL.
RMT_API int rmt_spm_encode_spans(const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                                 int32_t *spans, int max_ids, const int32_t *excluded, int n_excluded);

// The bytes of `text` the normalizer drops (they give no normalized byte,
// so no id stands for them: U+FFFD, zero-width and most C0 control
// characters, extra whitespace), as [begin, end) pairs in ranges[2i],
// ranges[2i + 1], in order, as far as max_ranges; returns how many there are.
// `excluded` as rmt_spm_encode_excluding's (user-defined pieces pass unchanged).
RMT_API int rmt_spm_dropped(const rmt_spm *spm, const char *text, size_t len, int32_t *ranges, int max_ranges,
                            const int32_t *excluded, int n_excluded);

// Decodes ids to UTF-8 text as spm_decode does. Like snprintf: returns the
// length of the whole text (excluding the NUL); writes it, NUL-terminated,
// only when it fits (length < cap). Negative RMT_E_INVALID for an id out of range.
RMT_API int rmt_spm_decode(const rmt_spm *spm, const int32_t *ids, int n_ids, char *out,
                           size_t cap);
// As rmt_spm_decode, and each id's bytes of the whole text in spans[2i],
// spans[2i + 1] (written whatever cap is; spans may be NULL): empty for a
// control piece and for the space stripped at the start, shared by the byte
// pieces of one character.
RMT_API int rmt_spm_decode_spans(const rmt_spm *spm, const int32_t *ids, int n_ids, char *out,
                                 size_t cap, int32_t *spans);

// Applies the model's normalizer (what the encoder sees: ▁ for spaces, the
// dummy prefix...). Same return convention as rmt_spm_decode.
RMT_API int rmt_spm_normalize(const rmt_spm *spm, const char *text, size_t len, char *out,
                              size_t cap);

RMT_API int rmt_spm_vocab_size(const rmt_spm *spm);
// The id of a piece (looked up as SentencePiece's PieceToId, but -1 when absent).
RMT_API int rmt_spm_piece_to_id(const rmt_spm *spm, const char *piece);
// The piece of an id, NUL-terminated and owned by `spm`; NULL when out of range.
RMT_API const char *rmt_spm_id_to_piece(const rmt_spm *spm, int id);

enum {  // piece types, as in the ModelProto
  RMT_SPM_NORMAL = 1,
  RMT_SPM_UNKNOWN = 2,
  RMT_SPM_CONTROL = 3,
  RMT_SPM_USER_DEFINED = 4,
  RMT_SPM_UNUSED = 5,
  RMT_SPM_BYTE = 6,
};
// The type of piece `id` (RMT_SPM_*), or RMT_E_INVALID when out of range.
RMT_API int rmt_spm_piece_type(const rmt_spm *spm, int id);

enum {  // which special id rmt_spm_special_id returns
  RMT_SPM_UNK_ID = 0,
  RMT_SPM_BOS_ID = 1,
  RMT_SPM_EOS_ID = 2,
  RMT_SPM_PAD_ID = 3,
};
// The unk/bos/eos/pad id of the trainer spec, -1 when the model has none.
RMT_API int rmt_spm_special_id(const rmt_spm *spm, int which);

// ---------------------------------------------------------------- Translations: search parameters, decoding, text in and out (translation.c, search.c, search_params.c, text.c, sources.c)

// Limits of one translation, enforced by rmt_translation_begin; JS reads them
// with rmt_limit(). The bytes limit keeps a batch (sentences x beam x output
// length) well inside WASM's 4 GB memory, next to the model.
#define RMT_MAX_BEAM 256
#define RMT_MAX_LEN (1 << 20)  // min_len and max_len_b
#define RMT_MAX_TRANSLATION_BYTES ((size_t)1 << 30)
enum {
  RMT_LIMIT_BEAM = 0, RMT_LIMIT_TRANSLATION_BYTES = 1, RMT_LIMIT_LEN = 2, RMT_LIMIT_JSON_BYTES = 3,
  RMT_LIMIT_THREADS = 4,  // RMT_THREADS_MAX (threads.h)
  RMT_LIMIT_COUNT
};
// The value of limit `which` (RMT_LIMIT_*), or RMT_E_INVALID; its name
// ("beam", "translation_bytes", ...: JS's engine.limits), NULL past the last.
RMT_API int rmt_limit(int which);
RMT_API const char *rmt_limit_name(int which);

// The fields of rmt_search_params by number, so that callers (JS) set them
// without knowing the struct's layout; defaults and ranges live in search_params.c.
enum {
  RMT_PARAM_BEAM, RMT_PARAM_NBEST, RMT_PARAM_MIN_LEN, RMT_PARAM_MAX_LEN_A, RMT_PARAM_MAX_LEN_B, RMT_PARAM_LENPEN, RMT_PARAM_SHORTLIST,
  RMT_PARAM_COUNT
};
RMT_API int rmt_search_params_size(void);
RMT_API void rmt_search_params_default(rmt_search_params *params);

// The field's name ("beam", "max_len_a", ...), NULL past the last.
RMT_API const char *rmt_search_param_name(int field);
RMT_API double rmt_search_param_get(const rmt_search_params *params, int field);
// 1 when the field holds an integer (beam, ...), 0 for a real number (lenpen, ...), RMT_E_INVALID past the last.
RMT_API int rmt_search_param_integer(int field);
// Sets a field: RMT_E_LIMIT (and nothing set) when the value is out of its range.
RMT_API int rmt_search_param_set(rmt_search_params *params, int field, double value);

// One hypothesis as rmt_translation_read gives it, all in one call; its
// pointers point into the translation (valid until the next read or its free).
typedef struct {
  int32_t n_ids;         // its tokens, without </s>
  float score;
  int32_t hit_max_len;   // decoding was cut at the length limit
  int32_t text_len;      // bytes of text (-1: not asked for)
  const int32_t *ids;    // [n_ids]
  const char *text;      // [text_len] and a NUL: rmt_translation_hyp_text's
  const int32_t *spans;  // [4 n_ids] as rmt_translation_hyp_alignment_text's (NULL: not asked for)
} rmt_hyp_view;
// Its fields by number (JS reads them without knowing the layout): the
// field's name ("n_ids", ...) and its byte offset; NULL and -1 past the last.
RMT_API const char *rmt_hyp_view_field(int field);
RMT_API int rmt_hyp_view_offset(int field);

RMT_API rmt_translation *rmt_translation_begin(const rmt_model *model, const int32_t *ids, const int32_t *lens,
                                               int n_sent, const rmt_search_params *params);
RMT_API void rmt_translation_free(rmt_translation *tr);
// One beam search step for every unfinished sentence; returns how many remain (0 = done).
RMT_API int rmt_translation_step(rmt_translation *tr);
RMT_API int rmt_translation_run(rmt_translation *tr);

// Results, once a sentence is finished: up to nbest hypotheses, best first.
RMT_API int rmt_translation_n_hyps(const rmt_translation *tr, int s);
// Copies hypothesis k of sentence s into ids (at most cap) and returns its
// length; score and hit_max_len may be NULL.
RMT_API int rmt_translation_hyp(const rmt_translation *tr, int s, int k, int32_t *ids, int cap, float *score,
                                int32_t *hit_max_len);
// The best hypothesis so far; returns its length.
RMT_API int rmt_translation_partial(const rmt_translation *tr, int s, int32_t *ids, int cap);
// The prefix the final best hypothesis is sure to start with (streaming); returns its length.
RMT_API int rmt_translation_stable(const rmt_translation *tr, int s, int32_t *ids, int cap);
RMT_API int rmt_translation_src_len(const rmt_translation *tr, int s);
RMT_API int rmt_translation_steps(const rmt_translation *tr);

// Alignment of hypothesis k of sentence s: for each of its tokens, the
// position in the sentence's source (its ids as given to
// rmt_translation_begin, 0-based) that the last decoder layer's encoder
// attention, averaged over the heads, weighted most when the token was
// chosen; never the source's </s> or a target-language token (-1 when the
// source has nothing else). models/residual_mt/reference.py's `alignment` defines it.
// Copies up to cap positions into src_pos; returns the hypothesis's length.
RMT_API int rmt_translation_hyp_alignment(const rmt_translation *tr, int s, int k, int32_t *src_pos, int cap);

// Teacher forcing and internals, for scoring and tests.
RMT_API const float *rmt_translation_encoder_out(const rmt_translation *tr, int s);
RMT_API int rmt_translation_force_step(rmt_translation *tr, const int32_t *tokens);
RMT_API const float *rmt_translation_logits(const rmt_translation *tr);
// After a forced step: sentence s's encoder-attention weights in the last
// decoder layer, averaged over the heads ([src_len(s)]: its tokens and </s>).
RMT_API const float *rmt_translation_cross_attention(const rmt_translation *tr, int s);

// Text in and out (text.c): SentencePiece encoding, the target-language token
// when the model has them, decoding. `texts` holds n_texts texts back to back,
// text_lens their byte lengths. Text results follow snprintf's convention.
// Encodes user text for this model: spm's ids, never a language token (text
// that spells one is encoded as ordinary pieces). rmt_spm_encode's convention.
RMT_API int rmt_text_encode(const rmt_model *model, const rmt_spm *spm, const char *text, size_t len, int32_t *ids,
                            int max_ids);
RMT_API rmt_translation *rmt_translation_begin_text(const rmt_model *model, const rmt_spm *spm, const char *texts,
                                                    const int32_t *text_lens, int n_texts, const char *target_lang,
                                                    const rmt_search_params *params);

RMT_API rmt_sources *rmt_sources_new(const rmt_model *model, const rmt_spm *spm);
RMT_API int rmt_sources_add(rmt_sources *src, const char *text, size_t len);
RMT_API void rmt_sources_free(rmt_sources *src);
RMT_API rmt_translation *rmt_translation_begin_sources(const rmt_sources *src, const int32_t *which, int n,
                                                       const char *target_lang, const rmt_search_params *params);
// The number of ids (as rmt_text_encode's) of each of n_texts texts (back to
// back, text_lens their bytes) into counts: one call for many (js/text/segment.js
// splitLong's words). 0 or an error code.
RMT_API int rmt_text_count(const rmt_model *model, const rmt_spm *spm, const char *texts, const int32_t *text_lens,
                           int n_texts, int32_t *counts);
// Hypothesis k of sentence s: its ids, score and hit_max_len, and with
// with_text its text, with with_spans its alignment in text (a translation
// begun from text): one call for all of them. NULL on error.
RMT_API const rmt_hyp_view *rmt_translation_read(rmt_translation *tr, const rmt_spm *spm, int s, int k, int with_text,
                                                 int with_spans);
RMT_API int rmt_translation_hyp_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k, char *out,
                                     size_t cap);
RMT_API int rmt_translation_stable_text(const rmt_translation *tr, const rmt_spm *spm, int s, char *out, size_t cap);
// rmt_translation_hyp_alignment in text: `text` is sentence s's text as given
// to rmt_translation_begin_text (RMT_E_INVALID if it is not). For each token
// i of hypothesis k, spans[4i..4i+3] = the bytes of `text` its source token
// came from (begin, end; -1, -1 when unaligned) and its own bytes of the
// hypothesis's text (rmt_translation_hyp_text; see rmt_spm_decode_spans), up
// to cap tokens. Returns the hypothesis's length.
RMT_API int rmt_translation_hyp_alignment_text(const rmt_translation *tr, const rmt_spm *spm, int s, int k,
                                               const char *text, size_t len, int32_t *spans, int cap);
// The verbatim spans of sentence s (verbatim.h) and what became of them in
// hypothesis k's text (a translation begun from text): for span i, out[6i..6i+5]
// = its bytes of the sentence's text (begin, end), its kind (RMT_SPAN_URL...),
// its bytes of the hypothesis's text (from, to) and how (RMT_SPAN_KEPT,
// _REPLACED, _INSERTED), up to cap spans. Returns how many spans there are.
RMT_API int rmt_translation_verbatim(const rmt_translation *tr, const rmt_spm *spm, int s, int k, int32_t *out, int cap);
// The most ids of user text one sentence may have with these parameters (see
// rmt_translation_max_source; the language token is not counted): longer
// text is to be split before rmt_translation_begin_text.
RMT_API int rmt_text_max_ids(const rmt_model *model, const rmt_search_params *params);

// ---------------------------------------------------------------- Verbatim spans (verbatim_find.c, verbatim.c)

// The spans of `len` bytes of `text`, in order and apart, as far as cap;
// returns how many there are (at most len / 1, so cap = len suffices), or a
// negative RMT_E_* code.
RMT_API int rmt_verbatim_find(const char *text, size_t len, rmt_verbatim *out, int cap);
// "url", "email", "number", "time", "date", "code", "tag", "path", "inline-code", "symbol"; NULL for another number.
RMT_API const char *rmt_verbatim_kind_name(int kind);
// "kept", "replaced", "inserted"; NULL for another number.
RMT_API const char *rmt_verbatim_how_name(int how);

// ---------------------------------------------------------------- SHA-256 (sha256.c)

// The digest of data[0..size) into digest[0..32).
RMT_API void rmt_sha256(const uint8_t *data, size_t size, uint8_t *digest);
// The same on a worker of the thread pool while the caller goes on (loading
// the model from those bytes): rmt_sha256_wait runs it on the caller if no
// worker has taken it, else waits for it. One at a time; the caller runs no
// other loop on the pool, and neither frees nor writes the bytes, until
// rmt_sha256_wait has returned. In a build without threads it all runs in
// rmt_sha256_wait.
RMT_API void rmt_sha256_start(const uint8_t *data, size_t size, uint8_t *digest);
RMT_API void rmt_sha256_wait(void);

// ---------------------------------------------------------------- The thread pool (threads.c)

// ---- For JS (js/engine/threads.js), in this order:
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
// js/engine/threads.js): thread 0 stops waiting for it, and a call waiting for its
// part of a job leaves by a trap with the reason as its last error (threads.c).
RMT_API void rmt_thread_lost(int index);
// The first lost worker's index, 0 while none is: js/engine/wasm.js asks after a trap.
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

// ---------------------------------------------------------------- The language identifier (langid.c, langid_features.c)

// Loads a model from the bytes of its file (copied: the caller may free
// them). NULL on failure, with the reason in rmt_last_error().
RMT_API rmt_langid *rmt_langid_load(const uint8_t *bytes, size_t size);
RMT_API void rmt_langid_free(rmt_langid *model);
// Bytes the loaded model holds.
RMT_API size_t rmt_langid_bytes(const rmt_langid *model);
RMT_API int rmt_langid_n_languages(const rmt_langid *model);
// Tag of language i (0 <= i < n_languages), or NULL.
RMT_API const char *rmt_langid_language(const rmt_langid *model, int i);

// Scratch for rmt_langid_detect, sized by the model; NULL on failure.
RMT_API rmt_langid_state *rmt_langid_state_new(const rmt_langid *model);
RMT_API void rmt_langid_state_free(rmt_langid_state *state);
// Scores `len` bytes of UTF-8 text: afterwards rmt_langid_probs holds one
// probability per language. Returns the number of features seen (0 when the
// text has no letters: the probabilities are then all 0), or a negative code.
// Allocates nothing.
RMT_API int rmt_langid_detect(rmt_langid_state *state, const char *text, size_t len);
// The probabilities of the last detect (n_languages floats, in model order).
RMT_API const float *rmt_langid_probs(const rmt_langid_state *state);

// The features of a text for orders[0 .. n_groups-1] hashed into
// buckets[0 .. n_groups-1] rows: feature k is row rows[k] of group groups[k].
// Writes at most `cap`; returns how many there are (more than cap: call
// again with room), or RMT_E_INVALID for a bad order or bucket count.
RMT_API int rmt_langid_features(const char *text, size_t len, const int32_t *orders, const int32_t *buckets,
                                int n_groups, int32_t *rows, int32_t *groups, int cap);
#endif
