#!/usr/bin/env bash
# Prepare the lent GPU machine (no network): install the wheels carried in .gpu_wheels/ that its image
# lacks, then accelplug itself in editable mode. Usage: source scripts/gpu/setup.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
(  # a subshell, so that `set -e` does not leak into the shell that sources this file
set -euo pipefail
PY=${PY:-python3}
missing=()
for wheel in .gpu_wheels/*.whl; do
  dist=$(basename "$wheel" | cut -d- -f1)
  module=${dist,,}
  case "$module" in python_dotenv) module=dotenv ;; py_cpuinfo) module=cpuinfo ;; nvidia_ml_py) module=pynvml ;; esac
  $PY -c "import $module" 2>/dev/null || missing+=("$wheel")
done
if [ ${#missing[@]} -gt 0 ]; then
  $PY -m pip install -q --no-deps --no-index "${missing[@]}"
fi
$PY -m pip install -q --no-deps --no-build-isolation -e .
$PY -c "import torch, accelplug; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"
)
