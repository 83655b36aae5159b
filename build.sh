#!/usr/bin/env bash
# Builds the C core two ways from one source tree:
#   wasm    dist/residual-mt.wasm   (Emscripten, -O3 -msimd128, standalone module)
#   native  build/native/           (gcc/clang + SIMDe for the wasm intrinsics):
#           librmt.a, the CLI tool rmt, and one executable per tests/c/test_*.c
#   sanitize build/sanitize/        the same under ASan + UBSan
# Usage: bash build.sh [all|wasm|native|sanitize|deps]
set -euo pipefail
cd "$(dirname "$0")"

target="${1:-all}"
APT_PACKAGES="emscripten libsimde-dev libjsmn-dev"

have_deps() {
  command -v emcc >/dev/null && [ -f /usr/include/simde/wasm/simd128.h ] && [ -f /usr/include/jsmn.h ]
}

ensure_deps() {
  have_deps && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "build.sh: installing $APT_PACKAGES" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq $APT_PACKAGES >/dev/null || { apt-get update -qq && apt-get install -y -qq $APT_PACKAGES >/dev/null; }
  else
    echo "build.sh: missing build dependencies; run: sudo apt-get install -y $APT_PACKAGES" >&2
    exit 1
  fi
}

# Library sources: every src/*.c except the native-only command-line tool.
lib_sources() { ls src/*.c | grep -v '^src/cli_native\.c$'; }

CFLAGS_COMMON="-std=c11 -Wall -Wextra -Wno-unused-parameter -Isrc"

build_native() {
  local out="${NATIVE_OUT:-build/native}" cc="${CC:-cc}" flags="${NATIVE_CFLAGS:--O2 -g}"
  mkdir -p "$out/obj"
  local objs=()
  for src in $(lib_sources); do
    local obj="$out/obj/$(basename "${src%.c}").o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj")" ]; then
      $cc $CFLAGS_COMMON $flags -c "$src" -o "$obj"
    fi
    objs+=("$obj")
  done
  rm -f "$out/librmt.a" && ar rcs "$out/librmt.a" "${objs[@]}"
  if [ -f src/cli_native.c ]; then
    $cc $CFLAGS_COMMON $flags src/cli_native.c "$out/librmt.a" -lm -o "$out/rmt"
  fi
  for test in tests/c/test_*.c; do
    [ -e "$test" ] || continue
    $cc $CFLAGS_COMMON $flags -Itests/c "$test" "$out/librmt.a" -lm -o "$out/$(basename "${test%.c}")"
  done
}

build_wasm() {
  mkdir -p dist
  # Emscripten's JS optimizer needs Debian's acorn.
  export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
  # Emscripten's sysroot hides /usr/include; expose just the header-only jsmn.
  mkdir -p build/wasm-include
  ln -sf /usr/include/jsmn.h build/wasm-include/jsmn.h
  local stamp=dist/residual-mt.wasm
  if [ -f "$stamp" ] && [ -z "$(find src build.sh -newer "$stamp" -print -quit)" ]; then
    return 0
  fi
  # A standalone module (no Emscripten JS glue): js/wasm.js instantiates it.
  # Exports are the functions marked RMT_API. malloc returns NULL when memory
  # cannot grow, so the library reports out-of-memory instead of aborting.
  emcc $CFLAGS_COMMON -Ibuild/wasm-include -O3 -msimd128 $(lib_sources) -o dist/residual-mt.wasm \
    --no-entry -sSTANDALONE_WASM=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB \
    -sABORTING_MALLOC=0 -sINITIAL_MEMORY=16MB -sTOTAL_STACK=1MB \
    -sEXPORTED_FUNCTIONS=_malloc,_free -sERROR_ON_UNDEFINED_SYMBOLS=1
}

# The native tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
build_sanitize() {
  NATIVE_OUT=build/sanitize NATIVE_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    build_native
}

case "$target" in
  deps) ensure_deps ;;
  native) ensure_deps; build_native ;;
  sanitize) ensure_deps; build_sanitize ;;
  wasm) ensure_deps; build_wasm ;;
  all) ensure_deps; build_native; build_sanitize; build_wasm ;;
  *) echo "usage: bash build.sh [all|wasm|native|sanitize|deps]" >&2; exit 2 ;;
esac
