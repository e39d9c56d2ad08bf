#!/usr/bin/env bash
# compile, FSDP and the Trainer side by side on an NVIDIA machine (issue 13; issue 15 with 2+ GPUs).
# Run from the repository root on the lent machine:
#
#   source scripts/gpu/setup.sh && scripts/gpu/scale_gpu.sh all      # one H100 call: CUDA tests, then benchmarks
#   scripts/gpu/scale_gpu.sh tests     # pytest -m cuda on the FSDP/compile tests (a few minutes)
#   scripts/gpu/scale_gpu.sh bench     # benchmarks/trainer_gpu.py within BUDGET_S (default 450 s)
#   scripts/gpu/scale_gpu.sh multi     # benchmarks/multi_gpu.py (2+ GPUs: checkpoint, FSDP under a cap, DDP)
#
# `all` keeps the whole call within TOTAL_S (default 510 s): the benchmark gets what the tests left,
# less a minute for its start and the run that may already be under way when the budget ends.
# Results go to $OUT (default ./gpu_out), at most three files per mode.
set -uo pipefail

OUT="${OUT:-$PWD/gpu_out}"
PYTHON="${PYTHON:-python3}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p "$OUT"
started=$SECONDS
status=0

run_tests() {
    echo "== pytest -m cuda (FSDP, compile)"
    timeout "${TESTS_S:-240}" "$PYTHON" -m pytest -m cuda tests/strategies/test_cuda_scale.py -v -rs \
        -p no:cacheprovider 2>&1 | tee "$OUT/cuda_scale_tests.txt"
    return "${PIPESTATUS[0]}"
}

run_bench() {
    local budget="${1:-${BUDGET_S:-450}}"
    echo "== benchmarks/trainer_gpu.py (budget ${budget} s)"
    "$PYTHON" benchmarks/trainer_gpu.py --out "$OUT" --budget-s "$budget"
}

run_multi() {
    echo "== benchmarks/multi_gpu.py"
    "$PYTHON" benchmarks/multi_gpu.py --out "$OUT" ${MULTI_ARGS:-}
}

case "${1:-all}" in
    tests) run_tests || status=$? ;;
    bench) run_bench || status=$? ;;
    multi) run_multi || status=$? ;;
    all)
        run_tests || status=$?
        left=$(( ${TOTAL_S:-510} - (SECONDS - started) - 60 ))
        if [ "$left" -lt 120 ]; then left=120; fi
        run_bench "$left" || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }
        ;;
    *) echo "usage: $0 [all|tests|bench|multi]" >&2; exit 2 ;;
esac
echo "results in $OUT after $((SECONDS - started)) s (exit status $status)"
exit "$status"
