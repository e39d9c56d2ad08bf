"""Check ``CUDAAccelerator.device_count()`` against the CUDA runtime for many ``CUDA_VISIBLE_DEVICES`` values.

Usage on the GPU machine, from the repository root::

    source scripts/gpu/setup.sh && python3 scripts/gpu/cuda_visible_devices.py [--json "$OUT/cvd.json"]

For each value (built from this machine's real GPU UUIDs, read from NVML) it starts fresh processes:

- one that asks torch: ``torch.cuda.device_count()`` first (torch's NVML-based estimate, no CUDA
  initialised; its parser may refuse a value), then the runtime itself
  (``torch._C._cuda_getDeviceCount()``, which initialises CUDA): the runtime's count is the ground truth;
- one that asks ``CUDAAccelerator.device_count()`` and then whether CUDA got initialised in it.

It prints one row per value and exits 1 if accelplug disagrees with the runtime on any row or
initialised CUDA, 2 when there is no NVIDIA GPU here. The value list holds every row of issue 11's
table, PyTorch's parsing cases that make sense on this machine, and a few that nobody has measured yet
(a UUID mixed with an index); a disagreement on those is a finding, and fails the run like any other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

RUNTIME = """
import torch
try:
    estimate = str(torch.cuda.device_count())  # torch's NVML-based count: CUDA not initialised yet
except Exception as exc:  # torch's own parser refuses some values ('\u00b2'): the runtime is still asked
    estimate = type(exc).__name__
try:
    runtime = torch._C._cuda_getDeviceCount()  # the CUDA runtime's own answer (initialises CUDA)
except Exception as exc:
    runtime = f"error: {type(exc).__name__}: {exc}"
print(estimate, runtime)
"""

ACCELPLUG = """
import torch
from accelplug.accelerators import CUDAAccelerator
print(CUDAAccelerator.device_count(), torch.cuda.is_initialized())
"""


def physical_uuids() -> list[str]:
    sys.path.insert(0, str(REPO / "src"))
    from accelplug.hardware import _nvml

    return [gpu.uuid for gpu in _nvml.physical_gpus()]


def values(uuids: list[str]) -> list[str | None]:
    """The CUDA_VISIBLE_DEVICES values to try on a machine with these GPUs (None: unset)."""
    first = uuids[0]
    hexpart = first.removeprefix("GPU-")
    count = len(uuids)
    rows: list[str | None] = [
        None, "", "0", "0,0", f"{first},{first}", "+0", "0gpu", hexpart, "GPU-", f"MIG-{hexpart}",
        first, first[:12], "-1", "-0", " 0", str(count), f"0,{count}", "²", "٣",
        f"0,{first}", f"{first},0", f"{first}, {first}",
        "1gpu2,2ampere", "2, +3, -0, 5", "one,two,3,4", "4,3,two,one", "0, 1, 2, 1", "0, 1, 2, -1, 3",
        "GPU-123, 2", "GPU-123",
    ]  # fmt: skip
    if count >= 2:
        second = uuids[1]
        rows += ["1,0", "1, 5, 0", f"{second[:12]},{first[:12]}", f"{first},{second},{first[:8]}", "0,1,0"]
    return list(dict.fromkeys(rows))


def _python(code: str, visible: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1]}"
    return done.stdout.strip().splitlines()[-1]


def measure(visible: str | None) -> dict[str, object]:
    estimate, _, runtime = _python(RUNTIME, visible).partition(" ")
    accelplug, _, initialised = _python(ACCELPLUG, visible).partition(" ")
    agrees = accelplug == runtime and initialised == "False"
    return {
        "CUDA_VISIBLE_DEVICES": visible,
        "runtime": runtime,
        "torch_estimate": estimate,
        "accelplug": accelplug,
        "cuda_initialised_by_accelplug": initialised,
        "agrees": agrees,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", dest="json_path", help="also write the rows here")
    parser.add_argument("--jobs", type=int, default=8, help="values measured at once")
    args = parser.parse_args()
    try:
        uuids = physical_uuids()
    except Exception as exc:  # no driver, no NVML: nothing to compare with
        print(f"no NVIDIA GPU to compare with: {exc}", file=sys.stderr)
        return 2
    if not uuids:
        print("NVML lists no GPU", file=sys.stderr)
        return 2
    print(f"{len(uuids)} GPU(s): {', '.join(uuids)}")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(measure, values(uuids)))
    print(f"{'CUDA_VISIBLE_DEVICES':52} {'runtime':>8} {'torch':>6} {'accelplug':>9}  verdict")
    for row in rows:
        shown = "(unset)" if row["CUDA_VISIBLE_DEVICES"] is None else repr(row["CUDA_VISIBLE_DEVICES"])
        verdict = "ok" if row["agrees"] else "DISAGREES"
        if row["cuda_initialised_by_accelplug"] != "False":
            verdict += " (accelplug initialised CUDA)"
        print(f"{shown:52} {row['runtime']!s:>8} {row['torch_estimate']!s:>6} {row['accelplug']!s:>9}  {verdict}")
    bad = sum(not row["agrees"] for row in rows)
    print(f"{len(rows)} values, {bad} disagreement(s)")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"uuids": uuids, "rows": rows}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
