#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];
static _Thread_local int last_code;

int rmt_error(int code, const char *fmt, ...) {
  last_code = code;
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, args);
  va_end(args);
  return code;
}

void rmt_clear_error(void) {
  last_error[0] = 0;
  last_code = RMT_OK;
}

RMT_API const char *rmt_last_error(void) { return last_error; }
RMT_API int rmt_last_error_code(void) { return last_code; }
