// SHA-256 (FIPS 180-4) of the model's weights in the engine's memory, so that
// a page checks the bytes the engine read against its manifest without a
// copy of them (js/engine.js loadModel).
#ifndef RMT_SHA256_H
#define RMT_SHA256_H
#include <stddef.h>
#include <stdint.h>

#include "rmt.h"

#define RMT_SHA256_BYTES 32

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
#endif
