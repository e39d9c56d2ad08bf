"""accelplug's Trainer on one GPU, side by side with a hand-written loop, Lightning and Accelerate, in one command.

    python benchmarks/trainer_gpu.py --out "$OUT"                         # the H100 run (about 7 minutes)
    python benchmarks/trainer_gpu.py --device cpu --quick --out /tmp/tg   # checks the script on a CPU (tiny sizes)

Parts (``--parts``, all by default, run in the order given: FSDP and compile first, then the eager rounds,
which the ``--budget-s`` cuts short if the machine is slower than planned), each in this process:

- ``eager``: the tiny MLP 64→256→256→10 bs64 (ms/step), ResNet50 bs128, BERT-base bs64 seq128 and VGG16
  bs64 (samples/s), bf16 autocast, data pre-made on the GPU, CNNs channels_last; ``--rounds`` interleaved
  rounds, the loops' order rotating every round; medians and the ratio to the hand-written loop.
- ``fsdp``: a small transformer (``examples/fsdp_example.py``'s, 8 blocks of width 512) under
  ``strategy="fsdp"`` on this one GPU against ``single_device``: the loss curve (fp32: equal within
  float error; bf16-mixed: FSDP's MixedPrecisionPolicy rounds parameters once per step where autocast
  rounds per op, so close, not equal), peak memory, throughput.
- ``compile``: ``Trainer(compile=True)`` against a hand-written loop compiled the same way
  (``torch.compile(model)``) on ResNet50 and BERT-base, ``--compile-rounds`` interleaved rounds (medians),
  and ``compile="reduce-overhead"`` (CUDA graphs) on the tiny MLP; the speed-up is over the eager
  hand-written median of the same run. First-step seconds (compilation) are reported; inductor's caches
  are on (torch's default), so the second of two loops compiling the same graph is faster: the order
  alternates every round.

Writes ``trainer_gpu.json`` and ``trainer_gpu.md`` (the tables for docs/performance.md) into ``--out``
(default ``$OUT``). Exit status: 0 complete, 1 a part failed (its error is in both files and on stderr),
3 the ``--budget-s`` ran out and the parts still to run were skipped (named in both files).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, ClassVar

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import LoopConfig, TimedBatches, make_batches, measure, release, workloads

REPO = Path(__file__).resolve().parents[1]
LOOP_ORDER = ("raw", "accelplug", "lightning", "accelerate")


class Budget:
    """Seconds left for starting runs; a run starts only if its estimated length still fits."""

    #: Rough length of one run on an H100 (compiling ResNet50 took 41 s in the anchors' run).
    ESTIMATE_S: ClassVar[dict[str, float]] = {"eager": 8.0, "fsdp": 12.0, "compile": 45.0}

    def __init__(self, seconds: float, quick: bool) -> None:
        self.seconds = seconds
        self.scale = 0.0 if quick else 1.0
        self.started = time.monotonic()

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def allows(self, part: str) -> bool:
        return self.left() >= self.ESTIMATE_S[part] * self.scale


def _versions() -> dict[str, Any]:
    found: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("accelplug", "lightning", "accelerate", "transformers", "torchvision", "triton"):
        try:
            module = __import__(name)
            found[name] = getattr(module, "__version__", "?")
        except ImportError:
            found[name] = None
    return found


def _device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"


# ---- parts ------------------------------------------------------------------------------------------


def eager_part(args: argparse.Namespace, device: torch.device, report: dict[str, Any], budget: Budget) -> None:
    loads = workloads(args.quick)
    loops = [name for name in LOOP_ORDER if name in args.loops and _available(name)]
    results: dict[str, Any] = report.setdefault("eager", {})
    for name in args.models:
        work = loads[name]
        results[name] = {"title": work.title, "unit": work.unit, "loops": {loop: [] for loop in loops}}
    for round_index in range(args.rounds):
        for name in args.models:
            work = loads[name]
            steps, warmup = _steps(args, name)
            batches = make_batches(work, device, steps + warmup + 1)
            order = loops[round_index % len(loops) :] + loops[: round_index % len(loops)]
            for loop in order:
                if not budget.allows("eager"):
                    report["skipped"].append(f"eager {name} {loop} round {round_index + 1}: budget spent")
                    continue
                config = LoopConfig(device, args.precision)
                figures = _guarded(report, f"eager {name} {loop}", measure, loop, work, config, steps, warmup, batches)
                if figures is not None:
                    results[name]["loops"][loop].append(figures)
                    print(f"  eager {name:9} {loop:10} round {round_index + 1}: {figures['value']:.2f} {work.unit}")
            del batches
            release(device)
    for entry in results.values():
        _summarise(entry)
    report["meta"]["eager_rounds_done"] = max(
        (len(runs) for entry in results.values() for runs in entry["loops"].values()), default=0
    )


def compile_part(args: argparse.Namespace, device: torch.device, report: dict[str, Any], budget: Budget) -> None:
    """``--compile-rounds`` interleaved rounds; the order of the two loops alternates every round and each loop
    compiles afresh (``torch._dynamo.reset()``), so neither profits from the other's in-memory graphs. The
    counters of dynamo (frames compiled, recompiles, graph breaks) are kept per run: a Trainer that compiled
    more graphs than the hand-written loop shows it there."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    loads = workloads(args.quick)
    results: dict[str, Any] = report.setdefault("compile", {})
    plan = [("resnet50", True, ("raw", "accelplug")), ("bert", True, ("accelplug", "raw"))]
    plan.append(("mlp", "reduce-overhead", ("raw", "accelplug")))
    for round_index in range(args.compile_rounds):
        for name, mode, first_order in plan:
            if name not in args.compile_models:
                continue
            work = loads[name]
            steps, warmup = _steps(args, name)
            entry = results.setdefault(
                name, {"title": work.title, "unit": work.unit, "mode": str(mode), "loops": {"raw": [], "accelplug": []}}
            )
            order = first_order if round_index % 2 == 0 else tuple(reversed(first_order))
            for loop in order:
                if not budget.allows("compile"):
                    report["skipped"].append(f"compile {name} {loop} round {round_index + 1}: budget spent")
                    continue
                torch._dynamo.reset()
                counters.clear()
                config = LoopConfig(device, args.precision, compile=mode)
                figures = _guarded(report, f"compile {name} {loop}", measure, loop, work, config, steps, warmup, None)
                if figures is not None:
                    figures["dynamo"] = {
                        "frames_ok": int(counters["frames"]["ok"]),
                        "unique_graphs": int(counters["stats"]["unique_graphs"]),
                        "graph_breaks": int(sum(counters["graph_break"].values())),
                        "recompiles": int(counters["recompiles"].get("total", 0)) if "recompiles" in counters else 0,
                    }
                    entry["loops"][loop].append(figures)
                    first = figures.get("first_step_s")
                    print(
                        f"  compile {name:9} {loop:10} round {round_index + 1}: {figures['value']:.2f} {work.unit} "
                        f"(first step {first or 0:.1f} s, dynamo {figures['dynamo']})"
                    )
    for entry in results.values():
        for loop, runs in entry["loops"].items():
            if runs:
                entry[loop] = {"value": statistics.median(r["value"] for r in runs), "runs": [r["value"] for r in runs]}


def _compile_ratios(report: dict[str, Any]) -> None:
    """Compiled against hand-written compiled, and both against the eager hand-written median of this run."""
    for name, entry in report.get("compile", {}).items():
        unit = entry["unit"]
        if "raw" in entry and "accelplug" in entry:
            entry["accelplug_vs_raw"] = _ratio(entry["accelplug"]["value"], entry["raw"]["value"], unit)
        eager = report.get("eager", {}).get(name, {}).get("median", {}).get("raw")
        if eager is not None:
            for loop in ("raw", "accelplug"):
                if loop in entry:
                    entry[f"{loop}_speedup_over_eager_raw"] = _ratio(entry[loop]["value"], eager, unit)


def fsdp_part(args: argparse.Namespace, device: torch.device, report: dict[str, Any], budget: Budget) -> None:
    example = _load_example()
    results: dict[str, Any] = report.setdefault("fsdp", {})
    for precision in ("32-true", "bf16-mixed"):
        runs: dict[str, Any] = {}
        for strategy in ("single_device", "fsdp"):
            if not budget.allows("fsdp"):
                report["skipped"].append(f"fsdp {precision} {strategy}: budget spent")
                continue
            figures = _guarded(
                report, f"fsdp {precision} {strategy}", _transformer_run, example, args, device, precision, strategy
            )
            if figures is not None:
                runs[strategy] = figures
                print(
                    f"  fsdp {precision:10} {strategy:13}: {figures['tokens_per_s']:.0f} tokens/s, "
                    f"peak {figures['peak_memory_mib'] or 0:.0f} MiB, last loss {figures['losses'][-1]:.4f}"
                )
        if len(runs) == 2:
            a, b = runs["fsdp"]["losses"], runs["single_device"]["losses"]
            runs["max_abs_loss_difference"] = max(abs(x - y) for x, y in zip(a, b, strict=True))
            runs["max_rel_loss_difference"] = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b, strict=True))
        results[precision] = runs


def _transformer_run(
    example: Any, args: argparse.Namespace, device: torch.device, precision: str, strategy_name: str
) -> dict[str, Any]:
    from accelplug import Trainer
    from accelplug.strategies import FSDPStrategy

    width, depth, seq, batch, vocab = (32, 2, 16, 4, 64) if args.quick else (512, 8, 256, 16, 8192)
    steps, warmup = (8, 2) if args.quick else (40, 5)
    torch.manual_seed(0)
    model = example.TinyTransformer(vocab=vocab, width=width, depth=depth, heads=2 if args.quick else 8, lr=3e-4)
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, vocab, (steps, batch, seq), generator=generator)
    permutation = torch.randperm(vocab, generator=generator)
    batches = [(tokens[i].to(device), permutation[tokens[i]].to(device)) for i in range(steps)]
    strategy: Any = FSDPStrategy(auto_wrap_policy={example.Block}) if strategy_name == "fsdp" else strategy_name
    trainer = Trainer(
        accelerator=device.type,
        devices=1,
        strategy=strategy,
        precision=precision,
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        use_distributed_sampler=False,
    )
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    data = TimedBatches(batches, device, warmup)  # the clock skips sharding and the first steps
    trainer.fit(model, data)
    figures = {
        "precision": precision,
        "losses": [float(loss) for loss in model.losses],
        "seconds": data.seconds,
        "tokens_per_s": data.timed_steps * batch * seq / data.seconds,
        "peak_memory_mib": torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    del trainer, model, batches
    release(device)
    return figures


# ---- helpers ----------------------------------------------------------------------------------------


def _available(loop: str) -> bool:
    package = {"lightning": "lightning", "accelerate": "accelerate"}.get(loop)
    return package is None or importlib.util.find_spec(package) is not None


def _steps(args: argparse.Namespace, name: str) -> tuple[int, int]:
    if args.quick:
        return 4, 3
    return (args.mlp_steps, 100) if name == "mlp" else (args.steps, args.warmup)


def _ratio(value: float, reference: float, unit: str) -> float:
    """How much faster than ``reference`` (>1 is faster), for throughputs and for ms/step alike."""
    return reference / value if unit == "ms/step" else value / reference


def _summarise(entry: dict[str, Any]) -> None:
    medians = {loop: statistics.median(f["value"] for f in runs) for loop, runs in entry["loops"].items() if runs}
    entry["median"] = medians
    if "raw" in medians:
        entry["speed_vs_raw"] = {loop: _ratio(v, medians["raw"], entry["unit"]) for loop, v in medians.items()}


def _guarded(report: dict[str, Any], label: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # one failing loop must not lose the rest of the call's figures
        text = "".join(traceback.format_exception(exc))
        print(f"FAILED {label}:\n{text}", file=sys.stderr, flush=True)
        report["errors"].append({"what": label, "error": f"{type(exc).__name__}: {exc}"[:2000]})
        return None


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("fsdp_example", REPO / "examples" / "fsdp_example.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the report -------------------------------------------------------------------------------------


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [
        f"Measured {meta['date']} on {meta['device_name']} ({meta['device']}), torch {meta['versions']['torch']}, "
        f"precision {meta['precision']}, command `{meta['command']}`.",
        "",
    ]
    eager = report.get("eager", {})
    if eager:
        lines += [
            f"### Eager: median of {meta.get('eager_rounds_done', meta['rounds'])} interleaved rounds (in brackets: "
            "speed relative to the "
            "hand-written loop, >1 is faster)",
            "",
            "| workload | hand-written loop | accelplug Trainer | Lightning | Accelerate |",
            "|---|---|---|---|---|",
        ]
        for entry in eager.values():
            cells = []
            for loop in LOOP_ORDER:
                value = entry.get("median", {}).get(loop)
                ratio = entry.get("speed_vs_raw", {}).get(loop)
                spread = [f["value"] for f in entry["loops"].get(loop, [])]
                if value is None:
                    cells.append("—")
                    continue
                text = f"{value:.3f}" if entry["unit"] == "ms/step" else f"{value:.0f}"
                if loop != "raw" and ratio is not None:
                    text += f" ({ratio:.3f}×)"
                if len(spread) > 1:
                    low, high = min(spread), max(spread)
                    text += f" [{low:.3f}–{high:.3f}]" if entry["unit"] == "ms/step" else f" [{low:.0f}–{high:.0f}]"
                cells.append(text)
            lines.append(f"| {entry['title']} ({entry['unit']}) | " + " | ".join(cells) + " |")
        lines.append("")
    compiled = report.get("compile", {})
    if compiled:
        lines += [
            "### torch.compile (median of interleaved rounds, each run compiled afresh; runs listed in round order)",
            "",
            "| workload | mode | hand-written compiled | accelplug `compile=` | accelplug vs hand-written | "
            "hand-written speed-up over eager | accelplug speed-up over eager | runs (first step) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for entry in compiled.values():
            raw, ours = entry.get("raw"), entry.get("accelplug")
            fmt = "{:.3f}" if entry["unit"] == "ms/step" else "{:.0f}"

            def cell(fig: dict[str, Any] | None, fmt: str = fmt) -> str:
                return fmt.format(fig["value"]) if fig else "—"

            def num(key: str, entry: dict[str, Any] = entry) -> str:
                return f"{entry[key]:.3f}×" if key in entry else "—"

            firsts = "; ".join(
                f"{loop} " + ", ".join(f"{r['value']:.0f} ({r.get('first_step_s') or 0:.0f} s)" for r in runs)
                for loop, runs in entry["loops"].items()
            )
            lines.append(
                f"| {entry['title']} ({entry['unit']}) | {entry['mode']} | {cell(raw)} | {cell(ours)} | "
                f"{num('accelplug_vs_raw')} | {num('raw_speedup_over_eager_raw')} | "
                f"{num('accelplug_speedup_over_eager_raw')} | {firsts} |"
            )
        lines.append("")
    fsdp = report.get("fsdp", {})
    if fsdp:
        lines += [
            "### FSDP on one device against single_device (small transformer)",
            "",
            "| precision | strategy | tokens/s | peak memory (MiB) | first loss | last loss | max loss difference |",
            "|---|---|---|---|---|---|---|",
        ]
        for precision, runs in fsdp.items():
            for strategy in ("single_device", "fsdp"):
                fig = runs.get(strategy)
                if not fig:
                    continue
                diff = runs.get("max_abs_loss_difference")
                memory = f"{fig['peak_memory_mib']:.0f}" if fig["peak_memory_mib"] is not None else "—"
                shown = "" if strategy == "single_device" or diff is None else f"{diff:.2e}"
                lines.append(
                    f"| {precision} | {strategy} | {fig['tokens_per_s']:.0f} | {memory} | {fig['losses'][0]:.4f} | "
                    f"{fig['losses'][-1]:.4f} | {shown} |"
                )
        lines.append("")
    for title, key in (("Errors", "errors"), ("Skipped", "skipped")):
        if report[key]:
            lines += [f"### {title}", ""] + [f"- {json.dumps(item)}" for item in report[key]] + [""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--quick", action="store_true", help="tiny models and few steps: checks the script itself")
    parser.add_argument("--parts", default="fsdp,compile,eager", help="in this order; the budget cuts the last")
    parser.add_argument("--models", default="mlp,resnet50,bert,vgg16", help="eager workloads")
    parser.add_argument("--compile-models", default="resnet50,bert,mlp")
    parser.add_argument("--loops", default=",".join(LOOP_ORDER))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compile-rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per run (CNNs, BERT)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mlp-steps", type=int, default=500)
    parser.add_argument("--precision", default="bf16-mixed", choices=["bf16-mixed", "32-true"])
    parser.add_argument("--budget-s", type=float, default=450, help="start no run that would end after this")
    parser.add_argument("--out", default=os.environ.get("OUT") or "trainer_gpu_out")
    args = parser.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    args.compile_models = [m for m in args.compile_models.split(",") if m]
    args.loops = [m for m in args.loops.split(",") if m]
    if args.quick:
        args.rounds = min(args.rounds, 2)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda, but torch sees no CUDA GPU (use --device cpu --quick for a CPU check)")
    os.environ.setdefault("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "1")
    warnings.filterwarnings("ignore")
    import logging

    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if device.type == "cuda":  # the Trainer's defaults on CUDA, set for every loop alike
        torch.set_float32_matmul_precision("high")
        torch.backends.cudnn.benchmark = True
    else:
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(args.budget_s, args.quick)
    report: dict[str, Any] = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "device": str(device),
            "device_name": _device_name(device),
            "versions": _versions(),
            "precision": args.precision,
            "rounds": args.rounds,
            "quick": args.quick,
            "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        },
        "errors": [],
        "skipped": [],
    }
    parts = {"eager": eager_part, "fsdp": fsdp_part, "compile": compile_part}
    for name in [p for p in args.parts.split(",") if p]:
        print(f"== {name} (budget left {budget.left():.0f} s)", flush=True)
        started = time.monotonic()
        parts[name](args, device, report, budget)
        report["meta"].setdefault("part_seconds", {})[name] = round(time.monotonic() - started, 1)
        _compile_ratios(report)
        _write(out, report)
    report["meta"]["seconds"] = round(args.budget_s - budget.left(), 1)
    _write(out, report)
    print(markdown(report))
    print(f"written: {out / 'trainer_gpu.json'}, {out / 'trainer_gpu.md'}")
    if report["errors"]:
        return 1
    return 3 if report["skipped"] else 0


def _write(out: Path, report: dict[str, Any]) -> None:
    (out / "trainer_gpu.json").write_text(json.dumps(report, indent=1))
    (out / "trainer_gpu.md").write_text(markdown(report))


if __name__ == "__main__":
    sys.exit(main())
