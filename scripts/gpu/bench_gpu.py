"""Run ``accelplug bench`` on the GPU machine and check it against a hand-written PyTorch loop.

Usage on the lent GPU machine (no network; torch, torchvision, transformers, matplotlib installed)::

    source scripts/gpu/setup.sh && python3 scripts/gpu/bench_gpu.py --out "$OUT"

In one call it:

1. writes ``env.md`` (``accelplug env``) so the figures carry the machine they came from;
2. runs a hand-written loop on the GPU (``plain_before.json``);
3. runs ``accelplug bench`` for ResNet50 / BERT-base / VGG16 on cuda and the CPU with JSON, PNG and
   its table (``bench.json``, ``bench.png``, ``bench_table.txt``);
4. runs the hand-written loop again (``plain_after.json``), so drift during the run is visible;
5. compares accelplug's GPU throughput with the mean of the two hand-written runs per model and phase
   and writes ``comparison.json`` and ``benchmarks_table.md`` (the table for docs/benchmarks.md).

Exit status 0 when every figure agrees within ``--tolerance`` (5%), 3 when one does not (all files
are still written), anything else when a step failed. The hand-written loop imports nothing from
accelplug's benchmark engine except, for the ``tinycnn`` smoke model, its architecture.
Smoke test on a CPU-only machine: ``python scripts/gpu/bench_gpu.py --out /tmp/o --device cpu --models tinycnn``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BATCH = {"resnet50": 128, "bert": 64, "vgg16": 64, "tinycnn": 64}
CNNS = {"resnet50", "vgg16", "tinycnn"}
TITLES = {"resnet50": "ResNet50", "bert": "BERT-base", "vgg16": "VGG16", "tinycnn": "tiny CNN"}


# ---- the hand-written loop (runs in its own process: ``bench_gpu.py --plain``) ------------------
def _build(name: str) -> tuple[Any, Any, int]:
    """(model, inputs maker, number of classes), built straight from torchvision / transformers."""
    import torch

    if name in ("resnet50", "vgg16"):
        import torchvision

        model = getattr(torchvision.models, name)(weights=None)
        return model, lambda b, d: torch.randn(b, 3, 224, 224, device=d), 1000
    if name == "bert":
        from transformers import BertConfig, BertForSequenceClassification

        model = BertForSequenceClassification(BertConfig(num_labels=2))

        def make(b: int, d: Any) -> dict[str, Any]:
            ids = torch.randint(0, 30522, (b, 128), device=d)
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

        return model, make, 2
    if name == "tinycnn":
        from accelplug.bench.models import WORKLOADS  # smoke model only: reuse its architecture

        return WORKLOADS["tinycnn"].build(), lambda b, d: torch.randn(b, 3, 32, 32, device=d), 10
    raise SystemExit(f"unknown model {name}")


def _logits(model: Any, inputs: Any) -> Any:
    out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    return out.logits if hasattr(out, "logits") else out


def _plain(models: list[str], device_name: str, precision: str, steps: int, warmup: int) -> list[dict[str, Any]]:
    import torch

    device = torch.device(device_name)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    dtype = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(precision)

    def amp() -> Any:
        return torch.autocast(device.type, dtype=dtype) if dtype is not None else contextlib.nullcontext()

    rows = []
    for name in models:
        torch.manual_seed(0)
        model, make, classes = _build(name)
        model = model.to(device)
        x = make(BATCH[name], device)
        if name in CNNS and device.type != "cpu":
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, classes, (BATCH[name],), device=device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")

        for phase in ("train", "eval"):
            model.train(phase == "train")
            for i in range(warmup + steps):
                if i == warmup:
                    sync()
                    start = time.perf_counter()
                if phase == "train":
                    opt.zero_grad(set_to_none=True)
                    with amp():
                        loss = torch.nn.functional.cross_entropy(_logits(model, x), y)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
                else:
                    with torch.inference_mode(), amp():
                        _logits(model, x)
            sync()
            seconds = time.perf_counter() - start
            rows.append(
                {
                    "model": name,
                    "phase": phase,
                    "steps": steps,
                    "seconds": seconds,
                    "throughput": BATCH[name] * steps / seconds,
                }
            )
            print(f"plain {device_name} {name} {phase}: {rows[-1]['throughput']:.1f} samples/s", flush=True)
        del model, opt
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


# ---- the driver --------------------------------------------------------------------------------
def _run(cmd: list[str], log: Path) -> None:
    print("$", " ".join(cmd), flush=True)
    started = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    log.write_text(result.stdout + ("\n--- stderr ---\n" + result.stderr if result.stderr else ""), encoding="utf-8")
    print(
        result.stdout[-4000:], result.stderr[-2000:], f"({time.perf_counter() - started:.0f} s)", sep="\n", flush=True
    )
    if result.returncode != 0:
        raise SystemExit(f"failed with exit code {result.returncode}: {' '.join(cmd)} (see {log})")


def _table(
    bench: dict[str, Any], plain: dict[tuple[str, str], float], accelerator: str, tolerance: float
) -> tuple[list[dict[str, Any]], str]:
    rows, lines = [], []
    cpu = {(m["model"], m["phase"]): m for m in bench["results"] if m["accelerator"] == "cpu"}
    ours = [m for m in bench["results"] if m["accelerator"] == accelerator]
    for m in ours:
        key = (m["model"], m["phase"])
        hand = plain.get(key)
        diff = None if hand is None else m["throughput"] / hand - 1.0
        base = cpu.get(key)
        rows.append(
            {
                "model": m["model"],
                "phase": m["phase"],
                "accelplug_bench": m["throughput"],
                "hand_written": hand,
                "difference": diff,
                "agrees": diff is not None and abs(diff) <= tolerance,
                "cpu": base["throughput"] if base else None,
                "speedup_vs_cpu": m["speedup_vs_cpu"],
            }
        )
    device = ours[0]["device_name"] if ours else accelerator
    cpu_name = next(iter(cpu.values()))["device_name"] if cpu else "cpu"
    lines.append(f"Device: {device}; CPU baseline: {cpu_name} ({bench['settings']['cpu_threads']} threads).")
    lines.append(
        f"Precision {bench['settings']['precision']} on {accelerator}, "
        f"{bench['settings']['cpu_precision']} on the CPU; "
        f"{bench['settings']['steps']} timed steps after {bench['settings']['warmup']} warmup "
        f"(CPU {bench['settings']['cpu_steps']} after {bench['settings']['cpu_warmup']}); torch {bench['torch']}."
    )
    lines.append("")
    lines.append(
        f"| model | phase | accelplug bench ({accelerator}) | hand-written loop | difference | CPU "
        "| speed-up over CPU |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for r in rows:
        hand = "-" if r["hand_written"] is None else f"{r['hand_written']:.1f}"
        diff = "-" if r["difference"] is None else f"{100 * r['difference']:+.1f}%"
        cpu_fig = "-" if r["cpu"] is None else f"{r['cpu']:.2f}"
        speedup = "-" if r["speedup_vs_cpu"] is None else f"{r['speedup_vs_cpu']:.0f}×"
        figures = f"{r['accelplug_bench']:.1f} | {hand} | {diff} | {cpu_fig} | {speedup}"
        lines.append(f"| {TITLES[r['model']]} | {r['phase']} | {figures} |")
    lines.append("")
    lines.append("Throughput in samples per second (images for the CNNs, sequences of 128 tokens for BERT).")
    return rows, "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench_out")))
    parser.add_argument(
        "--device", default="cuda", help="accelerator to measure against the CPU (cuda; cpu for a smoke test)"
    )
    parser.add_argument("--models", default="resnet50,bert,vgg16")
    parser.add_argument("--precision", default="bf16-mixed")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cpu-steps", type=int, default=3)
    parser.add_argument("--cpu-warmup", type=int, default=1)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--plain", type=Path, help=argparse.SUPPRESS)  # internal: run the hand-written loop only
    args = parser.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]

    if args.plain is not None:
        rows = _plain(models, args.device, args.precision, args.steps, args.warmup)
        args.plain.write_text(
            json.dumps({"device": args.device, "precision": args.precision, "results": rows}, indent=2)
        )
        return 0

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    me = [sys.executable, str(Path(__file__).resolve())]
    common = ["--device", args.device, "--models", ",".join(models), "--precision", args.precision]
    timing = ["--steps", str(args.steps), "--warmup", str(args.warmup)]
    accelplug = [sys.executable, "-m", "accelplug"]
    started = time.perf_counter()

    _run([*accelplug, "env"], out / "env.md")
    _run([*me, *common, *timing, "--plain", str(out / "plain_before.json")], out / "plain_before.log")
    bench_cmd = [
        *accelplug, "bench", "--models", ",".join(models), "--accelerators", args.device,
        "--precision", args.precision, "--cpu-precision", "32-true", *timing,
        "--cpu-steps", str(args.cpu_steps), "--cpu-warmup", str(args.cpu_warmup),
        "--json", str(out / "bench.json"), "--chart", str(out / "bench.png"),
    ]  # fmt: skip
    _run(bench_cmd, out / "bench_table.txt")
    _run([*me, *common, *timing, "--plain", str(out / "plain_after.json")], out / "plain_after.log")

    bench = json.loads((out / "bench.json").read_text())
    runs = [json.loads((out / f"plain_{when}.json").read_text())["results"] for when in ("before", "after")]
    plain: dict[tuple[str, str], float] = {}
    for key in {(r["model"], r["phase"]) for run in runs for r in run}:
        plain[key] = statistics.mean(r["throughput"] for run in runs for r in run if (r["model"], r["phase"]) == key)
    rows, markdown = _table(bench, plain, args.device, args.tolerance)
    (out / "comparison.json").write_text(
        json.dumps({"tolerance": args.tolerance, "plain_runs": runs, "rows": rows}, indent=2), encoding="utf-8"
    )
    (out / "benchmarks_table.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"total {time.perf_counter() - started:.0f} s; files in {out}")
    disagree = [f"{r['model']} {r['phase']}" for r in rows if not r["agrees"]]
    if disagree:
        print(f"DISAGREE beyond {100 * args.tolerance:.0f}%: {', '.join(disagree)}")
        return 3
    print(f"AGREE: every accelplug bench figure is within {100 * args.tolerance:.0f}% of the hand-written loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
