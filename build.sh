#!/usr/bin/env bash
# Builds the C core two ways from one source tree:
#   wasm    dist/residual-mt.wasm   (Emscripten, -O3 -msimd128, standalone module),
#           dist/residual-mt-relaxed.wasm (the same with -mrelaxed-simd: fused multiply-adds;
#                                   clang-16 and wasm-ld-16 over Emscripten's libc, then
#                                   binaryen's wasm-opt from node_modules),
#           dist/residual-mt-threads.wasm (plain SIMD128 with threads: shared memory and
#                                   atomics, the same tools over Emscripten's threaded libc), and
#           dist/shell.json         (the demo's app shell for its service worker: scripts/shell.js)
#   native  build/native/           (gcc/clang + SIMDe for the wasm intrinsics):
#           librmt.a, the CLI tool rmt, and one executable per tests/c/test_*.c
#   sanitize build/sanitize/        the same under ASan + UBSan
#   native32 build/native32/        the same for i386 under ASan + UBSan (clang -m32, SSE2 float32):
#                                   size_t is 32 bits there, as in WASM, so size wraps show natively
#                                   (UBSan alone where i386 programs run under qemu: i386_runner)
#   profile  build/wasm-profile/residual-mt.wasm: the plain WASM build with per-operation
#            timers (src/profile.h), for tests/bench/profile.js
#   fuzz     build/fuzz/            the libFuzzer targets in fuzz/ (i386, as native32; where that
#                                   runs under qemu, also build/fuzz64/: x86-64, ASan + UBSan)
# Usage: bash build.sh [all|wasm|native|sanitize|native32|fuzz|profile|deps]
set -euo pipefail
cd "$(dirname "$0")"

target="${1:-all}"
# Debian packages by build: the WASM build needs only Emscripten and jsmn
# (npm start builds only that); the native builds add SIMDe and clang with
# the i386 libraries.
WASM_PACKAGES="emscripten libjsmn-dev"
# The relaxed-SIMD build needs LLVM 16 (clang 14, Emscripten's, lacks relaxed_madd),
# and its wasm-opt is binaryen's npm package (when the devDependencies are installed).
RELAXED_PACKAGES="clang-16 lld-16"
RELAXED_WASM_OPT=node_modules/binaryen/bin/wasm-opt
APT_PACKAGES="$WASM_PACKAGES libsimde-dev clang libclang-rt-14-dev libc6-dev-i386 lib32gcc-12-dev lib32stdc++-12-dev"

have_wasm_deps() {
  command -v emcc >/dev/null && [ -f /usr/include/jsmn.h ]
}

have_deps() {
  have_wasm_deps && [ -f /usr/include/simde/wasm/simd128.h ] &&
    command -v clang >/dev/null && [ -f /usr/lib32/crt1.o ] &&
    [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-i386.a' -print -quit 2>/dev/null)" ] &&
    [ -n "$(find /usr/lib/gcc/x86_64-linux-gnu -path '*/32/libstdc++.so' -print -quit 2>/dev/null)" ]
}

. scripts/apt-install.sh

# ensure_deps [wasm]: installs what the build lacks (as root), or says what to install.
ensure_deps() {
  local check=have_deps packages="$APT_PACKAGES"
  if [ "${1:-}" = wasm ]; then check=have_wasm_deps packages="$WASM_PACKAGES"; fi
  $check && return 0
  # shellcheck disable=SC2086 # the lists are words
  apt_install build.sh $packages || exit 1
}

have_relaxed_deps() {
  command -v clang-16 >/dev/null && command -v wasm-ld-16 >/dev/null
}

# Library sources: every src/*.c.
lib_sources() { ls src/*.c; }

CFLAGS_COMMON="-std=c11 -Wall -Wextra -Wno-unused-parameter -Isrc"

# NATIVE_OUT, CC, NATIVE_CFLAGS: where, with what; NATIVE_CHECKS: the build's
# machine and sanitizers in words, kept in $out/sanitizers for the tests to show.
build_native() {
  local out="${NATIVE_OUT:-build/native}" cc="${CC:-cc}" flags="${NATIVE_CFLAGS:--O2 -g}"
  fresh_for_flags "$out" "$cc $flags"
  mkdir -p "$out/obj"
  printf '%s\n' "${NATIVE_CHECKS:-x86-64, optimised, no sanitizer}" >"$out/sanitizers"
  local objs=()
  for src in $(lib_sources); do
    local obj="$out/obj/$(basename "${src%.c}").o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj")" ]; then
      $cc $CFLAGS_COMMON $flags -c "$src" -o "$obj"
    fi
    objs+=("$obj")
  done
  rm -f "$out/librmt.a" && ar rcs "$out/librmt.a" "${objs[@]}"
  for test in tests/c/test_*.c; do
    [ -e "$test" ] || continue
    $cc $CFLAGS_COMMON $flags -Itests/c "$test" "$out/librmt.a" -lm -o "$out/$(basename "${test%.c}")"
  done
}

# Removes what build folder $1 holds (or only its files matching $3) when it
# was built with other flags than $2 (the i386 builds' sanitizers depend on
# the machine: i386_runner).
fresh_for_flags() {
  mkdir -p "$1"
  if [ "$(cat "$1/flags" 2>/dev/null)" != "$2" ]; then
    (cd "$1" && rm -rf -- ${3:-*}) && printf '%s\n' "$2" >"$1/flags"
  fi
}

build_wasm() {
  local stamp=dist/residual-mt.wasm
  if [ -f "$stamp" ] && [ -z "$(find src build.sh -newer "$stamp" -print -quit)" ]; then
    return 0
  fi
  mkdir -p dist
  emcc_standalone dist/residual-mt.wasm
}

# emcc_standalone OUT [FLAGS]: the plain SIMD128 build, with FLAGS last.
# A standalone module (no Emscripten JS glue): js/engine/wasm.js instantiates it.
# Exports are the functions marked RMT_API. malloc returns NULL when memory
# cannot grow, so the library reports out-of-memory instead of aborting.
emcc_standalone() {
  ensure_deps wasm
  # Emscripten's JS optimizer needs Debian's acorn.
  export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
  # Emscripten's sysroot hides /usr/include; expose just the header-only jsmn.
  mkdir -p build/wasm-include
  ln -sf /usr/include/jsmn.h build/wasm-include/jsmn.h
  emcc $CFLAGS_COMMON -Ibuild/wasm-include -O3 -msimd128 $(lib_sources) -o "$1" \
    --no-entry -sSTANDALONE_WASM=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB \
    -sABORTING_MALLOC=0 -sINITIAL_MEMORY=16MB -sTOTAL_STACK=1MB \
    -sEXPORTED_FUNCTIONS=_malloc,_free -sERROR_ON_UNDEFINED_SYMBOLS=1 ${2:-}
}

# build/wasm-profile/residual-mt.wasm: the plain build with src/profile.h's
# per-operation timers (-DRMT_PROFILE), for tests/bench/profile.js; not shipped.
# Their clock is an import emcc 3.1.6 cannot be told of (profile.c: rmt_now_ms),
# so undefined symbols are allowed here: profile.js checks that the module
# imports nothing else beyond the plain build's imports.
build_wasm_profile() {
  local out=build/wasm-profile/residual-mt.wasm
  [ -f "$out" ] && [ -z "$(find src build.sh -newer "$out" -print -quit)" ] && return 0
  mkdir -p build/wasm-profile
  emcc_standalone "$out" "-DRMT_PROFILE -sERROR_ON_UNDEFINED_SYMBOLS=0"
}

# dist/residual-mt-relaxed.wasm: the plain build's sources, flags and libraries
# (Emscripten's sysroot, which its build above has filled) with relaxed SIMD,
# compiled by clang-16 and linked by wasm-ld-16 directly: emcc 3.1.6's clang and
# Debian's wasm-opt (which clang-16's driver would also run) reject the new
# opcodes. Only the explicit rmt_f32x4_madd (simd.h) fuses: -ffp-contract=off.
# Without clang-16 (and not root to install it) the file is a copy of the plain
# build, so every runtime still finds an engine, and build.sh says so.
build_wasm_relaxed() {
  local out=dist/residual-mt-relaxed.wasm
  clang16_build_fresh "$out" build/wasm-relaxed && return 0
  if ! have_relaxed_deps && [ "$(id -u)" = 0 ]; then
    echo "build.sh: installing $RELAXED_PACKAGES (the relaxed-SIMD engine)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq $RELAXED_PACKAGES >/dev/null || { apt-get update -qq && apt-get install -y -qq $RELAXED_PACKAGES >/dev/null; } || true
  fi
  stand_in_copy "$out" "no fused multiply-adds" && return 0
  build_wasm_clang16 "$out" build/wasm-relaxed "-mrelaxed-simd -ffp-contract=off" "" --enable-relaxed-simd
}

# Whether OUT, a clang-16 build with its objects in DIR, is up to date: newer
# than its sources, not the stand-in copy while clang-16 is here, and
# optimised if wasm-opt is.
clang16_build_fresh() {
  local out="$1" dir="$2"
  [ -f "$out" ] && [ -z "$(find src build.sh dist/residual-mt.wasm -newer "$out" -print -quit)" ] &&
    ! { have_relaxed_deps && cmp -s "$out" dist/residual-mt.wasm; } &&
    ! { [ -f "$RELAXED_WASM_OPT" ] && [ ! -f "$dir/optimised" ]; }
}

# Without clang-16, OUT becomes a copy of the plain build (so that every
# runtime still finds an engine; WHAT says what it lacks then), and this
# succeeds; with clang-16 it fails, and the caller builds the real one.
stand_in_copy() {
  local out="$1" what="$2"
  have_relaxed_deps && return 1
  echo "build.sh: clang-16 and wasm-ld-16 not found: $out is a copy of the plain SIMD128 build" \
    "($what); for the real one: sudo apt-get install -y $RELAXED_PACKAGES" >&2
  cp dist/residual-mt.wasm "$out"
}

# build_wasm_clang16 OUT DIR CFLAGS LINKFLAGS WASM_OPT_FLAGS [threads]: the
# plain build's sources, flags and libraries (Emscripten's sysroot, which its
# build above has filled) compiled by clang-16 with CFLAGS and linked by
# wasm-ld-16 directly, objects in DIR; "threads" links Emscripten's threaded
# libc (libc-mt, dlmalloc-mt), whose objects have atomics.
build_wasm_clang16() {
  local out="$1" dir="$2" cflags="$3" ldflags="$4" optflags="$5" mt=""
  [ "${6:-}" = threads ] && mt=-mt
  local sysroot lib objs=()
  sysroot="$(em-config CACHE)/sysroot"
  lib="$sysroot/lib/wasm32-emscripten"
  mkdir -p "$dir"
  for src in $(lib_sources); do
    local obj="$dir/$(basename "${src%.c}").o"
    clang-16 --target=wasm32-unknown-emscripten --sysroot="$sysroot" -iwithsysroot/include/compat \
      $CFLAGS_COMMON -Ibuild/wasm-include -O3 -msimd128 $cflags -c "$src" -o "$obj"
    objs+=("$obj")
  done
  # The one import Emscripten's memory-growth library expects from the host (js/engine/wasm.js).
  echo emscripten_notify_memory_growth > "$dir/imports.txt"
  # emcc's own link line for the plain build (emcc -v), less its JS-only libraries.
  wasm-ld-16 -o "$out" "${objs[@]}" "$lib/crt1_reactor.o" -L"$lib" \
    -lstandalonewasm-memgrow -lstubs -lnoexit -lc$mt -ldlmalloc$mt -lcompiler_rt$mt \
    --allow-undefined-file="$dir/imports.txt" --strip-all \
    --export-if-defined=malloc --export-if-defined=free --export=__errno_location \
    -z stack-size=1048576 --initial-memory=16777216 --max-memory=4294967296 \
    --entry=_initialize --global-base=1024 $ldflags
  # emcc's wasm-opt pass, by binaryen's npm build (a devDependency: Debian's
  # wasm-opt 108 predates relaxed SIMD); about a tenth faster with it.
  rm -f "$dir/optimised"
  if [ -f "$RELAXED_WASM_OPT" ]; then
    node "$RELAXED_WASM_OPT" --strip-dwarf --post-emscripten -O3 --low-memory-unused --zero-filled-memory \
      --strip-debug --strip-producers --mvp-features --enable-simd --enable-sign-ext \
      --enable-mutable-globals $optflags "$out" -o "$out"
    touch "$dir/optimised"
  else
    echo "build.sh: $out is not optimised: binaryen's wasm-opt comes with the devDependencies (npm install)" >&2
  fi
}

# dist/residual-mt-threads.wasm: the plain SIMD128 build with threads
# (src/threads.c, -DRMT_THREADS): shared memory that JS creates and every
# thread's instance imports (js/engine/threads.js), atomics, Emscripten's threaded
# libc; dist/residual-mt-relaxed-threads.wasm: the same with relaxed SIMD,
# for runtimes with both (Chromium: its relaxed dot runs int8 ~1.6x faster
# on a CPU with VNNI); Firefox and Safari have threads without relaxed SIMD.
# Need clang-16 as the relaxed build does (emcc 3.1.6's threads need its JS
# glue); without it each file is a copy of the plain build, which js/engine/wasm.js
# runs on one thread (it has no shared memory), and build.sh says so.
THREADS_CFLAGS="-matomics -mbulk-memory -pthread -DRMT_THREADS=1"
# __stack_pointer is exported so that each worker's instance gets a stack of its own.
THREADS_LDFLAGS="--import-memory --shared-memory --export=__stack_pointer"
THREADS_OPTFLAGS="--enable-threads --enable-bulk-memory"
build_wasm_threads() {
  local out=dist/residual-mt-threads.wasm
  clang16_build_fresh "$out" build/wasm-threads && return 0
  stand_in_copy "$out" "one thread" && return 0
  build_wasm_clang16 "$out" build/wasm-threads "$THREADS_CFLAGS" "$THREADS_LDFLAGS" "$THREADS_OPTFLAGS" threads
}
build_wasm_relaxed_threads() {
  local out=dist/residual-mt-relaxed-threads.wasm
  clang16_build_fresh "$out" build/wasm-relaxed-threads && return 0
  stand_in_copy "$out" "one thread, no fused multiply-adds" && return 0
  build_wasm_clang16 "$out" build/wasm-relaxed-threads "-mrelaxed-simd -ffp-contract=off $THREADS_CFLAGS" \
    "$THREADS_LDFLAGS" "--enable-relaxed-simd $THREADS_OPTFLAGS" threads
}

# dist/demo.js, dist/worker.js, dist/pool-worker.js: the demo's modules
# bundled (scripts/bundle.js, esbuild from the devDependencies), and
# dist/shell.json: what the demo's service worker may cache (scripts/shell.js);
# written every time, since web/ and js/ change without a rebuild.
write_shell() {
  node scripts/bundle.js
  node scripts/shell.js >/dev/null
}

# The native tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
UBSAN_FLAGS="-O1 -g -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
SANITIZE_FLAGS="$UBSAN_FLAGS -fsanitize=address"
build_sanitize() {
  NATIVE_OUT=build/sanitize NATIVE_CFLAGS="$SANITIZE_FLAGS" NATIVE_CHECKS="x86-64, ASan + UBSan" build_native
}

# How this machine runs i386 programs, written to build/i386-runner for the
# tests (tests/c.test.js, fuzz/run.sh): an empty line where the kernel runs
# them, "qemu-i386" where it has no 32-bit support (some virtual machines
# lack it), and then installs qemu-user. RMT_I386=qemu takes the qemu path
# on any machine (to check it where the kernel runs i386). AddressSanitizer
# does not run under qemu-user, so there the i386 builds have UBSan only: the
# native tests keep ASan in build/sanitize, and the fuzz targets get an
# x86-64 ASan + UBSan build of their own (build_fuzz). 32-bit sizes are what
# the i386 builds are for; their float arithmetic is SSE2's float32, as
# WebAssembly's is (x87's excess precision would make results depend on
# register spills), and qemu emulates both.
# 64-bit file offsets: under qemu-user the host's directory offsets reach a
# 32-bit readdir(), which fails on them (the tests list fixture folders).
I386_FLAGS="-m32 -msse2 -mfpmath=sse -D_FILE_OFFSET_BITS=64"
I386_SANITIZE_FLAGS="$I386_FLAGS $SANITIZE_FLAGS" I386_CHECKS="i386, ASan + UBSan"
i386_runner() {
  mkdir -p build
  printf 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }\n' >build/i386-probe.c
  clang -m32 build/i386-probe.c -o build/i386-probe
  if [ "${RMT_I386:-}" != qemu ] && build/i386-probe 2>/dev/null; then
    echo >build/i386-runner
    return 0
  fi
  if ! command -v qemu-i386 >/dev/null; then
    [ "$(id -u)" = 0 ] || { echo "build.sh: this kernel runs no i386 programs; run: sudo apt-get install -y qemu-user" >&2; exit 1; }
    echo "build.sh: this kernel runs no i386 programs: installing qemu-user" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null; }
  fi
  qemu-i386 build/i386-probe || { echo "build.sh: qemu-i386 cannot run the i386 probe" >&2; exit 1; }
  echo qemu-i386 >build/i386-runner
  I386_SANITIZE_FLAGS="$I386_FLAGS $UBSAN_FLAGS" I386_CHECKS="i386 under qemu-i386, UBSan only"
}

# And for i386, where size_t has WASM's 32 bits.
build_native32() {
  i386_runner
  NATIVE_OUT=build/native32 CC=clang NATIVE_CFLAGS="$I386_SANITIZE_FLAGS" NATIVE_CHECKS="$I386_CHECKS" build_native
}

# fuzz_targets DIR FLAGS SANITIZERS: the libFuzzer targets of fuzz/ built into
# DIR with FLAGS; DIR/sanitizers says in words what checks them (fuzz/run.sh).
fuzz_targets() {
  fresh_for_flags "$1" "$2" 'fuzz_*'  # the targets; the corpus stays
  printf '%s\n' "$3" >"$1/sanitizers"
  for target in fuzz/fuzz_*.c; do
    local out="$1/$(basename "${target%.c}")"
    if [ ! -f "$out" ] || [ -n "$(find src "$target" -newer "$out" -print -quit)" ]; then
      clang $CFLAGS_COMMON $2 -fsanitize=fuzzer "$target" $(lib_sources) -lm -o "$out"
    fi
  done
}

# libFuzzer targets, i386 like WASM (a size that wraps there wraps here), and
# where i386 runs under qemu (no ASan) also for x86-64 under ASan + UBSan, so
# that every target is always fuzzed under AddressSanitizer.
build_fuzz() {
  i386_runner
  if [ -z "$(cat build/i386-runner)" ]; then
    fuzz_targets build/fuzz "$I386_SANITIZE_FLAGS" "$I386_CHECKS"
    rm -rf build/fuzz64
  else
    fuzz_targets build/fuzz "$I386_SANITIZE_FLAGS" "$I386_CHECKS"
    fuzz_targets build/fuzz64 "$SANITIZE_FLAGS" "x86-64, ASan + UBSan"
  fi
}

case "$target" in
  deps) ensure_deps ;;
  native) ensure_deps; build_native ;;
  sanitize) ensure_deps; build_sanitize ;;
  native32) ensure_deps; build_native32 ;;
  fuzz) ensure_deps; build_fuzz ;;
  profile) build_wasm_profile ;;
  wasm) build_wasm; build_wasm_relaxed; build_wasm_threads; build_wasm_relaxed_threads; write_shell ;;
  all) ensure_deps; build_native; build_sanitize; build_native32; build_fuzz; build_wasm; build_wasm_relaxed; build_wasm_threads; build_wasm_relaxed_threads; write_shell ;;
  *) echo "usage: bash build.sh [all|wasm|native|sanitize|native32|fuzz|profile|deps]" >&2; exit 2 ;;
esac
