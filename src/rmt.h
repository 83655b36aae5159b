// residual-mt public C API.
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
#endif
