#!/usr/bin/env bash
# Every single-GPU check of this round in one call on the lent H100, from the repository root:
#
#   bash scripts/gpu/run_checks.sh [cvd] [tests] [bench] [perf]     # default: all four
#
#   cvd    scripts/gpu/cuda_visible_devices.py: accelplug's count against the CUDA runtime's (issue 11)
#   tests  pytest -m cuda over the whole suite (CUDA tests skip on CPU-only CI; they run here)
#   bench  scripts/gpu/bench_gpu.py: accelplug bench through the Trainer beside a hand-written loop
#   perf   benchmarks/trainer_gpu.py: eager/compile/FSDP against hand-written, Lightning, Accelerate
#
# The machine has no network: setup.sh installs the wheels carried in .gpu_wheels/ (pass
# carry=[".gpu_wheels"]). Results are packed into $OUT/results.tgz (the device tool returns at most 8
# files), and each step's last lines are printed.
set -uo pipefail
OUT="${OUT:-$PWD/gpu_out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(cvd tests bench perf)
source scripts/gpu/setup.sh > "$OUT/setup.txt" 2>&1
tail -2 "$OUT/setup.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
status=0
for step in "${steps[@]}"; do
  started=$SECONDS
  log="$OUT/$step.txt"
  case "$step" in
    cvd) timeout 150 python3 scripts/gpu/cuda_visible_devices.py --json "$OUT/cvd.json" > "$log" 2>&1 ;;
    tests) timeout 300 python3 -m pytest -q -m cuda -rs -p no:cacheprovider --timeout 150 tests > "$log" 2>&1 ;;
    bench) timeout 280 python3 scripts/gpu/bench_gpu.py --out "$OUT/bench_gpu" > "$log" 2>&1 ;;
    perf) timeout "${PERF_S:-560}" python3 benchmarks/trainer_gpu.py --out "$OUT/perf" \
            --budget-s "$(( ${PERF_S:-560} - 40 ))" > "$log" 2>&1 ;;
    *) echo "unknown step $step"; status=2; continue ;;
  esac
  code=$?
  [ $code -ne 0 ] && status=1
  echo "== $step: exit $code in $((SECONDS - started)) s"
  tail -n 25 "$log" | cut -c1-220
done
tar czf /tmp/results.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv /tmp/results.tgz "$OUT/"
exit $status
