"""Several GPUs (issue 15): DDP scaling, FSDP under a memory cap, a sharded checkpoint from 2 GPUs resumed on 1.

    python benchmarks/multi_gpu.py --out "$OUT"                          # a 2-GPU machine (or more: --gpus 2,4)
    python benchmarks/multi_gpu.py --device cpu --quick --models mlp --out /tmp/mg   # checks it with gloo on a CPU

Every measurement runs in fresh processes started the way a user would start them, with
``NCCL_NVLS_ENABLE=0``, ``TORCH_SYMM_MEM_DISABLE_MULTICAST=1`` and ``NVSHMEM_DISABLE_NVLS=1`` in every
child's environment:

- ``ddp``: ResNet50 bs128 and BERT-base bs64 per GPU (bf16 autocast, data pre-made on each GPU) on 1 GPU
  and on N GPUs: a hand-written loop (``torchrun``; ``DistributedDataParallel`` when N > 1), accelplug
  (``accelplug launch --devices N``, ``strategy="ddp"``) and Lightning (``torchrun``, ``strategy="ddp"``);
  then hand-written and accelplug again with ``compile=True`` (hand-written: ``torch.compile(DDP(model))``;
  ``raw-inner``: ``DDP(torch.compile(model))``). Throughput is the sum over ranks; scaling is N GPUs over
  1 GPU for the same loop (``--one-gpu no`` skips the 1-GPU runs); each loop is also compared with the
  hand-written loop of the same round (median and range). ``--profile`` adds ``torch.profiler`` traces of
  the hand-written and accelplug loops on every rank, with per-step counts of host synchronisations.
- ``fsdp``: a 0.94B-parameter transformer (``examples/fsdp_example.py``'s blocks, width 2048, depth 16,
  AdamW, bf16-mixed, activation checkpointing) with each process capped at ``--cap-gib`` GiB by
  ``torch.cuda.set_per_process_memory_fraction``: accelplug ``ddp`` (expected: out of memory; fp32
  weights, gradients and AdamW state alone need 14 GiB: 16 bytes a parameter), accelplug ``fsdp`` and Lightning's
  ``FSDPStrategy`` on the same model, and ``raw``, a hand-written FSDP2 loop (``fully_shard`` per block,
  the same policies, the Trainer's CUDA defaults), on N GPUs: peak memory per GPU, tokens/s, the caching
  allocator's retries and peak reserved memory. ``raw-old`` is the hand-written loop measured before, and
  ``raw-tf32``, ``raw-free``, ``raw-nocache``, ``raw-reshard-root`` change one thing each (``RAW_VARIANTS``).
  ``--fsdp-groups`` says which run in one job (``,``) and which in separate jobs (``+``), e.g.
  ``raw+fsdp+fsdp+raw``: interleaved runs, separate jobs; ``raw@accelplug`` / ``fsdp@torchrun`` start a job
  under the other launcher. ``--fsdp-profile-steps N`` runs N more steps after each loop's timed window under
  ``torch.profiler`` and reports device time per step by kind of kernel and the costliest kernels.
- ``checkpoint``: ``examples/fsdp_example.py`` saves a sharded (DCP) checkpoint on N GPUs; one GPU
  resumes it; its losses must equal an uninterrupted one-GPU run's.

Writes ``multi_gpu.json`` and ``multi_gpu.md`` into ``--out`` (default ``$OUT``). Exit status 0 when every
run worked and the checkpoint check passed, 1 otherwise (errors in both files), 3 when the budget ran out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


# ---- children: what one process of a run does ------------------------------------------------------


def child_ddp(args: argparse.Namespace) -> None:
    """Every loop of ``--loops`` in this one process, in rounds with a rotating order; one result file per rank."""
    import torch

    sys.path.insert(0, str(HERE.parent))
    from workloads import LoopConfig, measure, workloads

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.set_float32_matmul_precision("high")
        torch.backends.cudnn.benchmark = True
    if world > 1:  # one group for every loop of this process (the Trainers reuse an initialised group)
        import torch.distributed as dist

        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, device_id=device if device.type == "cuda" else None)
    config = LoopConfig(device, args.precision, compile=args.compile, strategy="ddp" if world > 1 else "auto")
    work = workloads(args.quick)[args.model]
    steps, warmup = (4, 3) if args.quick else (args.steps, args.warmup)
    loops = args.loops.split(",")
    measured: dict[str, list[float]] = {loop: [] for loop in loops}
    for round_index in range(args.rounds):
        for loop in loops[round_index % len(loops) :] + loops[: round_index % len(loops)]:
            measured[loop].append(measure(loop, work, config, steps, warmup)["throughput"])
    profiles = {}
    if args.profile_dir:
        for loop in [lp for lp in loops if lp in ("raw", "accelplug")]:
            profiles[loop] = _profile(loop, work, config, Path(args.profile_dir), rank)
    _end_process_group()
    _result(args, {"rank": rank, "world": world, "throughput": measured, "profiles": profiles})


#: Host-side calls that wait for the device (a synchronisation a step should not need).
_SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent")


def _profile(loop: str, work: Any, config: Any, folder: Path, rank: int) -> dict[str, Any]:
    """One short run of ``loop`` under ``torch.profiler``: per-step counts of what the host waits for, the time
    of the step on the host and of NCCL and compute kernels on the device; a trace per rank (gzip'ed)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    from workloads import TimedBatches, make_batches

    active, warm = 5, 6
    batches = make_batches(work, config.device, warm + active + 4)
    folder.mkdir(parents=True, exist_ok=True)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if config.device.type == "cuda" else [])
    with profile(activities=activities, schedule=schedule(wait=0, warmup=warm, active=active, repeat=1)) as prof:

        class Stepping(TimedBatches):
            def __iter__(self) -> Any:
                for batch in super().__iter__():
                    prof.step()
                    yield batch

        from workloads import LOOPS

        LOOPS[loop](work, Stepping(batches, config.device, warmup=2), config)
    prof.export_chrome_trace(str(folder / f"{loop}_rank{rank}.json"))
    import gzip
    import shutil

    trace = folder / f"{loop}_rank{rank}.json"
    with trace.open("rb") as src, gzip.open(f"{trace}.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    trace.unlink()
    counts: dict[str, float] = {}
    device_us = {"nccl": 0.0, "compute": 0.0}
    step_us: list[float] = []
    for event in prof.key_averages():
        name = event.key
        if name in _SYNCS or name in ("aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync", "aten::copy_"):
            counts[name] = event.count / active
        device_time = getattr(event, "device_time_total", 0.0) or 0.0
        if getattr(event, "device_type", None) is not None and str(event.device_type).endswith("CUDA"):
            device_us["nccl" if "nccl" in name.lower() else "compute"] += device_time
        if name.startswith("ProfilerStep"):
            step_us.append(event.cpu_time_total / max(1, event.count))
    torch.cuda.synchronize() if config.device.type == "cuda" else None
    return {
        "per_step_calls": counts,
        "host_step_ms": round(step_us[0] / 1000, 3) if step_us else None,
        "device_ms_per_step": {k: round(v / 1000 / active, 3) for k, v in device_us.items()},
    }


def _end_process_group() -> None:
    """Every rank waits for the others, then releases the group (gloo aborts when a peer has already exited)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def child_fsdp(args: argparse.Namespace) -> None:
    import torch

    sys.path.insert(0, str(HERE.parent))
    from workloads import TimedBatches

    spec_path = REPO / "examples" / "fsdp_example.py"
    import importlib.util

    spec = importlib.util.spec_from_file_location("fsdp_example", spec_path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    local, rank = int(os.environ.get("LOCAL_RANK", "0")), int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    device = torch.device("cuda", local) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, args.cap_gib * 2**30 / total), device)
    width, depth, heads, seq, batch, vocab = (32, 2, 2, 16, 2, 64) if args.quick else (2048, 16, 16, 512, 4, 32000)
    steps = 4 if args.quick else max(4, args.fsdp_steps)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(rank)
    tokens = torch.randint(0, vocab, (steps, batch, seq), generator=generator)
    batches = [(tokens[i].to(device), tokens[i].roll(-1, dims=1).to(device)) for i in range(steps)]
    # timed from batch 2 to the last: set-up, lazy imports (DDP's first use imports dynamo: ~1.5 s) and the
    # first steps are outside the window for every loop alike
    strategies = [name for name in args.fsdp_strategy.split(",") if name]
    if world > 1:  # one group for every loop of this process, as in child_ddp (the Trainers reuse it)
        import torch.distributed as dist

        dist.init_process_group(
            "nccl" if device.type == "cuda" else "gloo", device_id=device if device.type == "cuda" else None
        )
    figures: dict[str, Any] = {"rank": rank, "world": world, "oom": False, "rounds": {n: [] for n in strategies}}
    figures["allocator"] = {n: [] for n in strategies}
    figures["profile"] = {}
    peaks: dict[str, list[float]] = {n: [] for n in strategies}
    extra = [batches[i % len(batches)] for i in range(args.fsdp_profile_steps)]
    for round_index in range(args.fsdp_rounds if len(strategies) > 1 else 1):
        shift = round_index % len(strategies)
        for strategy in strategies[shift:] + strategies[:shift]:
            timed = TimedBatches(batches, device, warmup=2)
            # the profiled steps (if any) come after the timed window, so profiling never slows what is timed
            data = _ProfiledTail(timed, extra if round_index == 0 else [], device)
            before = _allocator_counts(device)
            try:
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                if strategy in RAW_VARIANTS:
                    model = _raw_fsdp2(example, device, (vocab, width, depth, heads), data, strategy)
                else:
                    model, trainer_fit = _fsdp_trainer(args, strategy, example, device, (vocab, width, depth, heads))
                    trainer_fit(model, data)
                    del trainer_fit
            except torch.cuda.OutOfMemoryError as exc:
                peak = torch.cuda.max_memory_allocated(device) / 2**30
                error = f"{strategy}: peak {peak:.2f} GiB allocated before: {exc}"[:700]
                _result(args, {"rank": rank, "world": world, "oom": True, "error": error})
                os._exit(17)  # the launcher ends the other ranks (which would wait in a collective) at once
            data.finish()
            figures["rounds"][strategy].append(timed.timed_steps * batch * seq / timed.seconds)
            after = _allocator_counts(device)
            figures["allocator"][strategy].append({k: after[k] - before.get(k, 0) for k in after})
            if data.summary is not None:
                figures["profile"][strategy] = data.summary
            if device.type == "cuda":
                peaks[strategy].append(torch.cuda.max_memory_allocated(device) / 2**30)
            figures["parameters"] = sum(_local_numel(p) for p in model.parameters()) * (
                world if strategy != "ddp" else 1
            )
            del model
            import gc

            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
    _end_process_group()
    import statistics as stats

    figures["tokens_per_s"] = {n: stats.median(v) for n, v in figures["rounds"].items()}
    figures["peak_memory_gib"] = {n: max(v) for n, v in peaks.items()} if device.type == "cuda" else None
    _result(args, figures)


def _allocator_counts(device: Any) -> dict[str, float]:
    """The caching allocator's counters that say whether it had to give memory back under the cap: retries after a
    failed cudaMalloc (each frees the cache and synchronises), cudaMalloc/cudaFree calls, peak reserved GiB."""
    import torch

    if device.type != "cuda":
        return {}
    stats = torch.cuda.memory_stats(device)
    return {
        "alloc_retries": stats.get("num_alloc_retries", 0),
        "device_mallocs": stats.get("num_device_alloc", 0),
        "device_frees": stats.get("num_device_free", 0),
        "reserved_peak_gib": round(stats.get("reserved_bytes.all.peak", 0) / 2**30, 3),
    }


class _ProfiledTail:
    """The timed batches, then ``extra`` batches under ``torch.profiler`` (CPU and CUDA): per optimizer step, the
    device time by kind of kernel (matmuls, of which TF32/float32 ones, NCCL, attention, the rest), the host's
    wall time, allocator calls, and the kernels that took the most time.

    The profiler starts when the first extra batch is taken and stops after ``len(extra)`` optimizer steps (an
    optimizer step hook), so a loop that fetches one batch ahead (the Trainer) and one that does not (the
    hand-written loop) are profiled over the same number of whole steps."""

    def __init__(self, timed: Any, extra: list[Any], device: Any) -> None:
        self.timed, self.extra, self.device = timed, extra, device
        self.summary: dict[str, Any] | None = None
        self._prof: Any = None
        self._hook: Any = None
        self._steps = 0
        self._started = 0.0

    def __len__(self) -> int:
        return len(self.timed) + len(self.extra)

    def __iter__(self) -> Any:
        yield from self.timed
        if not self.extra:
            return
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook
        from torch.profiler import ProfilerActivity, profile

        cuda = self.device.type == "cuda"
        if cuda:
            torch.cuda.synchronize(self.device)
        self._prof = profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else []))
        self._prof.__enter__()
        self._hook = register_optimizer_step_post_hook(self._stepped)
        self._started = time.perf_counter()
        yield from self.extra

    def _stepped(self, *_: Any) -> None:
        self._steps += 1
        if self._steps == len(self.extra):
            self.finish()

    def finish(self) -> None:
        """Stop profiling (idempotent): after the last profiled step, or when the loop ended first."""
        if self._prof is None:
            return
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        wall = time.perf_counter() - self._started
        self._hook.remove()
        prof, self._prof = self._prof, None
        prof.__exit__(None, None, None)
        self.summary = _profile_summary(prof, wall)


def _profile_summary(prof: Any, wall_s: float) -> dict[str, Any]:
    kinds = {"matmul": 0.0, "matmul_fp32_or_tf32": 0.0, "nccl": 0.0, "attention": 0.0, "other": 0.0}
    top: list[tuple[float, int, str]] = []
    host = {"cudaMalloc": 0, "cudaFree": 0, "cudaStreamSynchronize": 0, "cudaDeviceSynchronize": 0}
    steps = 0
    for event in prof.key_averages():
        name = event.key
        on_device = str(getattr(event, "device_type", "")).endswith("CUDA")
        if name.startswith("Optimizer.step#") and not on_device:  # its GPU-side annotation is listed too
            steps += event.count
        if name in host:
            host[name] += event.count
        us = float(getattr(event, "self_device_time_total", 0.0) or getattr(event, "device_time_total", 0.0) or 0.0)
        if not on_device or us <= 0:
            continue
        low = name.lower()
        if "nccl" in low:
            kinds["nccl"] += us
        elif any(k in low for k in ("gemm", "xmma", "cutlass", "cublas", "matmul", "nvjet")):
            kinds["matmul"] += us
            if ("tf32" in low or "f32f32" in low or "sgemm" in low) and "bf16" not in low:
                kinds["matmul_fp32_or_tf32"] += us
        elif any(k in low for k in ("flash", "fmha", "attention", "sdpa")):
            kinds["attention"] += us
        else:
            kinds["other"] += us
        top.append((us, event.count, name))
    per = max(1, steps)
    top.sort(reverse=True)
    return {
        "optimizer_steps": steps,
        "wall_ms_per_step": round(wall_s * 1000 / per, 2),
        "device_ms_per_step": {k: round(v / 1000 / per, 2) for k, v in kinds.items()},
        "host_calls_per_step": {k: round(v / per, 1) for k, v in host.items()},
        "top_kernels": [
            {"ms_per_step": round(us / 1000 / per, 2), "calls_per_step": round(n / per, 1), "name": name[:110]}
            for us, n, name in top[:12]
        ],
    }


def _local_numel(parameter: Any) -> int:
    """Elements this rank holds (a DTensor's ``numel`` is the whole tensor's)."""
    local = getattr(parameter, "to_local", None)
    return int(local().numel()) if callable(local) else int(parameter.numel())


#: The hand-written FSDP2 loops: ``raw`` is the fair baseline; the others change one thing each, to show what the
#: earlier baseline (``raw-old``) lost. Keys: TF32 for float32 matmuls (what the Trainer switches on for CUDA),
#: the bf16 logits freed before backward (a loss function that keeps no reference to them), autocast's weight-cast
#: cache, and whether the root unit is resharded after forward (what FSDPStrategy's explicit
#: ``reshard_after_forward=True`` asks for; fully_shard's default keeps the root gathered for backward).
RAW_VARIANTS: dict[str, dict[str, bool]] = {  # "tf32": TF32 matmuls and cudnn.benchmark
    "raw": {"tf32": True, "free_logits": True, "autocast_cache": True, "reshard_root": False},
    "raw-old": {"tf32": False, "free_logits": False, "autocast_cache": True, "reshard_root": False},
    "raw-tf32": {"tf32": True, "free_logits": False, "autocast_cache": True, "reshard_root": False},
    "raw-free": {"tf32": False, "free_logits": True, "autocast_cache": True, "reshard_root": False},
    "raw-nocache": {"tf32": False, "free_logits": False, "autocast_cache": False, "reshard_root": False},
    "raw-reshard-root": {"tf32": True, "free_logits": True, "autocast_cache": True, "reshard_root": True},
}


def _raw_fsdp2(example: Any, device: Any, shape: tuple[int, int, int, int], data: Any, variant: str = "raw") -> Any:
    """A hand-written FSDP2 loop on the same model, as torch's FSDP2 guidance writes it: composable activation
    checkpointing and ``fully_shard`` per block (innermost first), then the root with ``fully_shard``'s own
    defaults; bf16 parameters and fp32 gradient reduction (what bf16-mixed gives the strategy), the forward under
    autocast, the model's own ``configure_optimizers()`` (AdamW, torch's default foreach implementation),
    ``zero_grad(set_to_none=True)``. ``variant`` (:data:`RAW_VARIANTS`) says what else the process does: ``raw``
    sets TF32 for float32 matmuls as the Trainer does and frees the bf16 logits before backward; ``raw-old`` is
    the loop this benchmark measured before (neither)."""
    import torch
    import torch.distributed as dist
    from torch.distributed._composable.checkpoint_activation import checkpoint
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    how = RAW_VARIANTS[variant]
    vocab, width, depth, heads = shape
    cuda = device.type == "cuda"
    precision_before, benchmark_before = torch.get_float32_matmul_precision(), torch.backends.cudnn.benchmark
    if how["tf32"]:  # the Trainer's CUDA defaults (accelplug.trainer.process.environment)
        torch.set_float32_matmul_precision("high")
        torch.backends.cudnn.benchmark = True
    model = example.TinyTransformer(vocab=vocab, width=width, depth=depth, heads=heads, lr=1e-4)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if cuda else None
    options: dict[str, Any] = {"mesh": mesh, "mp_policy": policy or MixedPrecisionPolicy()}
    for block in model.blocks:
        checkpoint(block)
    for block in reversed(model.blocks):
        fully_shard(block, **options)
    if how["reshard_root"]:  # as FSDPStrategy does: the root too is freed after forward, gathered again for backward
        fully_shard(model, reshard_after_forward=True, **options)
    else:
        fully_shard(model, **options)  # torch's default: the root stays gathered from forward into backward
    optimizer = model.configure_optimizers()  # AdamW(lr=1e-4), what the Trainer gets from the same module
    autocast = {"device_type": device.type, "dtype": torch.bfloat16, "enabled": cuda}
    autocast["cache_enabled"] = how["autocast_cache"]

    def loss_of(tokens: Any, targets: Any) -> Any:
        with torch.autocast(**autocast):
            return torch.nn.functional.cross_entropy(model(tokens).float(), targets.flatten())

    try:
        for tokens, targets in data:
            optimizer.zero_grad(set_to_none=True)
            if how["free_logits"]:
                loss = loss_of(tokens, targets)  # the bf16 logits die with the function's frame
            else:
                with torch.autocast(**autocast):
                    logits = model(tokens)  # kept alive by this name through backward and the step
                loss = torch.nn.functional.cross_entropy(logits.float(), targets.flatten())
            loss.backward()
            optimizer.step()
    finally:
        torch.set_float32_matmul_precision(precision_before)
        torch.backends.cudnn.benchmark = benchmark_before
    return model


def _result(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """One file per rank (lines printed by several ranks at once can interleave in the launcher's output)."""
    Path(args.result_dir, f"rank{figures['rank']}.json").write_text(json.dumps(figures))


def _fsdp_trainer(
    args: argparse.Namespace, strategy_name: str, example: Any, device: Any, shape: tuple[int, int, int, int]
) -> Any:
    vocab, width, depth, heads = shape
    quiet = {
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
    }
    processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if strategy_name == "lightning-fsdp":
        import lightning as L
        from lightning.pytorch.strategies import FSDPStrategy as LightningFSDP

        class LitTransformer(example.TinyTransformer, L.LightningModule):  # type: ignore[misc, name-defined]
            pass

        model = LitTransformer(vocab=vocab, width=width, depth=depth, heads=heads, lr=1e-4)
        blocks = {example.Block}
        # Lightning's FSDP refuses the CPU; there (a check of this script) its DDP stands in.
        sharded = LightningFSDP(auto_wrap_policy=blocks, activation_checkpointing_policy=blocks)
        trainer = L.Trainer(
            accelerator="gpu" if device.type == "cuda" else "cpu", devices=processes, max_epochs=1,
            strategy=sharded if device.type == "cuda" else "ddp",
            precision="bf16-mixed" if device.type == "cuda" else "32-true", use_distributed_sampler=False,
            num_sanity_val_steps=0, **quiet,
        )  # fmt: skip
        return model, trainer.fit
    from accelplug import Trainer
    from accelplug.strategies import FSDPStrategy

    model = example.TinyTransformer(vocab=vocab, width=width, depth=depth, heads=heads, lr=1e-4)
    strategy: Any = "ddp"
    if strategy_name == "fsdp":
        strategy = FSDPStrategy(auto_wrap_policy={example.Block}, activation_checkpointing_policy={example.Block})
    trainer = Trainer(
        accelerator=device.type, devices=processes, strategy=strategy, max_epochs=1,
        precision="bf16-mixed" if device.type == "cuda" else "32-true", use_distributed_sampler=False,
        num_sanity_val_steps=0, **quiet,
    )  # fmt: skip
    return model, trainer.fit


# ---- the orchestrator ------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ, **NO_MULTICAST)
    env.setdefault("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "1")
    env.setdefault("ACCELPLUG_DDP_TIMEOUT_S", "120")  # a rank that dies must not leave the others waiting long
    env.setdefault("OMP_NUM_THREADS", "1" if env.get("OMP_NUM_THREADS") is None else env["OMP_NUM_THREADS"])
    return env


def _cause(stderr: str) -> str:
    """The workers' own exception lines first: torchrun's summary, which ends stderr, names no cause."""
    lines = [re.sub(r"^\[rank\d+\]:\s*", "", line.strip()) for line in stderr.splitlines()]
    causes = [ln for ln in lines if re.match(r"^[\w.]*(Error|Exception)\b", ln) and "ChildFailedError" not in ln]
    return "\n".join([*dict.fromkeys(causes), stderr[-3000:]])


def _launch(args: argparse.Namespace, loop: str, processes: int, child_args: list[str], timeout: float) -> Any:
    """Start ``processes`` workers of this script (or the example) the way a user would; parse RESULT lines."""
    import tempfile

    results = Path(tempfile.mkdtemp(prefix="multi_gpu_"))
    script = child_args[0] if child_args and child_args[0].endswith(".py") else str(HERE)
    rest = child_args[1:] if script != str(HERE) else [*child_args, "--result-dir", str(results)]
    if loop == "accelplug":  # `accelplug launch`; anything else under plain torchrun
        where = ["--cpu"] if args.device == "cpu" else ["--accelerator", "cuda"]
        command = [sys.executable, "-m", "accelplug", "launch", *where, "--devices", str(processes), script, *rest]
    else:
        port = str(29500 + (os.getpid() + int(time.time())) % 1000)
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(processes)]
        command += ["--master-port", port, script, *rest]
    started = time.monotonic()
    result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=timeout, cwd=REPO)
    lines = [json.loads(p.read_text()) for p in sorted(results.glob("rank*.json"))]
    return {
        "command": " ".join(command[1:]),
        "returncode": result.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "results": lines,
        "stderr_tail": _cause(result.stderr) if result.returncode else "",
    }


def ddp_part(args: argparse.Namespace, report: dict[str, Any], budget: Any, compiled: bool = False) -> None:
    """One ``torchrun`` per model and process count, running the loops side by side in the same processes."""
    runs: list[dict[str, Any]] = report.setdefault("ddp", [])
    loops = args.compiled_loops if compiled else args.eager_loops
    counts = [1, *args.gpus] if args.one_gpu == "yes" else list(args.gpus)
    for model in args.models:
        for processes in dict.fromkeys(counts):  # --gpus 1: a one-GPU dry run
            label = f"ddp {model} compile={compiled} x{processes}"
            if budget() < (150 if compiled else 60):
                report["skipped"].append(label)
                continue
            child = ["--child", "ddp", "--device", args.device, "--model", model, "--loops", loops]
            child += ["--precision", args.precision, "--steps", str(args.steps), "--warmup", str(args.warmup)]
            child += ["--rounds", str(args.compiled_rounds if compiled else args.rounds)]
            child += (["--compile"] if compiled else []) + (["--quick"] if args.quick else [])
            if args.profile and not compiled and processes > 1 and model in args.profile_models:
                child += ["--profile-dir", str(Path(args.out) / "profiles" / model)]
            run = _launch(args, "torchrun", processes, child, timeout=570)
            ok = run["returncode"] == 0 and len(run["results"]) == processes
            run.update(model=model, compile=compiled, processes=processes, ok=ok, throughput={}, rounds={})
            if ok:  # per loop: the median over rounds of the throughput summed over ranks
                for loop in loops.split(","):
                    per_rank = [r["throughput"][loop] for r in run["results"]]
                    totals = [sum(values) for values in zip(*per_rank, strict=True)]
                    run["rounds"][loop] = [round(t, 1) for t in totals]
                    run["throughput"][loop] = statistics.median(totals)
                run["ratios"] = _paired_ratios(run["rounds"])
                run["profiles"] = {r["rank"]: r.get("profiles") for r in run["results"] if r.get("profiles")}
            else:
                report["errors"].append({"what": label, "stderr": run["stderr_tail"][:1500]})
            runs.append(run)
            print(f"  {label}: {run['throughput']}", flush=True)


def _paired_ratios(rounds: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Each loop over the hand-written loop of the same round: median, lowest and highest."""
    raw = rounds.get("raw")
    if not raw:
        return {}
    ratios = {}
    for loop, values in rounds.items():
        if loop == "raw" or len(values) != len(raw):
            continue
        each = [v / r for v, r in zip(values, raw, strict=True)]
        ratios[loop] = {"median": statistics.median(each), "min": min(each), "max": max(each)}
    return ratios


def ddp_compile_part(args: argparse.Namespace, report: dict[str, Any], budget: Any) -> None:
    ddp_part(args, report, budget, compiled=True)


def fsdp_part(args: argparse.Namespace, report: dict[str, Any], budget: Any) -> None:
    """``--fsdp-groups``: each group one job; the strategies of a group run in that job's processes, in
    ``--fsdp-rounds`` interleaved rounds with the order rotated (``raw`` is the hand-written FSDP2 loop)."""
    runs: list[dict[str, Any]] = report.setdefault("fsdp", [])
    processes = max(args.gpus)
    for group in [g for g in args.fsdp_groups.split("+") if g]:
        if budget() < 60:
            report["skipped"].append(f"fsdp {group} x{processes}")
            continue
        # "raw@accelplug" / "fsdp@torchrun": the loop under the other launcher (is it the process, not the loop?)
        labels = group.split(",")
        bare = {label: label.split("@")[0] for label in labels}
        launcher = next((label.split("@")[1] for label in labels if "@" in label), None)
        child = ["--child", "fsdp", "--device", args.device, "--fsdp-strategy", ",".join(bare.values())]
        child += ["--cap-gib", str(args.cap_gib), "--fsdp-steps", str(args.fsdp_steps)]
        child += ["--fsdp-rounds", str(args.fsdp_rounds)] + (["--quick"] if args.quick else [])
        child += ["--fsdp-profile-steps", str(args.fsdp_profile_steps)]
        loop = "lightning" if group == "lightning-fsdp" else ("accelplug" if group in ("ddp", "fsdp") else "torchrun")
        loop = launcher or loop
        run = _launch(args, loop, processes, child, timeout=min(600, max(60, budget())))
        oom = any(r.get("oom") for r in run["results"])
        fine = run["returncode"] == 0 and len(run["results"]) == processes and not oom
        for label in labels:
            strategy = bare[label]
            entry = {k: run[k] for k in ("command", "returncode", "seconds")}
            entry.update(strategy=label, processes=processes, oom=oom, ok=fine)
            entry["errors"] = [r["error"] for r in run["results"] if r.get("error")]
            if fine:
                per_rank = [r["rounds"][strategy] for r in run["results"]]
                entry["rounds"] = [round(sum(v), 1) for v in zip(*per_rank, strict=True)]
                entry["tokens_per_s"] = statistics.median(entry["rounds"])
                peaks = [r["peak_memory_gib"][strategy] for r in run["results"] if r["peak_memory_gib"]]
                entry["peak_memory_gib"] = max(peaks) if peaks else None
                entry["allocator"] = {r["rank"]: r.get("allocator", {}).get(strategy) for r in run["results"]}
                entry["profile"] = {
                    r["rank"]: r["profile"][strategy] for r in run["results"] if r.get("profile", {}).get(strategy)
                }
            runs.append(entry)
            print(f"  fsdp {label:15} x{processes}: ok={fine} oom={oom} {entry.get('rounds')}", flush=True)
        expected_oom = group == "ddp" and args.device == "cuda" and not args.quick
        if not fine and not (oom and expected_oom):
            report["errors"].append({"what": f"fsdp {group}", "stderr": run["stderr_tail"][:1500]})
        if expected_oom and fine:
            why = "DDP fitted under the cap: use a larger model or a lower --cap-gib"
            report["errors"].append({"what": "fsdp ddp", "error": why})
    merged: dict[str, dict[str, Any]] = {}  # a strategy in several jobs (--fsdp-groups "raw+fsdp+fsdp+raw")
    for r in runs:
        if r["strategy"] not in merged:
            merged[r["strategy"]] = r
            continue
        first = merged[r["strategy"]]
        first["ok"] = first["ok"] and r["ok"]
        first["oom"] = first["oom"] or r["oom"]
        first.setdefault("errors", []).extend(r.get("errors", []))
        first.setdefault("more_jobs", []).append({k: r.get(k) for k in ("command", "allocator", "profile")})
        if r.get("rounds"):
            first["rounds"] = first.get("rounds", []) + r["rounds"]
            first["tokens_per_s"] = statistics.median(first["rounds"])
            first["peak_memory_gib"] = max(first.get("peak_memory_gib") or 0, r.get("peak_memory_gib") or 0)
    runs[:] = list(merged.values())
    raw = next((r for r in runs if r["strategy"] == "raw" and r.get("rounds")), None)
    for r in runs:
        if raw is not None and r is not raw and r.get("rounds") and len(r["rounds"]) == len(raw["rounds"]):
            each = [v / b for v, b in zip(r["rounds"], raw["rounds"], strict=True)]
            r["ratio_to_raw"] = {"median": statistics.median(each), "min": min(each), "max": max(each)}


def _fsdp_diagnosis(fsdp: list[dict[str, Any]]) -> list[str]:
    """Rank 0's allocator counters (every job) and profiled steps (the first job of each loop), side by side."""
    lines: list[str] = []
    rows = []
    for r in fsdp:
        for job in [r, *r.get("more_jobs", [])]:
            for run in (job.get("allocator") or {}).get(0) or (job.get("allocator") or {}).get("0") or []:
                if not run:
                    continue  # the CPU has no caching allocator
                rows.append(f"| {r['strategy']} | {run.get('alloc_retries')} | {run.get('device_mallocs')} | "
                            f"{run.get('device_frees')} | {run.get('reserved_peak_gib')} |")  # fmt: skip
    if rows:
        lines += ["### Caching allocator, rank 0, each run (cudaMalloc retries under the cap free the cache and "
                  "synchronise)", "", "| loop | alloc retries | cudaMalloc | cudaFree | peak reserved GiB |",
                  "|---|---|---|---|---|", *rows, ""]  # fmt: skip
    profiled = []
    for r in fsdp:
        prof = next(
            (p for job in [r, *r.get("more_jobs", [])] if (p := (job.get("profile") or {}).get(0) or
             (job.get("profile") or {}).get("0"))), None
        )  # fmt: skip
        if prof:
            profiled.append((r["strategy"], prof))
    if profiled:
        kinds = list(profiled[0][1]["device_ms_per_step"])
        lines += ["### Profiled steps after the timed window, rank 0, per optimizer step (ms)", "",
                  "| loop | steps | host wall | " + " | ".join(f"device: {k}" for k in kinds) +
                  " | cudaMalloc | cudaFree |", "|---|---|---|" + "---|" * (len(kinds) + 2)]  # fmt: skip
        for name, p in profiled:
            calls = p["host_calls_per_step"]
            cells = " | ".join(str(p["device_ms_per_step"][k]) for k in kinds)
            lines.append(f"| {name} | {p['optimizer_steps']} | {p['wall_ms_per_step']} | {cells} | "
                         f"{calls.get('cudaMalloc')} | {calls.get('cudaFree')} |")  # fmt: skip
        lines.append("")
        for name, p in profiled:
            shown = [f"{k['ms_per_step']} ms ×{k['calls_per_step']} {k['name'][:70]}" for k in p["top_kernels"][:8]]
            lines += [f"Top kernels, {name}: " + "; ".join(shown), ""]
    return lines


def checkpoint_part(args: argparse.Namespace, report: dict[str, Any], budget: Any) -> None:
    import tempfile

    processes = max(args.gpus)
    folder = Path(tempfile.mkdtemp(prefix="sharded_ckpt_"))
    path = folder / "n_gpus.ckpt"
    accel = ["--accelerator", args.device]
    per_rank = 4
    total = per_rank * processes
    saved = _launch(
        args, "accelplug", processes,
        [str(REPO / "examples" / "fsdp_example.py"), *accel, "--batch-size", str(per_rank),
         "--state-dict-type", "sharded", "--save", str(path)],
        timeout=300,
    )  # fmt: skip
    one = [sys.executable, str(REPO / "examples" / "fsdp_example.py"), *accel, "--devices", "1"]
    one += ["--batch-size", str(total), "--max-steps", "12"]
    resumed = subprocess.run([*one, "--resume", str(path)], env=_env(), capture_output=True, text=True, timeout=300)
    straight = subprocess.run(
        [*one, "--strategy", "single_device"], env=_env(), capture_output=True, text=True, timeout=300
    )

    def losses(out: str) -> list[float] | None:
        line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), None)
        return json.loads(line.removeprefix("RESULT "))["losses"] if line else None

    after, reference = losses(resumed.stdout), losses(straight.stdout)
    agree = after is not None and reference is not None and len(after) == 4 and all(
        abs(a - b) <= 2e-3 * max(1.0, abs(b)) for a, b in zip(after, reference[8:], strict=True)
    )  # fmt: skip
    report["checkpoint"] = {
        "saved_by": processes,
        "save": {k: saved[k] for k in ("command", "returncode", "seconds")},
        "shard_files": sorted(p.name for p in folder.glob("n_gpus.ckpt.shards-*/*")),
        "resumed_losses": after,
        "uninterrupted_losses_after_step_8": reference[8:] if reference else None,
        "agree": agree,
    }
    if not agree:
        why = saved["stderr_tail"] + _cause(resumed.stderr)
        report["errors"].append({"what": "checkpoint", "stderr": why[:1500]})
    print(f"  checkpoint saved by {processes}, resumed on 1: agree={agree}", flush=True)


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [f"Measured {meta['date']} on {meta['gpus_found']} × {meta['device_name']}, torch {meta['torch']}, "
             f"command `{meta['command']}`.", ""]  # fmt: skip
    ddp = report.get("ddp", [])
    if ddp:
        lines += [
            f"### DDP: samples/s summed over GPUs, median of {meta['rounds']} rounds (compiled: "
            f"{meta.get('compiled_rounds', 1)}), {meta.get('steps')} timed steps a run; "
            "in brackets N GPUs over 1 GPU for the same loop",
            "",
            "| model | compile | loop | 1 GPU | " + " | ".join(f"{n} GPUs" for n in meta["gpus"]) + " |",
            "|---|---|---|---|" + "---|" * len(meta["gpus"]),
        ]
        table: dict[tuple[str, bool, str], dict[int, float]] = {}
        for r in ddp:
            for loop, value in r["throughput"].items():
                table.setdefault((r["model"], r["compile"], loop), {})[r["processes"]] = value
        for (model, compiled, loop), by_n in table.items():
            one = by_n.get(1)
            cells = [f"{one:.0f}" if one else "—"]
            for n in meta["gpus"]:
                value = by_n.get(n)
                cells.append(
                    f"{value:.0f} ({value / one:.2f}×)" if value and one else (f"{value:.0f}" if value else "—")
                )
            lines.append(f"| {model} | {compiled} | {loop} | " + " | ".join(cells) + " |")
        lines.append("")
        paired = [r for r in ddp if r.get("ratios")]
        if paired:
            lines += [
                "### Against the hand-written loop, round by round (interleaved, order rotated each round)",
                "",
                "| model | compile | GPUs | loop | samples/s each round | to hand-written: median (lowest–highest) |",
                "|---|---|---|---|---|---|",
            ]
            for r in paired:
                for loop, values in r["rounds"].items():
                    ratio = r["ratios"].get(loop)
                    shown = f"{ratio['median']:.3f} ({ratio['min']:.3f}–{ratio['max']:.3f})" if ratio else "1"
                    each = ", ".join(f"{v:.0f}" for v in values)
                    lines.append(f"| {r['model']} | {r['compile']} | {r['processes']} | {loop} | {each} | {shown} |")
            lines.append("")
    fsdp = report.get("fsdp", [])
    if fsdp:
        title = f"### Under a {meta['cap_gib']} GiB cap per GPU (0.94B-parameter transformer, AdamW, bf16-mixed)"
        header = (
            "| strategy | GPUs | result | tokens/s: median (each round) | to hand-written | peak memory/GPU (GiB) |"
        )
        lines += [title, "", header, "|---|---|---|---|---|---|"]
        names = {
            "raw": "hand-written FSDP2",
            "raw-old": "hand-written FSDP2, the earlier loop",
            "fsdp": "accelplug fsdp",
            "ddp": "accelplug ddp",
        }
        for r in fsdp:
            result = "out of memory" if r["oom"] else ("trained" if r["ok"] else "failed")
            peak = f"{r['peak_memory_gib']:.2f}" if r.get("peak_memory_gib") else "—"
            each = ", ".join(f"{v:.0f}" for v in r.get("rounds", []))
            speed = f"{r['tokens_per_s']:.0f} ({each})" if r.get("tokens_per_s") else "—"
            ratio = r.get("ratio_to_raw")
            shown = f"{ratio['median']:.3f} ({ratio['min']:.3f}–{ratio['max']:.3f})" if ratio else "—"
            name = names.get(r["strategy"], r["strategy"])
            lines.append(f"| {name} | {r['processes']} | {result} | {speed} | {shown} | {peak} |")
        lines += [f"- {r['strategy']}: {e[:400]}" for r in fsdp for e in r.get("errors", [])[:1]]
        lines.append("")
        lines += _fsdp_diagnosis(fsdp)
    if "checkpoint" in report:
        c = report["checkpoint"]
        lines += ["### Sharded checkpoint", "", f"Saved by {c['saved_by']} processes ({len(c['shard_files'])} shard "
                  f"files), resumed on one: losses {'equal' if c['agree'] else 'DIFFERENT'} to an uninterrupted run "
                  f"({c['resumed_losses']} vs {c['uninterrupted_losses_after_step_8']}).", ""]  # fmt: skip
    for title, key in (("Errors", "errors"), ("Skipped", "skipped")):
        if report[key]:
            lines += [f"### {title}", ""] + [f"- {json.dumps(item)[:1200]}" for item in report[key]] + [""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="checkpoint,fsdp,ddp", help="also: ddp-compile (a call of its own)")
    parser.add_argument("--models", default="resnet50,bert")
    parser.add_argument("--gpus", default="2", help="process counts to scale to, e.g. 2 or 2,4,8")
    parser.add_argument("--precision", default="bf16-mixed")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cap-gib", type=float, default=12.0)
    parser.add_argument("--fsdp-steps", type=int, default=10)
    parser.add_argument("--fsdp-rounds", type=int, default=2)
    parser.add_argument(
        "--fsdp-profile-steps", type=int, default=0, help="steps after the timed window under torch.profiler"
    )
    parser.add_argument(
        "--fsdp-groups", default="ddp+raw,fsdp+lightning-fsdp", help="jobs separated by +, strategies of a job by ,"
    )
    parser.add_argument("--budget-s", type=float, default=540)
    parser.add_argument("--out", default=os.environ.get("OUT") or "multi_gpu_out")
    # what a child process does (set by the orchestrator)
    parser.add_argument("--child", choices=["ddp", "fsdp"], default=None)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--loops", default="raw,accelplug,lightning")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--compiled-rounds", type=int, default=1)
    parser.add_argument("--eager-loops", default="raw,accelplug,lightning")
    parser.add_argument("--compiled-loops", default="raw,accelplug")
    parser.add_argument("--one-gpu", default="yes", choices=["yes", "no"], help="also the 1-GPU runs (scaling)")
    parser.add_argument("--profile", action="store_true", help="torch.profiler traces of raw and accelplug (eager)")
    parser.add_argument("--profile-models", default="resnet50")
    parser.add_argument("--profile-dir", default="")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--fsdp-strategy", default="fsdp")
    parser.add_argument("--result-dir", default=".")
    args = parser.parse_args()
    if args.child == "ddp":
        child_ddp(args)
        return 0
    if args.child == "fsdp":
        child_fsdp(args)
        return 0
    os.environ.update(NO_MULTICAST)
    import torch

    args.models = [m for m in args.models.split(",") if m]
    args.profile_models = [m for m in args.profile_models.split(",") if m]
    args.gpus = [int(g) for g in args.gpus.split(",") if g]
    found = torch.cuda.device_count() if args.device == "cuda" else (os.cpu_count() or 1)
    if args.device == "cuda" and found < max(args.gpus):
        raise SystemExit(f"--gpus {max(args.gpus)} needs that many GPUs; torch sees {found}")
    started = time.monotonic()

    def budget() -> float:
        return args.budget_s - (time.monotonic() - started)

    report: dict[str, Any] = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "torch": torch.__version__,
            "device_name": torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU (gloo)",
            "gpus_found": found,
            "cap_gib": args.cap_gib,
            "gpus": args.gpus,
            "rounds": args.rounds,
            "compiled_rounds": args.compiled_rounds,
            "steps": args.steps,
            "warmup": args.warmup,
            "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        },
        "errors": [],
        "skipped": [],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    parts = {"ddp": ddp_part, "ddp-compile": ddp_compile_part, "fsdp": fsdp_part, "checkpoint": checkpoint_part}
    for name in [p for p in args.parts.split(",") if p]:
        print(f"== {name} (budget left {budget():.0f} s)", flush=True)
        parts[name](args, report, budget)
        (out / "multi_gpu.json").write_text(json.dumps(report, indent=1))
        (out / "multi_gpu.md").write_text(markdown(report))
    print(markdown(report))
    if report["errors"]:
        return 1
    return 3 if report["skipped"] else 0


if __name__ == "__main__":
    sys.exit(main())
