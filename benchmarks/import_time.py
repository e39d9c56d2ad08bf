"""Whole-process wall time of accelplug's start-up against ``import torch`` alone, in one run.

Every command runs in a fresh interpreter; the commands are interleaved round by round so that drift
in the machine's load hits all of them alike, and the median of ``--repeats`` rounds is reported.
Peers (Lightning, Accelerate) are timed too when they are installed.

On a busy machine whole-process times of a second or more spread by hundreds of milliseconds, which
hides a difference of tens; so each round also runs one process that times, with ``perf_counter``
inside it, ``import torch``, then ``from accelplug import Trainer``, then ``Trainer(accelerator="auto")``:
the last two are accelplug's own cost on top of torch, measured without the interpreter's start-up
and torch's import in the difference.

accelplug's modules are byte-compiled once first, as ``pip install`` does for an installed package:
an editable install run with ``PYTHONDONTWRITEBYTECODE=1`` (set on the project's machines) would
otherwise recompile every module from source in every process, which no installed copy does (about
+50 ms on the 2-core box).

    python benchmarks/import_time.py [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

COMMANDS: dict[str, str] = {
    "python -c pass": "pass",
    "import torch": "import torch",
    "import accelplug (no torch, no plugins)": "import accelplug",
    "accelplug: get_registry().available()": "import accelplug; accelplug.get_registry().available()",
    "accelplug: Trainer(accelerator='auto')": "from accelplug import Trainer; Trainer(accelerator='auto')",
}
PEERS: dict[str, tuple[str, str]] = {
    "Lightning: AcceleratorRegistry list": (
        "lightning",
        "from lightning.pytorch.accelerators import AcceleratorRegistry; AcceleratorRegistry.available_accelerators()",
    ),
    "Lightning: Trainer(accelerator='auto')": (
        "lightning",
        "from lightning.pytorch import Trainer; Trainer(accelerator='auto', logger=False, enable_progress_bar=False)",
    ),
    "Accelerate: Accelerator()": ("accelerate", "from accelerate import Accelerator; Accelerator()"),
}


def _time(code: str) -> float:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    return time.perf_counter() - start


_SPLIT = """
import time, json
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from accelplug import Trainer
t2 = time.perf_counter()
Trainer(accelerator="auto")
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""
SPLIT_LABELS = ("import torch", "from accelplug import Trainer", "Trainer(accelerator='auto')")


def _split() -> list[float]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _SPLIT], check=True, env=env, capture_output=True, text=True)
    return [float(v) for v in json.loads(out.stdout.strip().splitlines()[-1])]


def _byte_compile_accelplug() -> None:
    import compileall

    spec = importlib.util.find_spec("accelplug")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()

    commands = dict(COMMANDS)
    for label, (package, code) in PEERS.items():
        if importlib.util.find_spec(package) is not None:
            commands[label] = code
    _byte_compile_accelplug()
    for code in commands.values():  # warm the page cache and bytecode once, untimed
        _time(code)
    samples: dict[str, list[float]] = {label: [] for label in commands}
    split: list[list[float]] = []
    for _ in range(args.repeats):
        for label, code in commands.items():
            samples[label].append(_time(code))
        split.append(_split())

    medians = {label: statistics.median(values) for label, values in samples.items()}
    torch_s = medians["import torch"]
    print(f"median of {args.repeats} fresh processes, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print(f"{'command':45} {'seconds':>8} {'over import torch':>18}")
    for label, seconds in medians.items():
        over = f"{(seconds - torch_s) * 1000:+.0f} ms" if label not in ("python -c pass", "import torch") else ""
        print(f"{label:45} {seconds:8.3f} {over:>18}")
    columns = zip(*split, strict=True)
    inside = {label: statistics.median(column) for label, column in zip(SPLIT_LABELS, columns, strict=True)}
    print("\nin one process (medians): " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in inside.items()))
    added = (inside[SPLIT_LABELS[1]] + inside[SPLIT_LABELS[2]]) * 1000
    print(f"accelplug's own cost on top of import torch: {added:.1f} ms")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            report = {"repeats": args.repeats, "median_seconds": medians, "samples": samples}
            json.dump({**report, "in_process_median_seconds": inside, "in_process_samples": split}, fh, indent=2)


if __name__ == "__main__":
    main()
