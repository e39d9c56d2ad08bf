"""``accelplug.utilities`` against ``lightning.pytorch.utilities``: the same inputs give the same answers."""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import subprocess
import sys
import warnings
from collections import OrderedDict, namedtuple
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import utilities as ours
from accelplug.errors import MisconfigurationException

theirs = pytest.importorskip("lightning.pytorch.utilities", reason="the parity side needs Lightning installed")

Pair = namedtuple("Pair", ["x", "y"])


@dataclasses.dataclass
class Batch:
    inputs: torch.Tensor
    label: str


def _tied() -> torch.nn.Module:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
    model[2].weight = model[0].weight
    model[3].weight = model[0].weight
    model[3].bias = model[2].bias
    return model


def test_grad_norm_has_lightnings_keys_and_values() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Linear(5, 1))
    model[1].bias.requires_grad_(False)  # a parameter without a gradient is left out
    model(torch.randn(8, 3)).pow(2).sum().backward()
    for norm_type in (1, 2.0, "inf"):
        mine, lightnings = ours.grad_norm(model, norm_type), theirs.grad_norm(model, norm_type)
        assert list(mine) == list(lightnings)
        for key, value in lightnings.items():
            torch.testing.assert_close(mine[key], value)
    assert ours.grad_norm(torch.nn.Linear(2, 2), 2) == {}  # nothing backpropagated yet


@pytest.mark.parametrize("bad", [0, -1, "two", float("nan")])
def test_grad_norm_refuses_a_norm_that_is_not_positive(bad: object) -> None:
    # Lightning's phrase
    with pytest.raises(MisconfigurationException, match="`norm_type` must be a positive number or 'inf'"):
        ours.grad_norm(torch.nn.Linear(2, 2), bad)  # type: ignore[arg-type]


def test_shared_parameters_are_found_and_tied_again_as_lightning_does() -> None:
    model = _tied()
    assert ours.find_shared_parameters(model) == theirs.find_shared_parameters(model)
    assert ours.find_shared_parameters(model) == [["0.weight", "2.weight", "3.weight"], ["2.bias", "3.bias"]]
    untied = pickle.loads(pickle.dumps(model))  # same objects stay shared through pickle: untie by hand
    untied[2].weight = torch.nn.Parameter(untied[0].weight.detach().clone())
    untied[3].bias = torch.nn.Parameter(untied[2].bias.detach().clone())
    assert ours.find_shared_parameters(untied) == [["0.weight", "3.weight"]]
    ours.set_shared_parameters(untied, ours.find_shared_parameters(model))
    assert untied[2].weight is untied[0].weight and untied[3].bias is untied[2].bias


def test_move_data_to_device_keeps_every_container_type_lightning_keeps() -> None:
    batch = {
        "pair": Pair(torch.ones(2), [torch.zeros(1), 3]),
        "batch": Batch(torch.ones(1, dtype=torch.float64), "a"),
        "ordered": OrderedDict(a=torch.arange(3)),
        "text": "unchanged",
    }
    mine, lightnings = ours.move_data_to_device(batch, "cpu"), theirs.move_data_to_device(batch, "cpu")

    def shape(obj: object) -> object:
        if isinstance(obj, torch.Tensor):
            return ("tensor", obj.device, obj.dtype, obj.tolist())
        if isinstance(obj, dict):
            return (type(obj), {k: shape(v) for k, v in obj.items()})
        if isinstance(obj, (list, tuple)):
            return (type(obj), [shape(v) for v in obj])
        if dataclasses.is_dataclass(obj):
            return (type(obj), shape(dataclasses.asdict(obj)))  # type: ignore[arg-type]
        return obj

    assert shape(mine) == shape(lightnings)
    assert ours.move_data_to_device(torch.ones(1), torch.device("cpu")).device.type == "cpu"


@pytest.mark.parametrize("bad", [None, 1.5, True])
def test_move_data_to_device_names_a_bad_device(bad: object) -> None:
    with pytest.raises(MisconfigurationException, match="move_data_to_device"):
        ours.move_data_to_device(torch.ones(1), bad)  # type: ignore[arg-type]


def test_move_data_to_device_names_an_unknown_device_string() -> None:
    with pytest.raises(MisconfigurationException, match="'gpuu'"):
        ours.move_data_to_device(torch.ones(1), "gpuu")


def test_grad_clip_algorithm_type_compares_as_lightnings_enum() -> None:
    for name in ("value", "norm"):
        mine, lightnings = ours.GradClipAlgorithmType(name), theirs.GradClipAlgorithmType(name)
        assert mine == name.upper() and lightnings == name.upper()
        assert mine == lightnings.value and str(mine.value) == str(lightnings.value)
        assert ours.GradClipAlgorithmType.from_str(name.upper()) is mine
        assert {mine: 1}[name] == 1  # hashes as its lower-case value, as Lightning's does
    assert [m.name for m in ours.GradClipAlgorithmType] == [m.name for m in theirs.GradClipAlgorithmType]
    assert issubclass(ours.GradClipAlgorithmType, (str, ours.LightningEnum))
    with pytest.raises(ValueError, match="expected one of"):
        ours.GradClipAlgorithmType.from_str("nrm")


def test_grad_clip_algorithm_type_lists_and_checks_names_as_lightnings() -> None:
    assert ours.GradClipAlgorithmType.supported_types() == theirs.GradClipAlgorithmType.supported_types()
    for name in ("norm", "value", "Norm", "norm2", ""):
        expected = theirs.GradClipAlgorithmType.supported_type(name)
        assert ours.GradClipAlgorithmType.supported_type(name) is expected, name


def test_is_picklable_agrees_with_lightning() -> None:
    for obj in (1, {"a": [1, 2]}, lambda: 0, torch.nn.Linear(1, 1), (x for x in ())):
        assert ours.is_picklable(obj) == theirs.is_picklable(obj)


def test_suggested_max_num_workers_agrees_with_lightning() -> None:
    for processes in (1, 2, 64):
        assert ours.suggested_max_num_workers(processes) == theirs.suggested_max_num_workers(processes)
    for bad in (0, -2, "2", True):
        with pytest.raises(MisconfigurationException, match=f"local_world_size={bad!r}"):
            ours.suggested_max_num_workers(bad)  # type: ignore[arg-type]
    for bad in (0, -1):  # Lightning's ValueError and its words, which code written for it may match
        with pytest.raises(ValueError, match="should be >= 1") as raised:
            ours.suggested_max_num_workers(bad)
        with pytest.raises(ValueError, match="should be >= 1"):
            theirs.suggested_max_num_workers(bad)
        assert isinstance(raised.value, MisconfigurationException)


def test_a_cpu_count_replaced_through_fabrics_data_module_is_the_one_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    import lightning.fabric.utilities.data as lightnings

    import accelplug.fabric.utilities.data as path

    monkeypatch.delattr(path.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(path.os, "cpu_count", lambda: 9)
    assert path.suggested_max_num_workers(2) == lightnings.suggested_max_num_workers(2) == 3


def test_measure_flops_counts_what_lightning_counts() -> None:
    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        x = torch.randn(4, 32)
    forward = lambda: model(x)  # noqa: E731
    assert ours.measure_flops(model, forward) == theirs.measure_flops(model, forward) == 2 * 4 * (32 * 64 + 64 * 8)
    loss = lambda y: y.sum()  # noqa: E731
    assert ours.measure_flops(model, forward, loss) == theirs.measure_flops(model, forward, loss)


def test_is_shared_filesystem_is_true_for_one_process_and_for_urls(tmp_path: object) -> None:
    class OneProcess:
        world_size = 1

    assert ours.is_shared_filesystem(OneProcess(), tmp_path) is True  # type: ignore[arg-type]
    assert ours.is_shared_filesystem(object(), "s3://bucket/run") is True


def test_rank_zero_helpers_are_fabrics_objects_and_obey_the_rank(caplog: pytest.LogCaptureFixture) -> None:
    from accelplug.fabric.utilities import rank_zero as fabrics

    assert ours.rank_zero_only is fabrics.rank_zero_only
    calls: list[int] = []
    record = ours.rank_zero_only(lambda: calls.append(1))
    before = ours.rank_zero_only.rank
    try:
        ours.rank_zero_only.rank = 1
        record()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ours.rank_zero_warn("not on rank 1")  # would raise if it warned
        ours.rank_zero_only.rank = 0
        record()
    finally:
        ours.rank_zero_only.rank = before
    assert calls == [1]
    with caplog.at_level(logging.DEBUG, logger="accelplug.distributed.rank_zero"):
        ours.rank_zero_debug("debug line")
    assert "debug line" in caplog.text
    with pytest.deprecated_call(match="old"):
        ours.rank_zero_deprecation("old")


@pytest.mark.parametrize(
    "variables",
    [{}, {"RANK": "1"}, {"LOCAL_RANK": "3"}, {"SLURM_PROCID": "2"}, {"JSM_NAMESPACE_RANK": "4"}, {"SLURM_PROCID": "0"}],
)
def test_the_rank_before_a_run_says_it_is_read_from_lightnings_launcher_variables(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    from lightning.fabric.utilities.rank_zero import _get_rank

    from accelplug.distributed import rank_zero

    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert rank_zero._rank_from_environment() == (_get_rank() or 0)


def test_disable_possible_user_warnings_silences_only_that_category() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours.disable_possible_user_warnings()
        warnings.warn("few workers", ours.PossibleUserWarning, stacklevel=1)
        warnings.warn("kept", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["kept"]


@pytest.mark.parametrize(("setting", "shown"), [("off", False), ("0", False), ("OFF", False), ("on", True)])
def test_possible_user_warnings_off_in_the_environment_silences_them_for_the_whole_run(
    setting: str, shown: bool
) -> None:
    # Lightning's switch (POSSIBLE_USER_WARNINGS=off or 0): read once, when the process imports accelplug
    script = "import warnings, accelplug.errors as e; warnings.warn('few workers', e.PossibleUserWarning)"
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", script],
        env={**os.environ, "POSSIBLE_USER_WARNINGS": setting},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert ("few workers" in done.stderr) is shown, done.stderr


def test_seed_everything_and_attribute_dict_are_the_top_level_objects() -> None:
    import accelplug

    assert ours.seed_everything is accelplug.seed_everything
    assert ours.AttributeDict is accelplug.AttributeDict
    assert ours.apply_to_collection({"a": 1}, int, lambda v: v + 1) == {"a": 2}


_SHARED_FS_SCRIPT = """
import sys, torch
from accelplug.accelerators import CPUAccelerator
from accelplug.strategies import DDPStrategy
from accelplug.utilities import is_shared_filesystem

strategy = DDPStrategy()
strategy.setup_environment(CPUAccelerator(), torch.device("cpu"))
same, own = sys.argv[1], sys.argv[2] + str(strategy.global_rank)
print(strategy.global_rank, is_shared_filesystem(strategy, same), is_shared_filesystem(strategy, own, timeout=1))
strategy.teardown()
"""


def test_is_shared_filesystem_asks_every_process_of_a_real_gloo_group(tmp_path: Path) -> None:
    """Two processes on this machine: one folder is shared; a path that differs per rank is not."""
    import socket
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for rank in (0, 1):
        (tmp_path / f"own{rank}").mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SHARED_FS_SCRIPT, str(tmp_path), str(tmp_path / "own")],
            env=subprocess_env(
                {
                    "RANK": str(rank),
                    "LOCAL_RANK": str(rank),
                    "WORLD_SIZE": "2",
                    "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(port),
                }
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]
    outputs = []
    for process in processes:
        try:
            out, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for p in processes:
                p.kill()
            raise
        assert process.returncode == 0, err
        outputs.append(out.split())
    assert sorted(outputs) == [["0", "True", "False"], ["1", "True", "False"]]
    assert not list(tmp_path.glob(".accelplug_shared_fs_check"))  # the marker is cleaned up


def test_fabrics_stateful_protocol_checks_what_lightnings_checks() -> None:
    from lightning.fabric.utilities.types import _Stateful as theirs_stateful

    from accelplug.fabric.utilities.types import _Stateful as ours_stateful

    class Both:
        def state_dict(self) -> dict[str, Any]:
            return {}

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            pass

    class SavesOnly:
        def state_dict(self) -> dict[str, Any]:
            return {}

    class LoadsOnly:
        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            pass

    for obj in (Both(), SavesOnly(), LoadsOnly(), torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)):
        assert isinstance(obj, ours_stateful) == isinstance(obj, theirs_stateful), type(obj).__name__
    assert isinstance(Both(), ours_stateful)
