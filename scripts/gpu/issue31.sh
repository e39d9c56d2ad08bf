#!/usr/bin/env bash
# Issue 31 on a 2-GPU machine, one call per group of tables, from a copy of the repository's root:
#
#   bash scripts/gpu/issue31.sh ddp     # crash-to-exit (benchmarks/crash_exit.py), then DDP eager and compiled
#   bash scripts/gpu/issue31.sh fsdp    # FSDP against hand-written FSDP2, then the Llama-style anchor (+ fp8)
#   bash scripts/gpu/issue31.sh fsdpbase  # FSDP against the fair hand-written FSDP2 loop (raw) and the earlier one
#                                       # (raw-old), 3 rotated rounds of separate jobs, profiled steps; then one job
#                                       # changing one thing of raw-old at a time (why raw-old was slower)
#   bash scripts/gpu/issue31.sh launchers # the hand-written loop under accelplug launch, the Trainer under torchrun
#   bash scripts/gpu/issue31.sh final   # the anchor again (compiled activation checkpointing), FSDP one job per
#                                       # run, compiled DDP ResNet50
#
# The machine has no network: wheels the image lacks travel in .whl/ (pydantic & co. for accelplug itself,
# torchao for fp8) and go to /tmp/site; accelplug runs from src/ on PYTHONPATH. Each step runs under its own
# time limit; logs, JSON and markdown go to $OUT, packed into $OUT/results.tgz at the end (the markdown
# summaries are also left beside it and printed).
set -uo pipefail
OUT="${OUT:-$PWD/gpu_out}"
mkdir -p "$OUT/work"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD=1
started=$SECONDS
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
    > "$OUT/work/setup.txt" 2>&1 || { echo "wheel install failed"; cat "$OUT/work/setup.txt"; }
fi
export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import torch, accelplug; print('torch', torch.__version__, 'gpus', torch.cuda.device_count(), torch.cuda.get_device_name(0))" \
  2>&1 | tee "$OUT/work/env.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader >> "$OUT/work/env.txt" 2>&1
nvidia-smi topo -m >> "$OUT/work/env.txt" 2>&1
left() { echo $(( ${TOTAL_S:-585} - (SECONDS - started) )); }
step() {  # step NAME LIMIT COMMAND...
  local name=$1 limit=$2
  shift 2
  local have
  have=$(left)
  if [ "$limit" -gt "$((have - 15))" ]; then limit=$((have - 15)); fi
  if [ "$limit" -lt 30 ]; then echo "== $name: skipped (no time left)"; return; fi
  echo "== $name (limit ${limit} s, $(left) s left)"
  timeout -k 5 "$limit" "$@" > "$OUT/work/$name.log" 2>&1
  echo "== $name: exit $? after $((SECONDS - started)) s"
}
case "${1:-ddp}" in
  ddp)
    step crash "${CRASH_S:-150}" python3 benchmarks/crash_exit.py ${BENCH_ARGS:-} --out "$OUT/work/crash" --repeats 2 --budget-s 105
    step ddp "${DDP_S:-420}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/ddp" --parts ddp,ddp-compile \
      --one-gpu no --rounds 3 --steps 80 --warmup 10 --models ${MODELS:-bert,resnet50} --profile --profile-models ${MODELS:-resnet50} \
      --compiled-loops raw,raw-inner,accelplug --budget-s 400
    ;;
  fsdp)
    step fsdp "${FSDP_S:-200}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/fsdp" --parts fsdp \
      --fsdp-groups "raw,fsdp+lightning-fsdp" --fsdp-rounds 3 --fsdp-steps 20 --budget-s 190
    step llm "${LLM_S:-370}" python3 benchmarks/llm_fsdp.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/llm" --loops raw,trainer,trainer-fp8 \
      --rounds 2 --steps 20 --warmup 4 --timeout-s 350
    ;;
  final)  # the Llama anchor with the strategy's compiled activation checkpointing, FSDP in separate jobs, compiled ResNet50
    step llm "${LLM_S:-200}" python3 benchmarks/llm_fsdp.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/llm" \
      --loops raw,trainer,trainer-composable,trainer-fp8 --rounds 2 --steps 20 --warmup 4 --timeout-s 190
    step fsdp "${FSDP_S:-190}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/fsdp" --parts fsdp \
      --fsdp-groups "raw+fsdp+fsdp+raw" --fsdp-steps 20 --budget-s 180
    step ddpc "${DDPC_S:-300}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/ddpc" \
      --parts ddp-compile --one-gpu no --models ${MODELS:-resnet50} --compiled-loops raw,raw-inner,accelplug --steps 80 \
      --warmup 10 --budget-s 400
    ;;
  fsdpbase)
    step fsdp "${FSDP_S:-420}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/fsdp" --parts fsdp \
      --fsdp-groups "raw-old+raw+fsdp+fsdp+raw-old+raw+raw+fsdp+raw-old" --fsdp-steps 30 --fsdp-profile-steps 3 \
      --budget-s 410
    step diag "${DIAG_S:-160}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/diag" \
      --parts fsdp --fsdp-groups "raw-old,raw-tf32,raw-free,raw-nocache,raw,raw-reshard-root" --fsdp-rounds 1 \
      --fsdp-steps 30 --budget-s 150
    ;;
  launchers)  # the same loops each under the other launcher: raw@accelplug (accelplug launch), fsdp@torchrun
    step fsdp "${FSDP_S:-300}" python3 benchmarks/multi_gpu.py ${BENCH_ARGS:-} ${QUICK:-} --out "$OUT/work/launchers" \
      --parts fsdp --fsdp-steps 30 --budget-s "${LAUNCHERS_BUDGET_S:-290}" \
      --fsdp-groups "raw@accelplug+raw+fsdp@torchrun+fsdp+fsdp+fsdp@torchrun+raw+raw@accelplug"
    ;;
  *) echo "usage: $0 ddp|fsdp|fsdpbase|launchers|final" >&2; exit 2 ;;
esac
for f in "$OUT"/work/*/*.md; do echo "---- $f"; cat "$f"; cp "$f" "$OUT/$(basename "$(dirname "$f")")_$(basename "$f")"; done
for f in "$OUT"/work/*.log; do echo "---- tail $f"; tail -n 8 "$f" | cut -c1-300; done
tar czf "$OUT/results.tgz" -C "$OUT" work && rm -rf "$OUT/work"
ls -la "$OUT"
