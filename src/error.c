#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];
static _Thread_local char warnings[1024];

int rmt_error(int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, args);
  va_end(args);
  return code;
}

void rmt_warn(const char *fmt, ...) {
  size_t used = strlen(warnings);
  if (used + 2 >= sizeof warnings) return;
  if (used) warnings[used++] = '\n';
  va_list args;
  va_start(args, fmt);
  vsnprintf(warnings + used, sizeof warnings - used, fmt, args);
  va_end(args);
}

void rmt_clear_error(void) { last_error[0] = 0; }

RMT_API const char *rmt_last_error(void) { return last_error; }

// Returns the warnings gathered since the last call, then clears them.
RMT_API const char *rmt_take_warnings(void) {
  static _Thread_local char taken[sizeof warnings];
  memcpy(taken, warnings, sizeof warnings);
  warnings[0] = 0;
  return taken;
}
