"""The one starter of processes on this machine (``ddp_spawn``/``ddp_fork``/``ddp_notebook``, Trainer and Fabric).

Whatever the start method, every process is told who it is through torchrun's variables plus ``NODE_RANK``
and the rendezvous, so the cluster environments read the same answers as under torchrun.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from accelplug.distributed.local_processes import LOCAL_PROCESS_VARIABLES, start_local_processes
from accelplug.environments import LightningEnvironment


def _report(folder: str) -> str:
    """What one started process is told, written where the test reads it; rank 0's answer is returned."""
    seen = {name: os.environ.get(name) for name in LOCAL_PROCESS_VARIABLES}
    seen["node_rank"] = str(LightningEnvironment().node_rank())
    Path(folder, f"{seen['RANK']}.json").write_text(json.dumps(seen))
    return "rank 0 answered"


@pytest.mark.slow
@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_each_started_process_is_told_its_rank_as_torchrun_tells_it(tmp_path: Path, start_method: str) -> None:
    answer = start_local_processes(_report, {"folder": str(tmp_path)}, 2, start_method, strategy_name="ddp_spawn")

    assert answer == "rank 0 answered"
    seen = [json.loads((tmp_path / f"{rank}.json").read_text()) for rank in (0, 1)]
    port = seen[0]["MASTER_PORT"]
    for rank, told in enumerate(seen):
        assert told == {
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": "2",
            "LOCAL_WORLD_SIZE": "2",
            "GROUP_RANK": "0",
            "NODE_RANK": "0",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "node_rank": "0",
        }
