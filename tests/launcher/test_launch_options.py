"""``plan_launch``: torchrun's rendezvous options, restarts, precision and modules, checked by torchrun's own parser."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from torch.distributed.run import get_args_parser

from accelplug import MisconfigurationException
from accelplug.launcher import LaunchPlan, plan_launch


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("")
    return path


def _torchrun(plan: LaunchPlan) -> argparse.Namespace:
    """What torchrun itself makes of the arguments the plan hands it."""
    return get_args_parser().parse_args(plan.torchrun_args())


def test_precision_reaches_the_workers_in_its_canonical_name(script: Path) -> None:
    plan = plan_launch(script, cpu=True, precision="bf16")
    assert plan.env["ACCELPLUG_PRECISION"] == "bf16-mixed"
    assert "precision bf16-mixed" in plan.describe()


def test_no_precision_option_leaves_the_workers_to_their_settings(script: Path) -> None:
    assert "ACCELPLUG_PRECISION" not in plan_launch(script, cpu=True).env


def test_an_unknown_precision_is_refused_with_a_close_match(script: Path) -> None:
    with pytest.raises(MisconfigurationException, match=r"precision='bf15'.*Did you mean 'bf16'"):
        plan_launch(script, cpu=True, precision="bf15")


@pytest.mark.parametrize(("spelling", "ours"), [("fp16", "'16-mixed'"), ("no", "'32-true'"), ("fp8", "no fp8")])
def test_accelerate_precision_spellings_are_refused_naming_ours(script: Path, spelling: str, ours: str) -> None:
    with pytest.raises(MisconfigurationException, match=f"accelerate's spelling.*{ours}"):
        plan_launch(script, cpu=True, precision=spelling)


def test_max_restarts_reaches_torchrun(script: Path) -> None:
    plan = plan_launch(script, cpu=True, max_restarts=3)
    assert _torchrun(plan).max_restarts == 3
    assert "up to 3 restart(s)" in plan.describe()


def test_restarts_are_off_by_default(script: Path) -> None:
    assert _torchrun(plan_launch(script, cpu=True)).max_restarts == 0


@pytest.mark.parametrize("value", [-1, "-1", "x", "²", True])
def test_a_bad_max_restarts_is_refused(script: Path, value: object) -> None:
    with pytest.raises(MisconfigurationException, match=r"--max-restarts=.* expected a whole number >= 0"):
        plan_launch(script, cpu=True, max_restarts=value)  # type: ignore[arg-type]


def test_static_rendezvous_passes_master_address_and_node_rank(script: Path) -> None:
    plan = plan_launch(script, cpu=True, nnodes=2, node_rank=1, master_addr="10.0.0.1", master_port=29500)
    parsed = _torchrun(plan)
    assert (parsed.rdzv_backend, parsed.nnodes, parsed.node_rank) == ("static", "2", 1)
    assert (parsed.master_addr, parsed.master_port) == ("10.0.0.1", 29500)


def test_static_rendezvous_reads_an_endpoint_as_the_master_address(script: Path) -> None:
    plan = plan_launch(script, cpu=True, nnodes=2, node_rank=0, rdzv_endpoint="10.0.0.1:29501")
    parsed = _torchrun(plan)
    assert (parsed.master_addr, parsed.master_port) == ("10.0.0.1", 29501)


def test_c10d_rendezvous_is_passed_through_with_endpoint_and_id(script: Path) -> None:
    plan = plan_launch(script, cpu=True, nnodes=2, rdzv_backend="c10d", rdzv_endpoint="head:29400", rdzv_id="job7")
    parsed = _torchrun(plan)
    assert (parsed.rdzv_backend, parsed.rdzv_endpoint, parsed.rdzv_id) == ("c10d", "head:29400", "job7")
    assert "--master-addr" not in " ".join(plan.torchrun_args())
    assert "c10d rendezvous head:29400" in plan.describe()


def test_c10d_endpoint_without_a_port_gets_torchruns_default(script: Path) -> None:
    plan = plan_launch(script, cpu=True, nnodes=2, rdzv_backend="c10d", rdzv_endpoint="head")
    assert _torchrun(plan).rdzv_endpoint == "head:29400"


def test_c10d_on_one_node_meets_on_a_free_local_port(script: Path) -> None:
    plan = plan_launch(script, cpu=True, rdzv_backend="C10D")
    host, _, port = (plan.rdzv_endpoint or "").rpartition(":")
    assert host == "127.0.0.1" and 1 <= int(port) <= 65535


def test_rdzv_conf_is_passed_through(script: Path) -> None:
    plan = plan_launch(script, cpu=True, rdzv_backend="c10d", rdzv_conf="join_timeout=900,read_timeout=60")
    assert _torchrun(plan).rdzv_conf == "join_timeout=900,read_timeout=60"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rdzv_backend": "c10"}, "Did you mean 'c10d'"),
        ({"rdzv_backend": "c10d", "nnodes": 2}, "needs --rdzv-endpoint"),
        ({"rdzv_backend": "c10d", "master_addr": "h"}, "--master-addr cannot be given"),
        ({"rdzv_backend": "c10d", "node_rank": 0}, "--node-rank cannot be given"),
        ({"rdzv_endpoint": "h:1", "master_port": 2}, "name the same address twice"),
        ({"rdzv_endpoint": "h"}, "has no port"),
        ({"rdzv_endpoint": ":29400"}, "expected HOST:PORT"),
        ({"rdzv_backend": "c10d", "rdzv_endpoint": "h:99999"}, "port in 1..65535"),
        ({"rdzv_backend": "c10d", "rdzv_conf": "timeout"}, "key=value pairs"),
        ({"standalone": True, "nnodes": 2}, "--standalone means one machine"),
        ({"standalone": True, "master_port": 29500}, "--master-port cannot be given"),
        ({"nnodes": "1:4"}, "elastic range"),
        ({"nnodes": 0}, "--nnodes=0"),
        ({"nnodes": "²"}, "--nnodes='²'"),
        ({"node_rank": -1}, "--node-rank=-1"),
        ({"master_port": 0}, "--master-port=0"),
        ({"master_port": 70000}, "--master-port=70000"),
        ({"master_addr": " "}, "--master-addr=''"),
        ({"devices": "²"}, "--devices='²'"),
        ({"devices": "gpu"}, "--accelerator gpu --devices -1"),
        ({"devices": "cpu"}, "--cpu --devices -1"),
    ],
)
def test_bad_launch_options_are_explained(script: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(MisconfigurationException, match=message):
        plan_launch(script, cpu=True, **options)  # type: ignore[arg-type]


def test_standalone_is_the_single_node_default(script: Path) -> None:
    parsed = _torchrun(plan_launch(script, cpu=True, standalone=True))
    assert (parsed.nnodes, parsed.master_addr, parsed.rdzv_backend) == ("1", "127.0.0.1", "static")


def test_a_module_is_run_with_dash_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_train.py").write_text("")
    monkeypatch.chdir(tmp_path)  # `python -m` finds modules in the current folder
    plan = plan_launch("my_train", ["--lr", "1"], cpu=True, as_module=True)
    parsed = _torchrun(plan)
    assert parsed.module is True
    assert (parsed.training_script, parsed.training_script_args) == ("my_train", ["--lr", "1"])


@pytest.mark.parametrize(("module", "message"), [("no_such_module_xyz", "cannot be found"), ("a/b.py", "not a module")])
def test_a_bad_module_is_explained(module: str, message: str) -> None:
    with pytest.raises(MisconfigurationException, match=message):
        plan_launch(module, cpu=True, as_module=True)


def test_a_folder_as_script_is_explained(tmp_path: Path) -> None:
    with pytest.raises(MisconfigurationException, match="is a folder"):
        plan_launch(tmp_path, cpu=True)
