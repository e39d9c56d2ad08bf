"""Three training/evaluation loops on one BERT-like model, interleaved in one process: where the BERT gap came from.

The first ``accelplug bench`` (its own timing loop, before it measured through the Trainer) disagreed
with a hand-written loop on BERT-base training by -15% on the lent H100, measured in separate processes
one after the other. This script puts the three loops side by side on the same model object and the
same batch, in one process, in rounds whose order rotates (so drift favours none):

- ``hand``: the hand-written loop of ``scripts/gpu/bench_gpu.py`` (torch only);
- ``engine``: the loop the first ``accelplug bench`` timed with, copied here verbatim (it is gone
  from accelplug);
- ``trainer``: what ``accelplug bench`` times now, ``Trainer.fit`` / ``Trainer.validate`` with the
  :class:`accelplug.bench.timing.StepTimer` callback.

It prints every round and the medians with their spread, and writes ``bert_variance.json`` into
``--out`` (default ``$OUT`` when set). On the CPU box (no transformers there) with the torch-only
stand-in::

    python scripts/gpu/bert_variance.py --device cpu --model tinybert --threads 1 --rounds 9 --steps 6 --warmup 2 \
        --clock cpu

(``--clock cpu`` times with the process's CPU time: on a shared box, time spent descheduled is the
neighbours' doing, not the loop's.)

On the GPU machine (BERT-base from transformers, bf16 autocast, about a minute)::

    source scripts/gpu/setup.sh && python3 scripts/gpu/bert_variance.py --device cuda --model bert --rounds 6
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from accelplug.bench.loops import BenchModule, make_batch, trainer_round
from accelplug.bench.models import get_workload
from accelplug.bench.timing import StepWindow, synchronize

LOOPS = ("hand", "engine", "trainer")


#: The clock every loop reads: wall time, or (``--clock cpu``, for the CPU) this process's CPU time.
CLOCK: list[Callable[[], float]] = [time.perf_counter]


def hand(
    phase: str, model: nn.Module, batch: Any, device: torch.device, precision: str, warmup: int, steps: int
) -> float:
    """``scripts/gpu/bench_gpu.py``'s hand-written loop (``_plain``), for one model already built."""
    x, y = batch
    dtype = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(precision)

    def amp() -> Any:
        return torch.autocast(device.type, dtype=dtype) if dtype is not None else contextlib.nullcontext()

    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")
    model.train(phase == "train")
    start = 0.0
    for i in range(warmup + steps):
        if i == warmup:
            synchronize(device)
            start = CLOCK[0]()
        if phase == "train":
            opt.zero_grad(set_to_none=True)
            with amp():
                loss = nn.functional.cross_entropy(_logits(model, x), y)
            scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
            scaler.step(opt)
            scaler.update()
        else:
            with torch.inference_mode(), amp():
                _logits(model, x)
    synchronize(device)
    return CLOCK[0]() - start


def _logits(model: nn.Module, inputs: Any) -> torch.Tensor:
    out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    return out.logits if hasattr(out, "logits") else out  # type: ignore[no-any-return]


def engine(
    phase: str, model: nn.Module, batch: Any, device: torch.device, precision: str, warmup: int, steps: int
) -> float:
    """The first ``accelplug bench`` engine's ``_measure``/``_timed`` (``src/accelplug/bench/runner.py`` before
    it timed the Trainer), unchanged but for taking a built model and batch: autocast per step, a
    GradScaler (disabled unless float16), progress ticks outside the timed region."""
    inputs, labels = batch
    autocast_dtypes = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")

    def _autocast() -> contextlib.AbstractContextManager[object]:
        dtype = autocast_dtypes.get(precision)
        return contextlib.nullcontext() if dtype is None else torch.autocast(device.type, dtype=dtype)

    def train_step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with _autocast():
            loss = nn.functional.cross_entropy(_logits(model, inputs), labels)
        scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
        scaler.step(optimizer)
        scaler.update()

    def eval_step() -> None:
        with torch.inference_mode(), _autocast():
            _logits(model, inputs)

    step: Callable[[], None] = train_step if phase == "train" else eval_step
    model.train(phase == "train")
    for _ in range(warmup):
        step()
    synchronize(device)
    start = CLOCK[0]()
    for _ in range(steps):
        step()
    synchronize(device)
    return CLOCK[0]() - start


def trainer(
    phase: str, module: BenchModule, batch: Any, device: torch.device, precision: str, warmup: int, steps: int
) -> float:
    """``accelplug bench`` now: ``Trainer.fit``/``validate`` timed by the StepTimer callback."""
    window = StepWindow(device, warmup, steps, clock=CLOCK[0])
    trainer_round("train" if phase == "train" else "eval", module, batch, device.type, precision, window)
    return window.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--model", default="bert", choices=("bert", "tinybert"))
    parser.add_argument("--precision", default=None, help="default: bf16-mixed on cuda, 32-true on the CPU")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (CPU)")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu: time.process_time, the CPU time this process used (with --device cpu on a shared box)",
    )
    parser.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.clock == "cpu":
        if args.device != "cpu":
            raise SystemExit("--clock cpu measures CPU time: only meaningful with --device cpu")
        CLOCK[0] = time.process_time
    device = torch.device(args.device)
    precision = args.precision or ("bf16-mixed" if device.type == "cuda" else "32-true")
    workload = get_workload(args.model)
    torch.manual_seed(0)
    module = BenchModule(workload, workload.build().to(device))
    batch = make_batch(workload, device, None)
    samples = workload.batch_size * args.steps
    results: dict[str, dict[str, list[float]]] = {}
    print(f"{workload.title} batch {workload.batch_size} on {device} ({precision}), {args.steps} timed steps after "
          f"{args.warmup}, {args.rounds} rounds, order rotating, {args.clock} clock; samples/s per round:",
          flush=True)  # fmt: skip
    for phase in ("train", "eval"):
        per_loop: dict[str, list[float]] = {loop: [] for loop in LOOPS}
        for index in range(args.rounds):
            order = LOOPS[index % 3 :] + LOOPS[: index % 3]
            for loop in order:
                if loop == "trainer":
                    seconds = trainer(phase, module, batch, device, precision, args.warmup, args.steps)
                else:
                    runner = hand if loop == "hand" else engine
                    seconds = runner(phase, module.model, batch, device, precision, args.warmup, args.steps)
                per_loop[loop].append(samples / seconds)
            print(
                f"  {phase} round {index + 1}: " + "  ".join(f"{k} {per_loop[k][-1]:8.1f}" for k in LOOPS), flush=True
            )
        results[phase] = per_loop
        base = statistics.median(per_loop["hand"])
        for loop in LOOPS:
            values = per_loop[loop]
            ratios = [v / h for v, h in zip(values, per_loop["hand"], strict=True)]
            median = statistics.median(values)
            print(
                f"{phase} {loop:8s} median {median:8.1f} (min {min(values):.1f}, max {max(values):.1f})"
                f"  / hand median {median / base:.3f} (paired rounds {min(ratios):.2f}-{max(ratios):.2f})",
                flush=True,
            )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "bert_variance.json"
        settings = {k: str(v) for k, v in vars(args).items()} | {"precision": precision, "torch": torch.__version__}
        path.write_text(json.dumps({"settings": settings, "samples_per_s": results}, indent=2), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
