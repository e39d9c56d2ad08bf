"""The Logger base class, its defaults and the rank-zero helpers, next to Lightning 2.6's."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import torch
import torch.distributed as dist

from accelplug.errors import MisconfigurationException
from accelplug.loggers.logger import (
    DummyExperiment,
    DummyLogger,
    Logger,
    global_rank,
    rank_zero_experiment,
    rank_zero_only,
)


class Recording(Logger):
    """The smallest complete logger: the four abstract members."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    @property
    def name(self) -> str:
        return "recording"

    @property
    def version(self) -> int:
        return 0

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        self.calls.append(("log_metrics", (dict(metrics), step)))

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("log_hyperparams", params))

    def save(self) -> None:
        self.calls.append(("save", None))


def test_a_logger_needs_only_its_abstract_members_and_gets_lightnings_defaults() -> None:
    from lightning.pytorch.loggers import Logger as LightningLogger

    class LightningRecording(LightningLogger):
        name = "recording"
        version = 0

        def log_metrics(self, metrics: Any, step: Any = None) -> None: ...

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None: ...

    ours, theirs = Recording(), LightningRecording()
    for attribute in ("root_dir", "log_dir", "save_dir", "group_separator"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.log_graph(torch.nn.Linear(1, 1)) is None
    assert ours.after_save_checkpoint(object()) is None
    ours.finalize("success")
    assert ours.calls == [("save", None)]  # finalize saves by default, as in Lightning


def test_a_logger_missing_an_abstract_member_cannot_be_made() -> None:
    class Incomplete(Logger):
        @property
        def name(self) -> str:
            return "x"

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()  # type: ignore[abstract]


def test_the_dummy_logger_accepts_anything() -> None:
    logger = DummyLogger()
    assert (logger.name, logger.version) == ("", "")
    assert logger[3] is logger
    assert logger.log_metrics({"a": 1.0}, step=1) is None
    assert logger.anything_at_all(1, key=2) is None
    experiment = logger.experiment
    assert isinstance(experiment, DummyExperiment)
    assert experiment.add_image("x", torch.zeros(1)) is None
    assert experiment[0].log({"a": 1}) is None
    experiment["key"] = "value"
    assert isinstance(copy.deepcopy(logger), DummyLogger)  # special names are not swallowed
    assert isinstance(copy.deepcopy(experiment), DummyExperiment)


class Tracker(Recording):
    def __init__(self) -> None:
        super().__init__()
        self.runs_opened = 0

    @property
    @rank_zero_experiment
    def experiment(self) -> str:
        self.runs_opened += 1
        return "the run"

    @rank_zero_only
    def upload(self) -> str:
        return "uploaded"


@pytest.mark.parametrize("variable", ["RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"])
def test_other_ranks_get_a_stand_in_and_skip_rank_zero_methods(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"):
        monkeypatch.delenv(name, raising=False)
    tracker = Tracker()
    monkeypatch.setenv(variable, "1")
    assert isinstance(tracker.experiment, DummyExperiment)
    assert tracker.upload() is None
    assert tracker.runs_opened == 0
    monkeypatch.setenv(variable, "0")
    assert tracker.experiment == "the run"
    assert tracker.upload() == "uploaded"


@pytest.fixture
def process_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.mark.usefixtures("process_group")
def test_the_process_group_rank_wins_over_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "3")  # stale: the process group says 0
    assert global_rank() == 0
    assert Tracker().experiment == "the run"


def test_a_rank_variable_that_is_not_a_number_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_RANK", "first")
    with pytest.raises(MisconfigurationException, match=r"LOCAL_RANK='first' is not an integer rank"):
        Tracker().upload()


def test_the_package_exports_the_loggers_lazily() -> None:
    import accelplug.loggers as loggers

    assert loggers.Logger is Logger
    assert loggers.DummyLogger is DummyLogger
    with pytest.raises(AttributeError, match="NoSuchLogger"):
        _ = loggers.NoSuchLogger
