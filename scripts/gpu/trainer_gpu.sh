#!/usr/bin/env bash
# Trainer checks on an NVIDIA machine (issue 5). Run from the repository root after
# `pip install --no-deps -e .`:
#
#   scripts/gpu/trainer_gpu.sh tests   # pytest -m cuda tests/trainer tests/strategies (H100)
#   scripts/gpu/trainer_gpu.sh bench   # benchmarks/overhead.py --device cuda    (H100)
#   scripts/gpu/trainer_gpu.sh ddp     # 2-GPU DDP over nccl via accelplug launch (2x H200)
#   scripts/gpu/trainer_gpu.sh all     # the three in turn
#
# Results go to $OUT (default ./gpu_out): pytest output, overhead_cuda.json, the DDP log and weights.
set -uo pipefail

OUT="${OUT:-$PWD/gpu_out}"
PYTHON="${PYTHON:-python}"
mkdir -p "$OUT"
status=0

run_tests() {
    echo "== pytest -m cuda tests/trainer tests/strategies"
    "$PYTHON" -m pytest -m cuda tests/trainer tests/strategies -v -rs -p no:cacheprovider 2>&1 | tee "$OUT/trainer_cuda_tests.txt"
    return "${PIPESTATUS[0]}"
}

run_bench() {
    echo "== benchmarks/overhead.py --device cuda"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
    "$PYTHON" benchmarks/overhead.py --device cuda --json "$OUT/overhead_cuda.json" 2>&1 | tee "$OUT/overhead_cuda.txt"
    return "${PIPESTATUS[0]}"
}

run_ddp() {
    echo "== accelplug launch --devices 2 (nccl)"
    local count
    count=$("$PYTHON" -c "import torch; print(torch.cuda.device_count())")
    if [ "$count" -lt 2 ]; then
        echo "skipped: this machine has $count GPU(s); the DDP check needs 2" | tee "$OUT/ddp_nccl.txt"
        return 0
    fi
    local started=$SECONDS
    "$PYTHON" -m accelplug launch --accelerator cuda --devices 2 examples/ddp_example.py \
        --max-epochs 3 --out "$OUT/ddp_weights.pt" --root-dir "$OUT/ddp_run" 2>&1 | tee "$OUT/ddp_nccl.txt"
    local rc=${PIPESTATUS[0]}
    echo "launch exit code $rc after $((SECONDS - started)) s" | tee -a "$OUT/ddp_nccl.txt"
    [ "$rc" -eq 0 ] || return "$rc"
    "$PYTHON" - "$OUT/ddp_weights.pt" <<'PY' 2>&1 | tee -a "$OUT/ddp_nccl.txt"
import sys, torch
a = torch.load(sys.argv[1] + ".rank0", map_location="cpu", weights_only=True)
b = torch.load(sys.argv[1] + ".rank1", map_location="cpu", weights_only=True)
same = all(torch.equal(a[k], b[k]) for k in a)
print("weights identical on both ranks:", same)
sys.exit(0 if same else 1)
PY
    local check=${PIPESTATUS[0]}
    echo "== crashing rank on 2 GPUs must fail fast"
    started=$SECONDS
    "$PYTHON" -m accelplug launch --accelerator cuda --devices 2 examples/ddp_example.py --crash-rank 1 \
        --root-dir "$OUT/ddp_crash" > "$OUT/ddp_crash.txt" 2>&1
    local crash_rc=$?
    echo "crash run exit code $crash_rc after $((SECONDS - started)) s (expected non-zero, seconds)" \
        | tee -a "$OUT/ddp_nccl.txt"
    [ "$crash_rc" -ne 0 ] || return 1
    return "$check"
}

part="${1:-all}"
case "$part" in
    tests) run_tests || status=$? ;;
    bench) run_bench || status=$? ;;
    ddp) run_ddp || status=$? ;;
    all)
        run_tests || status=$?
        run_bench || status=$?
        run_ddp || status=$?
        ;;
    *) echo "usage: $0 [tests|bench|ddp|all]" >&2; exit 2 ;;
esac
echo "results in $OUT (exit status $status)"
exit "$status"
