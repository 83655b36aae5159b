// SHA-256 (FIPS 180-4) of the model's weights in the engine's memory, so that
// a page checks the bytes the engine read against its manifest without a
// copy of them (js/engine/binding.js loadModel).
#ifndef RMT_SHA256_H
#define RMT_SHA256_H
#include <stddef.h>
#include <stdint.h>

#include "rmt.h"

#define RMT_SHA256_BYTES 32

#endif
