// SentencePiece tokenizer: reads a SentencePiece .model file (a serialized
// ModelProto) and encodes text to ids / decodes ids to text exactly as
// sentencepiece 0.1.97's spm_encode --output_format=id and spm_decode do.
//
// Supported: unigram and BPE models; user-defined, control, unknown, byte and
// unused pieces; byte fallback; the normalizer's precompiled charsmap
// (nmt_nfkc, nfkc, *_cf, custom rule TSVs) or identity; add_dummy_prefix,
// remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix;
// the denormalizer. Invalid UTF-8 becomes U+FFFD one byte at a time, as in
// SentencePiece. Not supported: the WORD and CHAR model types, sampling,
// n-best, encode/decode extra options (bos/eos/reverse).
//
// An rmt_spm is read-only after loading: calls on one object may run at once.
#ifndef RMT_SPM_H
#define RMT_SPM_H
#include "rmt.h"

typedef struct rmt_spm rmt_spm;

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
#endif
