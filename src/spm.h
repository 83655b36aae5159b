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

#endif
