"""How ``accelplug launch`` turns its options into torchrun arguments and worker variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelplug import MisconfigurationException
from accelplug.launcher import plan_launch


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("")
    return path


def test_cpu_flag_tells_workers_to_use_the_cpu(script: Path) -> None:
    plan = plan_launch(script, ["--lr", "1"], cpu=True, devices="2")
    assert plan.env["ACCELPLUG_ACCELERATOR"] == "cpu"
    assert plan.nproc_per_node == 2
    assert plan.torchrun_args()[-3:] == [str(script), "--lr", "1"]


def test_a_free_port_is_picked_when_none_is_given(script: Path) -> None:
    plan = plan_launch(script, cpu=True)
    assert 1 <= plan.master_port <= 65535
    assert f"--master-port={plan.master_port}" in plan.torchrun_args()


def test_mps_fallback_is_set_for_workers(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_ENABLE_MPS_FALLBACK", raising=False)
    assert plan_launch(script, cpu=True, mps_fallback=True).env["PYTORCH_ENABLE_MPS_FALLBACK"] == "1"


def test_mps_fallback_never_overrides_the_users_value(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_ENABLE_MPS_FALLBACK", "0")
    assert "PYTORCH_ENABLE_MPS_FALLBACK" not in plan_launch(script, cpu=True, mps_fallback=True).env


def test_multi_node_passes_the_rendezvous_to_torchrun(script: Path) -> None:
    plan = plan_launch(script, cpu=True, nnodes=2, node_rank=1, master_addr="10.0.0.1", master_port=29500)
    args = plan.torchrun_args()
    assert {"--nnodes=2", "--node-rank=1", "--master-addr=10.0.0.1", "--master-port=29500"} <= set(args)


def test_multi_node_without_a_rendezvous_address_is_explained(script: Path) -> None:
    with pytest.raises(MisconfigurationException, match="--master-addr and --master-port"):
        plan_launch(script, cpu=True, nnodes=2)


def test_a_missing_script_is_explained(tmp_path: Path) -> None:
    with pytest.raises(MisconfigurationException, match="is not a file"):
        plan_launch(tmp_path / "nope.py", cpu=True)
