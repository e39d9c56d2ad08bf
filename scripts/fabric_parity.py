"""The figures of docs/fabric.md: the same Fabric loops under Lightning Fabric and accelplug, on two CPU processes.

    python scripts/fabric_parity.py            # DDP loops and FSDP, each framework launched by torchrun
    python scripts/fabric_parity.py fsdp       # one case

Each case is ``tests/fabric/scripts/parity.py`` launched twice (``lightning`` then ``accelplug``) with
``torch.distributed.run --nproc-per-node 2``; this prints, per loop, how many numbers were compared and the
largest absolute difference between the two frameworks' losses, gradient norms and weights (0.0: bit-identical).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tests" / "fabric" / "scripts" / "parity.py"


def _launch(framework: str, case: str, out: Path) -> list[dict[str, Any]]:
    sys.path.insert(0, str(REPO / "src"))
    from accelplug.launcher import free_port

    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port"]
    command += [str(free_port()), str(SCRIPT), framework, case, str(out)]
    subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    return [json.loads((out / f"{framework}-{case}.rank{rank}.json").read_text()) for rank in (0, 1)]


def _flatten(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in _flatten(value[key])]
    if isinstance(value, list):
        return [x for item in value for x in _flatten(item)]
    return [float(value)]


def main() -> None:
    cases = sys.argv[1:] or ["ddp", "fsdp"]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        for case in cases:
            theirs, ours = _launch("lightning", case, out), _launch("accelplug", case, out)
            for loop in ours[0]:
                if loop not in theirs[0]:  # accelplug's own checks (meta_init): compared in the tests
                    continue
                if loop == "collectives":
                    same = all(o[loop] == t[loop] for o, t in zip(ours, theirs, strict=True))
                    print(f"{case:5} {loop:22} identical: {same}")
                    continue
                for part in ("losses", "local_losses", "norms", "weights"):
                    a = [x for run in ours if part in run[loop] for x in _flatten(run[loop][part])]
                    b = [x for run in theirs if part in run[loop] for x in _flatten(run[loop][part])]
                    if not a:
                        continue
                    worst = max(abs(x - y) for x, y in zip(a, b, strict=True))
                    print(f"{case:5} {loop:22} {part:12} {len(a):5} numbers, largest difference {worst:.3g}")


if __name__ == "__main__":
    main()
