"""Several GPUs (issue 15): DDP scaling, FSDP under a memory cap, a sharded checkpoint from 2 GPUs resumed on 1.

    python benchmarks/multi_gpu.py --out "$OUT"                          # a 2-GPU machine (or more: --gpus 2,4)
    python benchmarks/multi_gpu.py --device cpu --quick --models mlp --out /tmp/mg   # checks it with gloo on a CPU

Every measurement runs in fresh processes started the way a user would start them, with
``NCCL_NVLS_ENABLE=0``, ``TORCH_SYMM_MEM_DISABLE_MULTICAST=1`` and ``NVSHMEM_DISABLE_NVLS=1`` in every
child's environment:

- ``ddp``: ResNet50 bs128 and BERT-base bs64 per GPU (bf16 autocast, data pre-made on each GPU) on 1 GPU
  and on N GPUs: a hand-written loop (``torchrun``; ``DistributedDataParallel`` when N > 1), accelplug
  (``accelplug launch --devices N``, ``strategy="ddp"``) and Lightning (``torchrun``, ``strategy="ddp"``);
  then hand-written and accelplug again with ``compile=True``. Throughput is the sum over ranks;
  scaling is N GPUs over 1 GPU for the same loop.
- ``fsdp``: a 0.94B-parameter transformer (``examples/fsdp_example.py``'s blocks, width 2048, depth 16,
  AdamW, bf16-mixed, activation checkpointing) with each process capped at ``--cap-gib`` GiB by
  ``torch.cuda.set_per_process_memory_fraction``: accelplug ``ddp`` (expected: out of memory; fp32
  weights, gradients and AdamW state alone need 14 GiB: 16 bytes a parameter), accelplug ``fsdp`` and Lightning's
  ``FSDPStrategy`` on the same model, on N GPUs: peak memory per GPU, tokens/s.
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
    for round_index in range(1 if args.compile else args.rounds):
        for loop in loops[round_index % len(loops) :] + loops[: round_index % len(loops)]:
            measured[loop].append(measure(loop, work, config, steps, warmup)["throughput"])
    _end_process_group()
    _result(args, {"rank": rank, "world": world, "throughput": measured})


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
    data = TimedBatches(batches, device, warmup=2)
    try:
        model, trainer_fit = _fsdp_trainer(args, example, device, (vocab, width, depth, heads))
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        trainer_fit(model, data)
    except torch.cuda.OutOfMemoryError as exc:
        _result(args, {"rank": rank, "world": world, "oom": True, "error": str(exc)[:300]})
        os._exit(17)  # the launcher ends the other ranks (which would wait in a collective) at once
    _end_process_group()
    figures = {
        "rank": rank,
        "world": world,
        "oom": False,
        "tokens_per_s": data.timed_steps * batch * seq / data.seconds,
        "peak_memory_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None,
        "parameters": sum(p.numel() for p in model.parameters()) * (world if args.fsdp_strategy != "ddp" else 1),
    }
    _result(args, figures)


def _result(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """One file per rank (lines printed by several ranks at once can interleave in the launcher's output)."""
    Path(args.result_dir, f"rank{figures['rank']}.json").write_text(json.dumps(figures))


def _fsdp_trainer(args: argparse.Namespace, example: Any, device: Any, shape: tuple[int, int, int, int]) -> Any:
    vocab, width, depth, heads = shape
    quiet = {
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
    }
    processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if args.fsdp_strategy == "lightning-fsdp":
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
    if args.fsdp_strategy == "fsdp":
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
    loops = "raw,accelplug" if compiled else "raw,accelplug,lightning"
    for model in args.models:
        for processes in dict.fromkeys([1, *args.gpus]):  # --gpus 1: a one-GPU dry run
            label = f"ddp {model} compile={compiled} x{processes}"
            if budget() < (150 if compiled else 60):
                report["skipped"].append(label)
                continue
            child = ["--child", "ddp", "--device", args.device, "--model", model, "--loops", loops]
            child += ["--precision", args.precision, "--steps", str(args.steps), "--warmup", str(args.warmup)]
            child += ["--rounds", str(args.rounds)] + (["--compile"] if compiled else [])
            child += ["--quick"] if args.quick else []
            run = _launch(args, "torchrun", processes, child, timeout=570)
            ok = run["returncode"] == 0 and len(run["results"]) == processes
            run.update(model=model, compile=compiled, processes=processes, ok=ok, throughput={})
            if ok:  # per loop: the median over rounds of the throughput summed over ranks
                for loop in loops.split(","):
                    per_rank = [r["throughput"][loop] for r in run["results"]]
                    totals = [sum(values) for values in zip(*per_rank, strict=True)]
                    run["throughput"][loop] = statistics.median(totals)
            else:
                report["errors"].append({"what": label, "stderr": run["stderr_tail"][:1500]})
            runs.append(run)
            print(f"  {label}: {run['throughput']}", flush=True)


def ddp_compile_part(args: argparse.Namespace, report: dict[str, Any], budget: Any) -> None:
    ddp_part(args, report, budget, compiled=True)


def fsdp_part(args: argparse.Namespace, report: dict[str, Any], budget: Any) -> None:
    runs: list[dict[str, Any]] = report.setdefault("fsdp", [])
    processes = max(args.gpus)
    for strategy in ("ddp", "fsdp", "lightning-fsdp"):
        if budget() < 60:
            report["skipped"].append(f"fsdp {strategy} x{processes}")
            continue
        child = ["--child", "fsdp", "--device", args.device, "--fsdp-strategy", strategy]
        child += ["--cap-gib", str(args.cap_gib), "--fsdp-steps", str(args.fsdp_steps)]
        child += ["--quick"] if args.quick else []
        loop = "accelplug" if strategy in ("ddp", "fsdp") else "lightning"
        run = _launch(args, loop, processes, child, timeout=600)
        oom = any(r.get("oom") for r in run["results"])
        fine = run["returncode"] == 0 and len(run["results"]) == processes
        run.update(strategy=strategy, processes=processes, oom=oom, ok=fine)
        if fine:
            run["tokens_per_s"] = sum(r["tokens_per_s"] for r in run["results"])
            peaks = [r["peak_memory_gib"] for r in run["results"] if r["peak_memory_gib"] is not None]
            run["peak_memory_gib"] = max(peaks) if peaks else None
        runs.append(run)
        expected_oom = strategy == "ddp" and args.device == "cuda" and not args.quick
        if not fine and not (oom and expected_oom):
            report["errors"].append({"what": f"fsdp {strategy}", "stderr": run["stderr_tail"][:1500]})
        if expected_oom and fine:
            why = "DDP fitted under the cap: use a larger model or a lower --cap-gib"
            report["errors"].append({"what": "fsdp ddp", "error": why})
        print(f"  fsdp {strategy:15} x{processes}: ok={fine} oom={oom} {run.get('tokens_per_s')}", flush=True)


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
            f"### DDP scaling: samples/s summed over GPUs, median of {meta['rounds']} rounds (compiled: one round); "
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
    fsdp = report.get("fsdp", [])
    if fsdp:
        title = f"### Under a {meta['cap_gib']} GiB cap per GPU (0.94B-parameter transformer, AdamW, bf16-mixed)"
        header = "| strategy | GPUs | result | tokens/s | peak memory per GPU (GiB) |"
        lines += [title, "", header, "|---|---|---|---|---|"]
        for r in fsdp:
            result = "out of memory" if r["oom"] else ("trained" if r["ok"] else "failed")
            peak = f"{r['peak_memory_gib']:.2f}" if r.get("peak_memory_gib") else "—"
            speed = f"{r['tokens_per_s']:.0f}" if r.get("tokens_per_s") else "—"
            lines.append(f"| {r['strategy']} | {r['processes']} | {result} | {speed} | {peak} |")
        lines.append("")
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
    parser.add_argument("--budget-s", type=float, default=540)
    parser.add_argument("--out", default=os.environ.get("OUT") or "multi_gpu_out")
    # what a child process does (set by the orchestrator)
    parser.add_argument("--child", choices=["ddp", "fsdp"], default=None)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--loops", default="raw,accelplug,lightning")
    parser.add_argument("--rounds", type=int, default=2)
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
