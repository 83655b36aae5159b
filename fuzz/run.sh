#!/usr/bin/env bash
# npm run fuzz -- [SECONDS] [TARGET...]: builds the libFuzzer targets (build.sh
# fuzz: i386, ASan + UBSan; where the kernel runs no i386 programs, i386 under
# qemu-i386 with UBSan and x86-64 with ASan + UBSan) and runs each target of
# each build for SECONDS (default 60), from its committed seeds (fuzz/seeds/,
# made by fuzz/make_seeds.mjs) and its regression inputs (fuzz/regressions/:
# every crash found, kept). Prints the executions per target and build, with
# the sanitizers that checked them; exits non-zero on a finding (its input is
# left in build/fuzz/artifacts/) and when no build had AddressSanitizer.
#   FUZZ_RUNS=N   run N inputs per target instead of a time (CI: tests/fuzz.test.js)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_model fuzz_spm_load fuzz_spm_encode)
bash build.sh fuzz

# Huge requests (a fuzzed config asking for gigabytes) come back as NULL, which
# the library reports as out of memory; i386 has no leak checker.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0"
# qemu-i386 where this kernel runs no i386 programs (build.sh i386_runner):
# then the i386 targets (UBSan) and the x86-64 ones (ASan + UBSan) both run.
runner="$(cat build/i386-runner)"
builds=(build/fuzz)
[ -n "$runner" ] && builds+=(build/fuzz64)
mkdir -p build/fuzz/artifacts
limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
status=0 asan=0
for build in "${builds[@]}"; do
  sanitizers="$(cat "$build/sanitizers")"
  case "$sanitizers" in *ASan*) asan=1 ;; esac
  exec_prefix=()
  [ "$build" = build/fuzz ] && [ -n "$runner" ] && exec_prefix=("$runner")
  tag="${build#build/}"
  for target in "${targets[@]}"; do
    case "$target" in
      fuzz_model) options=(-max_len=16384 -dict=fuzz/model.dict); seeds=(fuzz/seeds/model) ;;
      fuzz_spm_load) options=(-max_len=65536); seeds=(fuzz/seeds/spm_load) ;;
      fuzz_spm_encode) options=(-max_len=4096); seeds=(fuzz/seeds/spm_encode) ;;
      *) echo "fuzz/run.sh: unknown target $target" >&2; exit 2 ;;
    esac
    [ -d "fuzz/regressions/$target" ] && seeds+=("fuzz/regressions/$target")
    # New inputs go to the first directory: kept between long runs; a fresh one
    # for a counted run (its own, this process's: another may run at once), so
    # that it depends on nothing left from earlier runs.
    if [ -n "${FUZZ_RUNS:-}" ]; then
      corpus="build/fuzz/runs-$$/corpus/$tag/$target"
      log="build/fuzz/runs-$$/$tag-$target.log"
    else
      corpus="build/fuzz/corpus/$target"
      log="build/fuzz/$tag-$target.log"
    fi
    mkdir -p "$corpus"
    mkdir -p "$(dirname "$log")"
    if "${exec_prefix[@]}" "$build/$target" "${limit[@]}" -print_final_stats=1 -rss_limit_mb=3000 -timeout=30 \
        -artifact_prefix="build/fuzz/artifacts/$tag-$target-" "${options[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
      echo "$target ($sanitizers): ${runs:-?} executions, no finding"
    else
      tail -40 "$log" >&2
      echo "$target ($sanitizers): FINDING (log $log, input in build/fuzz/artifacts/)" >&2
      status=1
    fi
  done
done
rm -rf "build/fuzz/runs-$$/corpus"  # a counted run's inputs (its logs stay)
if [ "$asan" = 0 ]; then
  echo "fuzz/run.sh: no fuzz build had AddressSanitizer" >&2
  status=1
fi
exit $status
