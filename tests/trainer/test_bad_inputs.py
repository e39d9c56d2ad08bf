"""Issue 12's bad-input matrix, rerun: every entry ends in a ``MisconfigurationException`` that names it.

Each case is a call the issue's sweep found raising a raw error, hanging, or silently accepted. The
open input spaces (a checkpoint file's bytes, ``ckpt_path`` values, option values) are searched with
hypothesis: whatever is passed, only a ``MisconfigurationException`` may escape, never a ``TypeError``
or ``KeyError`` from inside torch, and nothing hangs (pytest-timeout ends a hanging case).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.utils.data import TensorDataset

from accelplug import MisconfigurationException, Trainer
from tests.modules import LinearRegression, quiet, regression_data
from tests.processes import REPO, child_env

pytestmark = pytest.mark.timeout(120)


def _trainer(tmp_path: Path, **options: Any) -> Trainer:
    settings: dict[str, Any] = {"max_steps": 2, "logger": False, "enable_checkpointing": False}
    return Trainer(**quiet(**{**settings, "default_root_dir": tmp_path, **options}))


def _saved_checkpoint(tmp_path: Path) -> Path:
    trainer = _trainer(tmp_path)
    trainer.fit(LinearRegression(), regression_data(n=32, batch_size=8))
    return trainer.save_checkpoint(tmp_path / "good.ckpt")


# ---- the loaders ---------------------------------------------------------------------------------
def _generator() -> Any:
    yield from regression_data(n=16, batch_size=8)


# (an empty loader and limit_train_batches=0 are no mistakes: fit() returns without training, as Lightning's does;
# tests/trainer/loops/test_empty_training.py)
LOADER_CASES: list[tuple[str, Callable[[Trainer, Any], Any], str]] = [
    ("fit(model, None)", lambda t, m: t.fit(m, None), "fit"),
    ("fit(model, 5)", lambda t, m: t.fit(m, 5), "5"),
    ("validate(model, None)", lambda t, m: t.validate(m, None), "validate"),
    ("predict(model, 5)", lambda t, m: t.predict(m, 5), "5"),
    ("a generator", lambda t, m: t.fit(m, _generator()), "generator"),
    ("a TensorDataset", lambda t, m: t.fit(m, TensorDataset(torch.zeros(4, 3), torch.zeros(4, 1))), "DataLoader("),
    ("limit_train_batches=0.001", lambda t, m: t.fit(m, regression_data()), "limit_train_batches=0.125"),
]


@pytest.mark.parametrize(("call", "says"), [(c, s) for _, c, s in LOADER_CASES], ids=[n for n, _, _ in LOADER_CASES])
def test_bad_data_raises_misconfiguration_and_never_hangs(
    tmp_path: Path, call: Callable[[Trainer, Any], Any], says: str
) -> None:
    trainer = _trainer(tmp_path, max_steps=3, limit_train_batches=0.001 if "limit" in says else None)
    with pytest.raises(MisconfigurationException, match=says.replace("(", r"\(")):
        call(trainer, LinearRegression())


# ---- what training_step returns ---------------------------------------------------------------------
class _BadLoss(LinearRegression):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        loss = super().training_step(batch, batch_idx)
        if batch_idx < 1:
            return loss
        return loss.repeat(3) if self.kind == "vector" else loss.detach()


@pytest.mark.parametrize(("kind", "says"), [("vector", "shape (3,) at step 1"), ("detached", "require grad at step 1")])
def test_a_loss_backward_cannot_use_is_explained_with_its_step(tmp_path: Path, kind: str, says: str) -> None:
    with pytest.raises(MisconfigurationException, match=says.replace("(", r"\(").replace(")", r"\)")):
        _trainer(tmp_path, max_steps=3).fit(_BadLoss(kind), regression_data(n=64, batch_size=8))


class _Diverging(LinearRegression):
    def training_step(self, batch: Any, batch_idx: int) -> Any:
        return super().training_step(batch, batch_idx) * float("nan")


@pytest.mark.parametrize("mode", ["warn", "stop", "raise"])
def test_a_nan_loss_is_reported_at_a_logging_step(tmp_path: Path, mode: str) -> None:
    trainer = _trainer(tmp_path, max_steps=6, log_every_n_steps=2, nonfinite_loss=mode)
    data = regression_data(n=64, batch_size=8)
    if mode == "raise":
        with pytest.raises(FloatingPointError, match="at step 2"):
            trainer.fit(_Diverging(), data)
        return
    with pytest.warns(RuntimeWarning, match="training loss is nan at step") as warned:
        trainer.fit(_Diverging(), data)
    reports = [str(w.message) for w in warned if "training loss is nan" in str(w.message)]
    assert "at step 2:" in reports[0], "the first logging step already reports it"
    assert trainer.global_step == (2 if mode == "stop" else 6)


# ---- checkpoints -------------------------------------------------------------------------------------
def _ckpt_cases(tmp_path: Path) -> list[tuple[str, object, str]]:
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a checkpoint\n")
    empty = tmp_path / "empty.ckpt"
    empty.touch()
    good = _saved_checkpoint(tmp_path)
    truncated = tmp_path / "truncated.ckpt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    no_optimizer = tmp_path / "no_optimizer.ckpt"
    state = torch.load(good, weights_only=True)
    del state["optimizer_states"], state["sha256"]
    torch.save(state, no_optimizer)
    return [
        ("a text file", text, "notes.txt"),
        ("an empty file", empty, "empty (0 bytes)"),
        ("a truncated file", truncated, "truncated.ckpt"),
        ("a missing file", tmp_path / "missing.ckpt", "no such file"),
        ("a folder", tmp_path, "is a folder"),
        ("123", 123, "ckpt_path=123"),
        ("a list", [str(good)], "ckpt_path=["),
        ("a NUL byte", "a\x00b.ckpt", "not a usable file path"),
        ("no optimizer state", no_optimizer, "holds no optimizer state"),
    ]


def test_every_bad_ckpt_path_of_the_issue_names_the_path(tmp_path: Path) -> None:
    for name, value, says in _ckpt_cases(tmp_path):
        with pytest.raises(MisconfigurationException) as caught:
            _trainer(tmp_path).fit(LinearRegression(), regression_data(n=32, batch_size=8), ckpt_path=value)
        assert says in str(caught.value), (name, str(caught.value))


# random bytes can start like a pickle of an unusual protocol; torch warns before it refuses them
@pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=4096))
def test_random_bytes_as_a_checkpoint_are_refused_naming_the_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "random.ckpt"
    path.write_bytes(content)
    with pytest.raises(MisconfigurationException, match=r"random\.ckpt"):
        _trainer(tmp_path).fit(LinearRegression(), regression_data(n=16, batch_size=8), ckpt_path=path)


_PATH_VALUES = st.one_of(
    st.integers(),
    st.floats(allow_nan=True),
    st.binary(max_size=20),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.text(max_size=30).filter(lambda t: t.strip().lower() not in ("last", "best", "auto")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_PATH_VALUES)
def test_random_ckpt_path_values_raise_only_misconfiguration(tmp_path: Path, value: object) -> None:
    trainer = _trainer(tmp_path / "run")
    with pytest.raises(MisconfigurationException):
        trainer.fit(LinearRegression(), regression_data(n=16, batch_size=8), ckpt_path=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["~0", "~no-such-user-here/x.ckpt"])
def test_a_home_folder_of_an_unknown_user_is_a_missing_checkpoint_not_a_runtime_error(
    tmp_path: Path, value: str
) -> None:
    # pathlib's expanduser raises RuntimeError for ~name of an unknown user; a missing file is what it is.
    with pytest.raises(MisconfigurationException, match=re.escape(value)):
        _trainer(tmp_path / "run").fit(LinearRegression(), regression_data(n=16, batch_size=8), ckpt_path=value)


def test_ckpt_path_last_with_no_checkpoint_and_best_without_a_monitor_are_explained(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path)
    with pytest.warns(UserWarning, match=r'ckpt_path="last"\) is set, but there is no last checkpoint available'):
        trainer.fit(LinearRegression(), regression_data(n=16, batch_size=8), ckpt_path="last")
    assert trainer.ckpt_path is None and trainer.global_step > 0  # Lightning's way: trained from the start
    with pytest.raises(MisconfigurationException, match=r'ckpt_path="best"\)` is set but `ModelCheckpoint`'):
        _trainer(tmp_path).fit(LinearRegression(), regression_data(n=16, batch_size=8), ckpt_path="best")


# ---- options -----------------------------------------------------------------------------------------
_OPTION_NAMES = [
    "max_epochs",
    "max_steps",
    "min_steps",
    "log_every_n_steps",
    "accumulate_grad_batches",
    "limit_train_batches",
    "val_check_interval",
    "gradient_clip_val",
    "precision",
    "devices",
    "num_nodes",
    "seed",
    "nonfinite_loss",
    "callbacks",
    "default_root_dir",
    "max_time",
    "compile",
]
_ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=4)), max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_OPTION_NAMES), value=_ANY_VALUE)
def test_random_option_values_are_accepted_or_refused_with_misconfiguration(name: str, value: object) -> None:
    if name == "default_root_dir" and isinstance(value, str) and "\x00" not in value:
        value = f"/nonexistent-{value}"  # never create folders in the working tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            Trainer(accelerator="cpu", **{name: value})
        except MisconfigurationException as exc:
            message = str(exc)
        else:
            message = "accepted"
    assert message, "an empty message names nothing"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"callbacks": [None]}, "None"),
        ({"default_root_dir": "runs/a\x00b"}, "default_root_dir"),
        ({"max_time": float("inf")}, "max_time"),
        ({"nonfinite_loss": "explode"}, "nonfinite_loss='explode'"),
    ],
    ids=["callbacks=[None]", "NUL in default_root_dir", "max_time=inf", "nonfinite_loss"],
)
def test_options_the_issue_found_accepted_are_refused(options: dict[str, Any], says: str) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        Trainer(accelerator="cpu", **options)
    assert says in str(caught.value)


def test_num_nodes_in_a_process_no_launcher_started_is_refused_at_fit(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path, num_nodes=10**9)
    with pytest.raises(MisconfigurationException, match=r"num_nodes=1000000000 .* not started by a launcher"):
        trainer.fit(LinearRegression(), regression_data(n=16, batch_size=8))


# ---- environment variables -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1"])
@pytest.mark.parametrize("variable", ["ACCELPLUG_DDP_TIMEOUT_S", "ACCELPLUG_HANG_TIMEOUT_S"])
def test_a_bad_timeout_variable_breaks_nothing_at_import_and_is_named_when_read(variable: str, value: str) -> None:
    env = child_env({variable: value, "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    listing = subprocess.run(
        [sys.executable, "-m", "accelplug", "list"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert listing.returncode == 0, listing.stderr
    from accelplug.strategies.ddp import collective_timeout
    from accelplug.strategies.watchdog import hang_timeout

    read = collective_timeout if variable == "ACCELPLUG_DDP_TIMEOUT_S" else hang_timeout
    os.environ[variable] = value
    try:
        with pytest.raises(MisconfigurationException, match=f"{variable}='{value}'"):
            read()
    finally:
        del os.environ[variable]


def test_the_hang_timeout_defaults_to_a_minute_and_zero_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.strategies.watchdog import hang_timeout

    assert hang_timeout() == 60.0
    monkeypatch.setenv("ACCELPLUG_HANG_TIMEOUT_S", "0")
    assert hang_timeout() is None
    monkeypatch.setenv("ACCELPLUG_HANG_TIMEOUT_S", "2.5")
    assert math.isclose(hang_timeout() or 0, 2.5)


def test_a_typo_of_a_variable_is_reported_with_the_closest_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_DEVICE", "2")
    from accelplug.envvars import check_unknown_variables

    assert any("Did you mean 'ACCELPLUG_DEVICES'" in line for line in check_unknown_variables())


def test_a_config_file_variable_naming_a_missing_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(tmp_path / "missing.toml"))
    with pytest.raises(MisconfigurationException, match=r"missing\.toml"):
        Trainer(accelerator="cpu")


@pytest.mark.parametrize(
    ("options", "lightnings_type"),
    [
        ({"accelerator": "cpu", "devices": "x"}, TypeError),  # Lightning's CPU parser
        ({"accelerator": "cpu", "devices": "1.5"}, TypeError),
        ({"default_root_dir": 3}, TypeError),  # Lightning's os.fspath
        ({"strategy": "dpp"}, ValueError),
        ({"precision": "bf17"}, ValueError),
    ],
)
def test_bad_options_are_also_the_type_lightning_raises(options: dict[str, Any], lightnings_type: type) -> None:
    """A script written for Lightning catches its error type; accelplug's configuration error is that type too."""
    import lightning

    with pytest.raises(lightnings_type):
        lightning.Trainer(logger=False, **options)
    with pytest.raises(MisconfigurationException, match=re.escape(repr(list(options.values())[-1]))) as caught:
        Trainer(logger=False, **options)
    assert isinstance(caught.value, lightnings_type)
