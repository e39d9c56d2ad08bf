#!/usr/bin/env bash
# Prove the accelplug-torch-accelerator bridge on a real GPU (issue #4), on the lent machine.
#
# Run from the repository root after `source scripts/gpu/setup.sh` (accelplug installed, no network):
#     bash scripts/gpu/plugin_bridge_gpu.sh
# It pip-installs plugins/accelplug-torch-accelerator into a scratch --target folder (setuptools
# backend, which torch itself depends on, so --no-build-isolation works offline), then, with that
# folder on PYTHONPATH so accelplug finds the plugin through its entry point:
#   1. registry report without forcing: the bridge must step aside for the built-in 'cuda';
#   2. the plugin's own tests (the accelplug.testing conformance suite) with
#      ACCELPLUG_TORCH_ACCELERATOR_FORCE=1, so every device check runs on the real GPU;
#   3. the built-in CUDA accelerator against the same conformance suite (tests/plugin_kit);
#   4. a Trainer-free training run on the bridged device, forced on;
#   5. `accelplug list`, where the CLI has it.
# Everything lands in $OUT (default ./gpu_out); summary.txt has one PASS/FAIL line per step, and the
# script exits non-zero if any step failed.
set -uo pipefail
PY=${PY:-python3}
case $PY in */*) [[ $PY == /* ]] || PY="$PWD/$PY" ;; esac  # steps below change directory
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
failed=0

step() {  # step NAME LOGFILE COMMAND...: run, log stdout+stderr, record PASS/FAIL
  local name=$1 log=$2
  shift 2
  if "$@" >"$OUT/$log" 2>&1; then
    echo "PASS $name ($log)" | tee -a "$SUMMARY"
  else
    echo "FAIL $name (exit $?, see $log)" | tee -a "$SUMMARY"
    failed=1
  fi
}

{
  echo "date: $(date -u +%FT%TZ)"
  $PY -c "import sys, torch; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvidia-smi -L 2>&1 || true
} >"$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

if ! $PY -c "import accelplug, setuptools" 2>"$OUT/preflight.txt"; then
  echo "FAIL preflight: accelplug or setuptools is not importable (source scripts/gpu/setup.sh first)" | tee -a "$SUMMARY"
  cat "$OUT/preflight.txt"
  exit 1
fi

SCRATCH=$(mktemp -d)
SITE="$SCRATCH/site"
cp -r plugins/accelplug-torch-accelerator "$SCRATCH/src"
rm -rf "$SCRATCH/src/build" "$SCRATCH"/src/src/*.egg-info
step "pip install plugins/accelplug-torch-accelerator" pip_install.txt \
  $PY -m pip install --no-deps --no-build-isolation --no-index --target "$SITE" "$SCRATCH/src"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
unset ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD ACCELPLUG_PLUGINS ACCELPLUG_TORCH_ACCELERATOR_FORCE

REPORT='
import json, sys, torch
from accelplug import get_registry
r = get_registry()
bridge = r.get("torch_accelerator")
report = {
    "names": r.names(),
    "available": r.available(),
    "failures": [str(f) for f in r.failures()],
    "bridge_source": [r.source("torch_accelerator").plugin, r.source("torch_accelerator").distribution],
    "bridge_device_type": bridge.device_type,
    "bridge_available": bridge.is_available(),
    "bridge_reason": bridge.unavailable_reason(),
    "bridge_device_count": bridge.device_count(),
    "cuda_initialized_after_queries": torch.cuda.is_initialized(),
}
print(json.dumps(report, indent=2))
forced = sys.argv[1] == "forced"
ok = (
    not report["failures"]
    and report["bridge_device_type"] == "cuda"
    and not report["cuda_initialized_after_queries"]
    and report["bridge_available"] == forced
    and (forced or "already serves" in (report["bridge_reason"] or ""))
    and (not forced or report["bridge_device_count"] == torch.cuda.device_count())
    and report["available"][0] == "cuda"
)
sys.exit(0 if ok else 1)
'
step "registry: bridge steps aside for cuda" registry_unforced.json $PY -c "$REPORT" unforced
step "registry: bridge forced on" registry_forced.json env ACCELPLUG_TORCH_ACCELERATOR_FORCE=1 $PY -c "$REPORT" forced

if $PY -c "import pytest" 2>/dev/null; then
  step "bridge plugin tests + conformance, forced onto the GPU" pytest_bridge_forced.txt \
    env ACCELPLUG_TORCH_ACCELERATOR_FORCE=1 bash -c "cd '$SCRATCH/src' && $PY -m pytest -v -rs -p no:cacheprovider --junitxml '$OUT/pytest_bridge_forced.xml'"
  # The device checks must have run on the GPU, not skipped.
  ran='AsThisMachineIs::test_(a_training_step_on_device_0_lowers_the_loss|setup_device_and_teardown_run_on_device_0|get_device_stats_maps_names_to_floats) PASSED'
  step "conformance device checks ran (not skipped) on the GPU" conformance_ran_on_gpu.txt \
    bash -c "grep -E '$ran' '$OUT/pytest_bridge_forced.txt' && test \$(grep -cE '$ran' '$OUT/pytest_bridge_forced.txt') -eq 3"
  step "bridge plugin tests + conformance, not forced" pytest_bridge_unforced.txt \
    bash -c "cd '$SCRATCH/src' && $PY -m pytest -v -rs -p no:cacheprovider"
  step "built-in CUDA against the conformance suite" pytest_builtin_cuda.txt \
    $PY -m pytest -v -rs -p no:cacheprovider tests/plugin_kit/test_builtin_conformance.py -k CUDA
else
  echo "FAIL pytest is not installed: add its wheels (pytest, iniconfig, pygments) to .gpu_wheels/" | tee -a "$SUMMARY"
  failed=1
fi

TRAIN='
import json, os, time, torch
from accelplug import get_registry
cls = get_registry().get("torch_accelerator")
assert cls.is_available(), cls.unavailable_reason()
initialized_before_setup = torch.cuda.is_initialized()
accelerator = cls()
device = cls.get_device(0)
accelerator.setup_device(device)
torch.manual_seed(0)
x = torch.randn(4096, 32, device=device)
w_true = torch.randn(32, 1, device=device)
y = torch.tanh(x @ w_true / 8)  # smooth and learnable: the loss must fall well within 300 steps
model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
losses = []
start = time.perf_counter()
for step in range(300):
    batch = slice((step * 256) % 4096, (step * 256) % 4096 + 256)
    with torch.autocast(device.type, dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x[batch]).float(), y[batch])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
elapsed = time.perf_counter() - start
stats = accelerator.get_device_stats(device)
result = {
    "accelerator": cls.name,
    "device": str(device),
    "device_name": torch.cuda.get_device_name(device),
    "current_device_after_setup": torch.cuda.current_device(),
    "parameters_on": sorted({p.device.type for p in model.parameters()}),
    "cuda_initialized_before_setup_device": initialized_before_setup,
    "first_loss": losses[0],
    "last_loss": sum(losses[-20:]) / 20,
    "steps": len(losses),
    "seconds": round(elapsed, 3),
    "stats_keys": len(stats),
    "allocated_bytes_current": stats.get("allocated_bytes.all.current"),
}
accelerator.teardown()
print(json.dumps(result, indent=2))
assert not initialized_before_setup
assert result["parameters_on"] == ["cuda"]
assert result["last_loss"] < 0.5 * result["first_loss"], result
assert result["stats_keys"] > 0
'
step "Trainer-free bf16 training run on the bridged GPU" bridge_training.json \
  env ACCELPLUG_TORCH_ACCELERATOR_FORCE=1 $PY -c "$TRAIN"

if $PY -c "import accelplug.cli" 2>/dev/null; then
  ACCELPLUG_TORCH_ACCELERATOR_FORCE=1 $PY -m accelplug list >"$OUT/accelplug_list_forced.txt" 2>&1 || true
  $PY -m accelplug list >"$OUT/accelplug_list.txt" 2>&1 || true
fi

rm -rf "$SCRATCH"
echo "---"
cat "$SUMMARY"
exit $failed
