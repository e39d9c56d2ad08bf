"""Every Trainer option is validated at construction; a bad value is named with what is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from accelplug import MisconfigurationException, Trainer

BAD_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"precision": "bf17"}, "precision='bf17'"),
    ({"max_epochs": -2}, "max_epochs=-2"),
    ({"max_epochs": 2.5}, "max_epochs=2.5"),
    ({"max_steps": -2}, "max_steps=-2"),
    ({"max_steps": -5}, "max_steps=-5"),
    ({"accumulate_grad_batches": 0}, "accumulate_grad_batches=0"),
    ({"accumulate_grad_batches": True}, "accumulate_grad_batches=True"),
    ({"gradient_clip_val": -1.0}, "gradient_clip_val=-1.0"),
    ({"gradient_clip_val": "big"}, "gradient_clip_val='big'"),
    ({"gradient_clip_algorithm": "l3"}, "gradient_clip_algorithm='l3'"),
    ({"val_check_interval": 0}, "val_check_interval=0"),
    ({"val_check_interval": 1.5}, "val_check_interval=1.5"),
    ({"limit_train_batches": -1}, "limit_train_batches=-1"),
    ({"limit_train_batches": 2.5}, "limit_train_batches=2.5"),  # 2.0 is 2 batches, as in Lightning
    ({"limit_val_batches": "all"}, "limit_val_batches='all'"),
    ({"log_every_n_steps": -1}, "log_every_n_steps=-1"),
    ({"seed": -3}, "seed=-3"),
    ({"seed": "42"}, "seed='42'"),
    ({"enable_progress_bar": "yes"}, "enable_progress_bar='yes'"),
    ({"logger": "wandb"}, "logger='wandb'"),
    ({"check_val_every_n_epoch": 0}, "check_val_every_n_epoch=0"),
    ({"default_root_dir": 5}, "default_root_dir=5"),
    ({"callbacks": ["not a callback"]}, "'not a callback'"),
    ({"num_nodes": 0}, "num_nodes=0"),
]


@pytest.mark.parametrize(("options", "named"), BAD_OPTIONS, ids=[text for _, text in BAD_OPTIONS])
def test_bad_trainer_option_raises_misconfiguration_naming_the_value(options: dict[str, Any], named: str) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        Trainer(accelerator="cpu", **options)
    assert named in str(caught.value)
    assert "expected" in str(caught.value) or "Accepted" in str(caught.value)


def test_ddp_in_an_interpreter_that_cannot_relaunch_explains_how_to_launch() -> None:
    trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp")
    from tests.modules import LinearRegression, regression_data

    with pytest.raises(MisconfigurationException, match="accelplug launch --accelerator cpu --devices 2"):
        trainer.fit(LinearRegression(), regression_data())


@pytest.mark.parametrize(("world", "nodes"), [(2, 2), (3, 1)])
def test_num_nodes_that_disagrees_with_the_launcher_world_size_is_explained(
    monkeypatch: pytest.MonkeyPatch, world: int, nodes: int
) -> None:
    """Processes started by hand: construction takes Lightning's world (devices x nodes), the fit names the
    disagreement with their WORLD_SIZE instead of waiting in the rendezvous for ranks nobody started."""
    from tests.modules import LinearRegression, regression_data

    for name, value in {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": str(world), "LOCAL_WORLD_SIZE": "2",
                        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp", num_nodes=nodes)
    assert trainer.world_size == 2 * nodes
    with pytest.raises(MisconfigurationException, match=f"WORLD_SIZE={world}"):
        trainer.fit(LinearRegression(), regression_data())


def test_tensorboard_logger_without_tensorboard_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tensorboard" else real_find_spec(name, *a)
    )
    with pytest.raises(MisconfigurationException, match=r'pip install "accelplug\[tensorboard\]"'):
        Trainer(accelerator="cpu", logger="tensorboard")


# ---- each option declared once ---------------------------------------------------------------------
def test_the_trainer_signature_is_the_option_entries() -> None:
    """Lightning's signature is written out for readers and type checkers; its defaults are the entries'."""
    import inspect

    from accelplug.trainer.options.entries import SELECTION_ARGUMENTS, entries

    parameters = inspect.signature(Trainer.__init__).parameters
    names = [n for n, p in parameters.items() if n != "self" and p.kind is not p.VAR_KEYWORD]
    declared = entries()
    assert sorted(names) == sorted([*declared, *SELECTION_ARGUMENTS])
    for name, entry in declared.items():
        assert repr(parameters[name].default) == repr(entry.given), name


_CANDIDATES: tuple[Any, ...] = ("<not a value>", -7, 2.5, [1], object())


def test_every_option_refuses_a_bad_value_with_its_own_accepted_words() -> None:
    from accelplug.trainer.options import checks
    from accelplug.trainer.options.entries import entries

    for name, entry in entries().items():
        bad = []
        for candidate in _CANDIDATES:
            try:
                entry.check(candidate)
            except checks.Bad:
                bad.append(candidate)
        assert bad, f"{name} accepts every candidate; add one it refuses"
        with pytest.raises(MisconfigurationException) as caught:
            Trainer(accelerator="cpu", **{name: bad[0]})
        assert f"{name}=" in str(caught.value) and entry.accepted in str(caught.value), name


def test_fast_dev_run_1_reads_true_as_in_lightning() -> None:
    assert Trainer(fast_dev_run=1).fast_dev_run is True
    assert Trainer(fast_dev_run=3).fast_dev_run == 3


def test_a_negative_fast_dev_run_is_refused_with_lightnings_phrase() -> None:
    with pytest.raises(MisconfigurationException, match=r"fast_dev_run=-1.*should be >= 0"):
        Trainer(fast_dev_run=-1)
