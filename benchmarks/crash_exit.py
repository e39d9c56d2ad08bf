"""Seconds from a rank's crash to the end of the job, and a preemption's checkpoint (issue 31).

    python benchmarks/crash_exit.py --out "$OUT"                         # a 2-GPU machine (NCCL)
    python benchmarks/crash_exit.py --device cpu --out /tmp/crash        # checks the script with gloo

Rank 1 raises at step ``--crash-step`` of a small DDP job (an MLP whose gradient all-reduce is a few hundred
MB, bf16 autocast on the GPU): rank 0 is then inside that all-reduce, waiting for a peer that is gone.
Each case is a fresh job started the way a user starts it:

- ``torchrun-raw``: plain ``torchrun``, a hand-written DDP loop with no signal handler (rank 0 dies on the
  agent's SIGTERM);
- ``torchrun-trainer``: plain ``torchrun``, accelplug's Trainer (``strategy="ddp"``);
- ``launch-trainer``: ``accelplug launch``, the same Trainer script;
- ``launch-trainer-nowatch``: the same with ``ACCELPLUG_HANG_TIMEOUT_S=0`` (the hang watchdog, which also
  spreads a rank's failure, off): only the launcher's short grace after a failure ends rank 0;
- ``preempt``: ``accelplug launch``, every rank alive, SIGTERM to the launcher at step 10: the job must
  end with 143 and a ``last.ckpt`` that loads.

The crashing rank writes the wall-clock time of its ``raise``; "crash to exit" is the launcher's end minus
that. The rank the launcher's last lines name is read from its stderr. ``NCCL_NVLS_ENABLE=0``,
``TORCH_SYMM_MEM_DISABLE_MULTICAST=1`` and ``NVSHMEM_DISABLE_NVLS=1`` are set in every process.
Writes ``crash_exit.json`` and ``crash_exit.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
CASES = ("torchrun-raw", "torchrun-trainer", "launch-trainer", "launch-trainer-nowatch", "preempt")


# ---- the workers -------------------------------------------------------------------------------------
def _model(device: Any, width: int) -> Any:
    import torch

    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(4):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 1)).to(device)


def _say(text: str) -> None:
    os.write(1, f"{text}\n".encode())


def _crash_now(args: argparse.Namespace, rank: int, step: int) -> None:
    if rank == args.crash_rank and step == args.crash_step:
        Path(args.mark).write_text(f"{time.time():.4f}")
        _say(f"CRASHING rank={rank} step={step}")
        raise RuntimeError(f"rank {rank} crashes on purpose at step {step}")


def worker(args: argparse.Namespace) -> None:
    import torch

    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    cuda = args.device == "cuda"
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    width = 4096 if cuda else 64
    if args.child == "raw":
        import torch.distributed as dist

        if cuda:
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
        model = torch.nn.parallel.DistributedDataParallel(_model(device, width), device_ids=[device] if cuda else None)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(64, width, device=device)
        for step in range(args.max_steps):
            _crash_now(args, rank, step)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
                loss = model(x).float().pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        dist.destroy_process_group()
        return
    from torch.utils.data import DataLoader, TensorDataset

    from accelplug import Trainer

    class Module(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = _model(None, width)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            step = int(self._trainer.global_step)  # type: ignore[attr-defined]
            _crash_now(args, rank, step)
            if step == args.ready_step and rank == 0:
                _say(f"READY step={step}")
            if args.step_sleep:
                time.sleep(args.step_sleep)
            (x,) = batch
            return self.net(x).float().pow(2).mean()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=1e-3)

    trainer = Trainer(
        accelerator=args.device, devices=int(os.environ["LOCAL_WORLD_SIZE"]), strategy="ddp",
        precision="bf16-mixed" if cuda else "32-true", max_steps=args.max_steps, max_epochs=-1,
        default_root_dir=args.root_dir, logger=False, enable_progress_bar=False, enable_model_summary=False,
        log_every_n_steps=5, num_sanity_val_steps=0,
    )  # fmt: skip
    module = Module()
    module._trainer = trainer  # type: ignore[assignment]
    data = TensorDataset(torch.randn(64 * 8, width))
    trainer.fit(module, DataLoader(data, batch_size=64))
    _say(f"DONE rank={rank} step={trainer.global_step}")


# ---- the orchestrator ----------------------------------------------------------------------------------
def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, **NO_MULTICAST)
    env.setdefault("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def _named_rank(stderr: str) -> int | None:
    """The rank the output blames: accelplug launch's last line, a survivor's line, else torchrun's root cause."""
    tail = stderr.strip().splitlines()[-40:]
    for line in reversed(tail):
        found = re.search(r"accelplug launch: rank (\d+) (failed|is hung)", line)
        if found:
            return int(found.group(1))
    for line in stderr.splitlines():  # a survivor's own line: "accelplug: rank N failed (...); rank M stopped"
        found = re.search(r"accelplug: rank (\d+) failed \(", line)
        if found:
            return int(found.group(1))
    block = "\n".join(tail)
    cause = block.split("Root Cause", 1)[-1]
    found = re.search(r"rank\s*:\s*(\d+)", cause)
    return int(found.group(1)) if found else None


def run_case(args: argparse.Namespace, case: str) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"crash_{case}_"))
    mark = work / "crashed_at"
    script_args = ["--child", "raw" if case == "torchrun-raw" else "trainer", "--device", args.device]
    script_args += ["--mark", str(mark), "--root-dir", str(work), "--max-steps", "400" if case == "preempt" else "50"]
    extra: dict[str, str] = {}
    if case == "preempt":
        script_args += ["--crash-rank", "-1", "--ready-step", "10", "--step-sleep", "0.05"]
    else:
        script_args += ["--crash-rank", "1", "--crash-step", str(args.crash_step)]
    if case == "launch-trainer-nowatch":
        extra["ACCELPLUG_HANG_TIMEOUT_S"] = "0"
    if case.startswith("torchrun"):
        port = str(29500 + (os.getpid() + int(time.time())) % 1000)
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", port]
    else:
        where = ["--cpu"] if args.device == "cpu" else ["--accelerator", "cuda"]
        command = [sys.executable, "-m", "accelplug", "launch", *where, "--devices", "2"]
    command += [str(HERE), *script_args]
    started = time.time()
    child = subprocess.Popen(
        command, env=_env(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    assert child.stdout is not None
    signalled_at = None
    if case == "preempt":
        line = child.stdout.readline()
        while line and "READY" not in line:
            line = child.stdout.readline()
        signalled_at = time.time()
        child.send_signal(signal.SIGTERM)
    try:
        out, err = child.communicate(timeout=args.case_timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        timed_out = True
    ended = time.time()
    result: dict[str, Any] = {
        "case": case,
        "command": " ".join(command[1:]),
        "returncode": child.returncode,
        "timed_out": timed_out,
        "total_s": round(ended - started, 2),
        "stderr_tail": err[-2500:],
    }
    if case == "preempt":
        ckpt = next(work.rglob("last.ckpt"), None)
        loads = False
        if ckpt is not None:
            import torch

            try:
                loads = "state_dict" in torch.load(ckpt, map_location="cpu", weights_only=False)
            except Exception as exc:
                result["load_error"] = str(exc)[:300]
        result.update(
            signal_to_exit_s=round(ended - (signalled_at or ended), 2),
            checkpoint=str(ckpt) if ckpt else None,
            checkpoint_loads=loads,
            ok=child.returncode == 143 and loads,
        )
    else:
        crashed = float(mark.read_text()) if mark.is_file() else None
        result.update(
            crash_to_exit_s=round(ended - crashed, 2) if crashed else None,
            rank_named=_named_rank(err),
            ok=child.returncode != 0 and crashed is not None and not timed_out,
        )
    del out
    return result


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [
        f"Measured {meta['date']} on {meta['device']}, torch {meta['torch']}, command `{meta['command']}`.",
        "",
        "| case | crash (or SIGTERM) to exit, s: median (each run) | whole job, s | exit code | rank named |",
        "|---|---|---|---|---|",
    ]
    for case in meta["cases"]:
        runs = [r for r in report["runs"] if r["case"] == case]
        key = "signal_to_exit_s" if case == "preempt" else "crash_to_exit_s"
        values = [r[key] for r in runs if r.get(key) is not None]
        each = ", ".join(f"{v:.2f}" for v in values)
        median = f"{statistics.median(values):.2f} ({each})" if values else "—"
        total = ", ".join(f"{r['total_s']:.1f}" for r in runs)
        codes = ", ".join(str(r["returncode"]) for r in runs)
        named = ", ".join(
            ("ckpt loads" if r.get("checkpoint_loads") else "NO CKPT")
            if case == "preempt"
            else str(r.get("rank_named"))
            for r in runs
        )
        lines.append(f"| {case} | {median} | {total} | {codes} | {named} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--crash-step", type=int, default=5)
    parser.add_argument("--case-timeout", type=float, default=90)
    parser.add_argument("--budget-s", type=float, default=240)
    parser.add_argument("--out", default=os.environ.get("OUT") or "crash_out")
    parser.add_argument("--child", choices=["raw", "trainer"], default=None)
    parser.add_argument("--mark", default="")
    parser.add_argument("--root-dir", default=".")
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--crash-rank", type=int, default=1)
    parser.add_argument("--ready-step", type=int, default=-1)
    parser.add_argument("--step-sleep", type=float, default=0.0)
    args = parser.parse_args()
    if args.child:
        worker(args)
        return 0
    os.environ.update(NO_MULTICAST)
    import torch

    cases = [c for c in args.cases.split(",") if c]
    report: dict[str, Any] = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "torch": torch.__version__,
            "device": f"2 x {torch.cuda.get_device_name(0)}" if args.device == "cuda" else "CPU (gloo)",
            "cases": cases,
            "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        },
        "runs": [],
        "skipped": [],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for repeat in range(args.repeats):
        for case in cases[repeat % len(cases) :] + cases[: repeat % len(cases)]:
            if time.monotonic() - started > args.budget_s:
                report["skipped"].append(f"{case} repeat {repeat}")
                continue
            result = run_case(args, case)
            report["runs"].append(result)
            shown = {k: v for k, v in result.items() if k not in ("stderr_tail", "command")}
            print(json.dumps(shown), flush=True)
            (out / "crash_exit.json").write_text(json.dumps(report, indent=1))
            (out / "crash_exit.md").write_text(markdown(report))
    print(markdown(report))
    return 0 if all(r["ok"] for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
