#!/usr/bin/env bash
# DeepSpeed through accelplug-deepspeed on one lent GPU (issue 23), no network. From the repository root:
#     bash scripts/gpu/deepspeed_check.sh
# 1. scripts/gpu/setup.sh installs the carried wheels this image lacks (.gpu_wheels/: deepspeed built with
#    DS_BUILD_OPS=0 and its dependencies) and accelplug; then plugins/accelplug-deepspeed (editable, no index);
# 2. trains one small LightningModule in float32 with strategy "single_device" (the reference), then
#    "deepspeed_stage_2", "deepspeed_stage_3" and "deepspeed_stage_2_offload" (ZeRO-Offload, with DeepSpeedCPUAdam,
#    which DeepSpeed compiles on first use): each 2 epochs in one go, then 1 epoch + save and a resume to 2 epochs;
# 3. prints one summary line per case (PASS/FAIL: loss curve within 1e-3 relative of single_device, resumed curve
#    within 1e-3 of the uninterrupted one). Logs and JSON land in $OUT (default ./gpu_out/deepspeed).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 DS_ACCELERATOR=cuda
PY=${PY:-python3}
OUT=${OUT:-$PWD/gpu_out}/deepspeed
mkdir -p "$OUT"
start=$SECONDS
# the carried wheels this image lacks (deepspeed and its dependencies among them) and accelplug itself
source scripts/gpu/setup.sh >"$OUT/install.log" 2>&1 || { echo "FAIL scripts/gpu/setup.sh (see $OUT/install.log)"; exit 1; }
$PY -m pip install -q --no-deps --no-build-isolation -e plugins/accelplug-deepspeed >>"$OUT/install.log" 2>&1 \
  || { echo "FAIL install of accelplug / accelplug-deepspeed (see $OUT/install.log)"; exit 1; }
$PY -c "import torch, deepspeed; print('torch', torch.__version__, 'deepspeed', deepspeed.__version__, torch.cuda.get_device_name(0))" 2>/dev/null | tail -1
failed=0
for case in single_device deepspeed_stage_2 deepspeed_stage_3 deepspeed_stage_2_offload; do
  if ! timeout 150 $PY scripts/gpu/deepspeed_check.py "$case" "$OUT" >"$OUT/$case.log" 2>&1; then
    failed=1
    reason=$(grep -E "Error|Exception" "$OUT/$case.log" | tail -1 | cut -c1-300)
    echo "FAIL $case: exit status nonzero ($reason); log $OUT/$case.log"
    [ "$case" = single_device ] && exit 1
    continue
  fi
  line=$(grep -E "^(REF|PASS|FAIL) " "$OUT/$case.log" | tail -1)
  echo "$line"
  [[ $line == FAIL* ]] && failed=1
done
echo "total $((SECONDS - start)) s"
exit $failed
