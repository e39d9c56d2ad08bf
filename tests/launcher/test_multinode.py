"""Two torchrun agents on this machine as two nodes (c10d rendezvous on localhost) train one model.

Each agent is ``accelplug launch --nnodes 2 --devices 1 --rdzv-backend c10d`` with one process; the
script asks for ``Trainer(devices=1, num_nodes=2)``. The two nodes must end with exactly the weights
of one node running two processes: the same world of two, the same data shards.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from accelplug.launcher import free_port
from tests.processes import REPO, child_env

pytestmark = pytest.mark.slow

TRAIN = REPO / "tests" / "clusters" / "train_job.py"
_ENV = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _launch(*args: str) -> list[str]:
    return [sys.executable, "-m", "accelplug", "launch", "--cpu", *args]


def _job(root: Path, out: str) -> list[str]:
    """The script's arguments: one device per node, two nodes."""
    return ["--root", str(root), "--out", str(root.parent / out), "--devices", "1", "--num-nodes", "2"]


def test_two_agents_as_two_nodes_train_the_weights_of_one_node_with_two_processes(tmp_path: Path) -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    rendezvous = ["--nnodes", "2", "--devices", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint]
    agents = [
        subprocess.Popen(
            [*_launch(*rendezvous, "--rdzv-id", "two-nodes"), str(TRAIN), *_job(tmp_path / "nodes", f"node{n}.pt")],
            env=child_env(_ENV),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for n in (0, 1)
    ]
    outputs = [agent.communicate(timeout=300) for agent in agents]
    for agent, (_, err) in zip(agents, outputs, strict=True):
        assert agent.returncode == 0, err
    lines = sorted(line for out, _ in outputs for line in out.splitlines() if line.startswith("rank "))
    assert [line.split(", pid")[0] for line in lines] == ["rank 0 of 2 (node 0", "rank 1 of 2 (node 1"]
    assert all(line.endswith(": 24 steps") for line in lines)
    # rank 0 (on whichever agent the rendezvous made node 0) saved the weights
    saved = [tmp_path / f"node{n}.pt" for n in (0, 1) if (tmp_path / f"node{n}.pt").exists()]
    assert len(saved) == 1

    one_node = subprocess.run(
        [*_launch("--devices", "2"), str(TRAIN), "--root", str(tmp_path / "one"), "--out", str(tmp_path / "one.pt")],
        env=child_env(_ENV),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert one_node.returncode == 0, one_node.stderr
    two_nodes, reference = torch.load(saved[0], weights_only=True), torch.load(tmp_path / "one.pt", weights_only=True)
    assert two_nodes.keys() == reference.keys()
    assert all(torch.equal(two_nodes[k], reference[k]) for k in reference)


def test_a_num_nodes_that_disagrees_with_the_agents_is_named(tmp_path: Path) -> None:
    # one agent of one node, a script asking for two nodes: refused before any collective waits
    result = subprocess.run(
        [*_launch("--devices", "1"), str(TRAIN), *_job(tmp_path / "run", "w.pt")],
        env=child_env(_ENV),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode != 0
    assert "devices=1 x num_nodes=2 = 2 processes, but torchrun started 1" in result.stderr
