"""LSFEnvironment: jsrun's variables and the job's rank file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelplug.environments import LSFEnvironment
from accelplug.environments import lsf as lsf_module
from accelplug.errors import MisconfigurationException

from .captured import LSF_RANK_2, LSF_RANKFILE
from .conftest import Launch, ask


@pytest.fixture
def on_node08(launched: Launch, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    rankfile = tmp_path / "rankfile"
    rankfile.write_text(LSF_RANKFILE)
    launched(LSF_RANK_2, LSB_DJOB_RANKFILE=str(rankfile))
    monkeypatch.setattr(lsf_module.socket, "gethostname", lambda: "node08")
    return rankfile


def test_a_process_jsrun_started_is_detected_with_its_place(on_node08: Path) -> None:
    assert LSFEnvironment.detect()
    env = LSFEnvironment()
    assert env.creates_processes_externally
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (4, 2, 0, 1)
    assert env.compute_hosts() == ["node07", "node07", "node08", "node08"]  # the launch node left out
    assert (env.main_address, env.main_port) == ("node07", 123456 % 1000 + 10000)


def test_it_needs_all_four_of_lsfs_variables(on_node08: Path, launched: Launch) -> None:
    launched(JSM_NAMESPACE_LOCAL_RANK=None)
    assert not LSFEnvironment.detect()


@pytest.mark.parametrize(
    ("rankfile", "message"),
    [
        ("batch01\n", "lists no compute host after the launch node"),
        ("batch01\nnode01\nnode02\n", "this host ('node08') is not among the compute hosts"),
    ],
)
def test_a_rank_file_that_does_not_place_this_host_is_refused(on_node08: Path, rankfile: str, message: str) -> None:
    on_node08.write_text(rankfile)
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        LSFEnvironment().node_rank()


def test_a_missing_rank_file_is_named(on_node08: Path) -> None:
    on_node08.unlink()
    with pytest.raises(MisconfigurationException, match=f"LSB_DJOB_RANKFILE='{re.escape(str(on_node08))}' names a"):
        _ = LSFEnvironment().main_address


@pytest.mark.parametrize(
    ("changes", "answer", "message"),
    [
        ({"JSM_NAMESPACE_RANK": "4"}, "global_rank", "JSM_NAMESPACE_RANK=4 contradicts JSM_NAMESPACE_SIZE=4"),
        ({"LSB_JOBID": "job7"}, "main_port", "LSB_JOBID='job7' is not a whole number"),
        ({"JSM_NAMESPACE_RANK": None}, "global_rank", "JSM_NAMESPACE_RANK is not set. jsrun sets it"),
    ],
)
def test_a_bad_variable_is_named_with_its_value(
    on_node08: Path, launched: Launch, changes: dict[str, str | None], answer: str, message: str
) -> None:
    launched(**changes)
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        ask(LSFEnvironment(), answer)
