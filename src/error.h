// Internal error reporting: record a message for rmt_last_error() and return the code.
#ifndef RMT_ERROR_H
#define RMT_ERROR_H
#include "rmt.h"

// Formats the message (printf-style) and returns `code`, so call sites read
// `return rmt_error(RMT_E_FORMAT, "tensor %s: ...", name);`
int rmt_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rmt_clear_error(void);
#endif
