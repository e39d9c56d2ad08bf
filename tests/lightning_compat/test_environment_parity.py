"""accelplug's cluster environments answer as Lightning 2.6's do, for the same variables, where Lightning is right.

Each case sets one launcher's variables and asks both implementations every question (ours first:
Lightning's ``main_address``/``main_port`` and LSF's constructor write ``MASTER_ADDR``/``MASTER_PORT``
into the environment). The differences are tested too, each with why ours differs.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from lightning.fabric.plugins import environments as lightning

from accelplug import environments as ours
from tests.environments.captured import (
    KUBEFLOW_WORKER_2,
    LSF_RANK_2,
    LSF_RANKFILE,
    SBATCH_SCRIPT,
    SRUN_TASK_1,
    TORCHRUN_RANK_1,
    launcher_variables,
)

#: Lightning refuses srun's --ntasks without --ntasks-per-node, so its cases name both.
SRUN = {**SRUN_TASK_1, "SLURM_NTASKS_PER_NODE": "2"}
SRUN_TWO_NODES = {
    **SRUN,
    "SLURM_JOB_ID": "1234567",
    "SLURM_NODELIST": "node[001-003,007]",
    "SLURM_NNODES": "4",
    "SLURM_NTASKS": "8",
    "SLURM_PROCID": "5",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "2",
}

CASES: dict[str, tuple[str, Mapping[str, str]]] = {
    "srun task": ("SLURMEnvironment", SRUN),
    "srun, four nodes": ("SLURMEnvironment", SRUN_TWO_NODES),
    "srun, MASTER_ADDR and MASTER_PORT set": ("SLURMEnvironment", {**SRUN, "MASTER_ADDR": "h", "MASTER_PORT": "2"}),
    "srun, comma-separated nodes": ("SLURMEnvironment", {**SRUN_TWO_NODES, "SLURM_NODELIST": "b1,a2,c3,d4"}),
    "srun, no job id": ("SLURMEnvironment", {**SRUN, "SLURM_JOB_ID": ""}),
    "torchrun worker": ("TorchElasticEnvironment", TORCHRUN_RANK_1),
    "torchrun, second node": (
        "TorchElasticEnvironment",
        {**TORCHRUN_RANK_1, "WORLD_SIZE": "4", "RANK": "3", "GROUP_RANK": "1"},
    ),
    "kubeflow replica": ("KubeflowEnvironment", KUBEFLOW_WORKER_2),
    "lsf (jsrun)": ("LSFEnvironment", LSF_RANK_2),
}
QUESTIONS = (
    "creates_processes_externally",
    "world_size",
    "global_rank",
    "local_rank",
    "node_rank",
    "main_address",
    "main_port",
)


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in launcher_variables():
        monkeypatch.delenv(name)
    rankfile = tmp_path / "rankfile"
    rankfile.write_text(LSF_RANKFILE)
    monkeypatch.setenv("LSB_DJOB_RANKFILE", str(rankfile))  # read only by the LSF case (all four must be set)
    monkeypatch.setattr(socket, "gethostname", lambda: "node08")


def _set(monkeypatch: pytest.MonkeyPatch, variables: Mapping[str, str]) -> None:
    for name, value in variables.items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)


def _answers(env: Any) -> dict[str, Any]:
    return {q: (getattr(env, q)() if callable(getattr(env, q)) else getattr(env, q)) for q in QUESTIONS}


@pytest.mark.parametrize("case", list(CASES))
def test_every_answer_matches_lightnings(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls_name, variables = CASES[case]
    _set(monkeypatch, variables)
    mine = _answers(getattr(ours, cls_name)())
    theirs = _answers(getattr(lightning, cls_name)())
    assert mine == theirs
    if cls_name != "KubeflowEnvironment":  # Lightning's raises NotImplementedError: see below
        assert getattr(ours, cls_name).detect() is getattr(lightning, cls_name).detect() is True


@pytest.mark.parametrize("job_name", ["bash", "interactive"])
def test_interactive_allocations_are_not_detected_by_either(job_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _set(monkeypatch, {**SRUN, "SLURM_JOB_NAME": job_name})
    assert ours.SLURMEnvironment.detect() is lightning.SLURMEnvironment.detect() is False
    assert ours.SLURMEnvironment.job_id() is lightning.SLURMEnvironment.job_id() is None


@pytest.mark.parametrize(
    ("devices", "nodes"), [(2, 4), (1, 4), (2, 3), (4, 2)], ids=["matching", "devices", "nodes", "both"]
)
def test_slurm_settings_are_accepted_and_refused_alike(
    devices: int, nodes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set(monkeypatch, SRUN_TWO_NODES)
    outcomes = []
    for env in (ours.SLURMEnvironment(), lightning.SLURMEnvironment()):
        try:
            env.validate_settings(num_devices=devices, num_nodes=nodes)
            outcomes.append("accepted")
        except ValueError:  # accelplug's MisconfigurationException is a ValueError, as Lightning's error
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1] == ("accepted" if (devices, nodes) == (2, 4) else "refused")


# ---- where accelplug differs, and why ------------------------------------------------------------
@pytest.mark.parametrize(
    ("nodelist", "scontrol_first", "lightning_first"),
    [("x[1-2]y[3-4]", "x1y3", "x1"), ("rack[1-2]-n[01-02]", "rack1-n01", "rack1")],
)
def test_multi_bracket_host_lists_give_the_first_host_scontrol_names(
    nodelist: str, scontrol_first: str, lightning_first: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lightning's regular expression stops at the first bracket; rank 0 runs on scontrol's first host.
    _set(monkeypatch, {**SRUN_TWO_NODES, "SLURM_NODELIST": nodelist})
    assert ours.SLURMEnvironment().main_address == scontrol_first
    assert lightning.SLURMEnvironment().main_address == lightning_first


def test_a_batch_scripts_own_python_in_a_job_of_two_tasks_is_not_rank_0_of_2(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lightning takes it for rank 0 of 2 and waits for a rank 1 nobody started.
    _set(monkeypatch, {**SBATCH_SCRIPT, "SLURM_NTASKS_PER_NODE": "2"})
    assert lightning.SLURMEnvironment.detect() is True
    assert ours.SLURMEnvironment.detect() is False


def test_srun_ntasks_without_ntasks_per_node_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lightning refuses it outright; accelplug checks the placement Slurm chose (validate_settings).
    _set(monkeypatch, SRUN_TASK_1)
    with pytest.raises(RuntimeError, match="--ntasks-per-node=2"):
        lightning.SLURMEnvironment()
    ours.SLURMEnvironment().validate_settings(num_devices=2, num_nodes=1)


def test_kubeflow_detect_answers_false_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    # Detection asks every registered environment; one that raises would be reported as broken.
    _set(monkeypatch, KUBEFLOW_WORKER_2)
    with pytest.raises(NotImplementedError):
        lightning.KubeflowEnvironment.detect()
    assert ours.KubeflowEnvironment.detect() is False


def test_asking_for_the_rendezvous_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lightning's properties export MASTER_ADDR/MASTER_PORT as a side effect; accelplug's answer only,
    # and whoever starts torch.distributed exports them.
    _set(monkeypatch, SRUN)
    env = ours.SLURMEnvironment()
    _ = (env.main_address, env.main_port)
    assert "MASTER_ADDR" not in launcher_variables() and "MASTER_PORT" not in launcher_variables()
    lightning_env = lightning.SLURMEnvironment()
    _ = (lightning_env.main_address, lightning_env.main_port)
    assert {"MASTER_ADDR", "MASTER_PORT"} <= set(launcher_variables())
