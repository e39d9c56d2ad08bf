"""A Fabric job for the cluster tests: ``srun --ntasks=2 python fabric_job.py`` makes one process group of two.

Each process prints its rank, the world size and the sum of all ranks (an all-reduce), so the test
sees that srun's two tasks joined one group instead of each re-launching processes of its own.
"""

from __future__ import annotations

import os
import sys

import torch

from accelplug.fabric import Fabric
from accelplug.plugins.environments import SLURMEnvironment


def main() -> int:
    plugins = [SLURMEnvironment(auto_requeue=False)] if "--given" in sys.argv else None
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp", plugins=plugins)
    fabric.launch()
    total = fabric.all_reduce(torch.tensor(float(fabric.global_rank)), reduce_op="sum")
    line = f"fabric rank {fabric.global_rank} of {fabric.world_size}: sum of ranks {int(total)}\n"
    os.write(sys.stdout.fileno(), line.encode())  # one write: the ranks share the pipe
    return 0


if __name__ == "__main__":
    sys.exit(main())
