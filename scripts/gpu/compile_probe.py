"""Where does ``Trainer(compile=True)`` lose to a hand-written compiled loop on BERT-base? (issue 23)

Three loops on the same model and batches, interleaved rounds, each compiled afresh:

- ``raw``: ``torch.compile(model)``, the hand-written loop of ``benchmarks/workloads.py``;
- ``inplace``: the hand-written loop on the benchmark's LightningModule-shaped module compiled in place
  (``module.compile()``), its ``training_step`` called by hand: what the Trainer compiles, without the Trainer;
- ``accelplug``: ``Trainer(compile=True)``.

    python scripts/gpu/compile_probe.py --rounds 3 --model bert        # on the GPU machine

Run with ``TORCHINDUCTOR_FX_GRAPH_CACHE=0`` as well, to see whether a graph loaded from inductor's cache
behaves differently from one compiled in the process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch._dynamo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import workloads as w


def inplace_loop(workload: w.Workload, data: w.TimedBatches, config: w.LoopConfig) -> dict[str, Any]:
    module = w.ProtocolModule(workload).to(config.device)
    module.compile()
    optimizer = module.configure_optimizers()
    for index, batch in enumerate(data):
        optimizer.zero_grad(set_to_none=True)
        with w._autocast(config):
            loss = module.training_step(batch, index)
        loss.backward()
        optimizer.step()
    return {}


class ProfiledBatches(w.TimedBatches):
    """The timed batches, with ``torch.profiler`` recording ``PROFILED`` steps from the middle of the window."""

    PROFILED = 10
    summaries: ClassVar[list[dict[str, Any]]] = []

    def __iter__(self) -> Any:
        from torch.profiler import ProfilerActivity, profile

        start = self.warmup + 20
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        for index, batch in enumerate(super().__iter__()):
            if index == start:
                torch.cuda.synchronize()
                prof.__enter__()
                self._t0 = __import__("time").perf_counter()
            elif index == start + self.PROFILED:
                torch.cuda.synchronize()
                wall = __import__("time").perf_counter() - self._t0
                prof.__exit__(None, None, None)
                events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
                kernel_us = sum(e.self_device_time_total for e in events)
                count = sum(e.count for e in events)
                top = sorted(events, key=lambda e: -e.self_device_time_total)[:6]
                ProfiledBatches.summaries.append(
                    {
                        "wall_ms_per_step": 1000 * wall / self.PROFILED,
                        "gpu_ms_per_step": kernel_us / 1000 / self.PROFILED,
                        "kernels_per_step": count / self.PROFILED,
                        "top": [(e.key[:60], round(e.self_device_time_total / 1000 / self.PROFILED, 3)) for e in top],
                    }
                )
            yield batch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="bert")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--loops", default="raw,inplace,accelplug")
    parser.add_argument("--json")
    parser.add_argument("--profile", action="store_true", help="one profiled window per run (wall vs GPU time)")
    args = parser.parse_args()

    w.LOOPS["inplace"] = inplace_loop
    device = torch.device("cuda")
    work = w.workloads(False)[args.model]
    loops = args.loops.split(",")
    runs: dict[str, list[float]] = {loop: [] for loop in loops}
    for round_index in range(args.rounds):
        order = loops[round_index % len(loops) :] + loops[: round_index % len(loops)]
        for loop in order:
            torch._dynamo.reset()
            config = w.LoopConfig(device, "bf16-mixed", compile=True)
            if args.profile:
                w.TimedBatches = ProfiledBatches  # type: ignore[misc]
            figures = w.measure(loop, work, config, args.steps, args.warmup)
            runs[loop].append(figures["value"])
            print(f"round {round_index + 1} {loop:10} {figures['value']:.1f} {work.unit}", flush=True)
            if args.profile and ProfiledBatches.summaries:
                print("   ", json.dumps(ProfiledBatches.summaries.pop()), flush=True)
    medians = {loop: statistics.median(values) for loop, values in runs.items()}
    print("medians:", {k: round(v, 1) for k, v in medians.items()})
    if "raw" in medians:
        print("vs raw:", {k: round(v / medians["raw"], 3) for k, v in medians.items()})
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "medians": medians}, indent=1))


if __name__ == "__main__":
    main()
