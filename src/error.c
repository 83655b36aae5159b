#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int rmt_error(int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, args);
  va_end(args);
  return code;
}

void rmt_clear_error(void) { last_error[0] = 0; }

RMT_API const char *rmt_last_error(void) { return last_error; }
