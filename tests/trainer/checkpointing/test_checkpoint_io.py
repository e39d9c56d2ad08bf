"""``CheckpointIO`` plugins: every checkpoint the Trainer writes, loads and removes goes through the strategy's
``checkpoint_io``, with Lightning's calls in Lightning's order (parity with Lightning 2.6 installed), at local
paths and fsspec URLs; bad plugin objects are refused by name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug import MisconfigurationException
from accelplug.plugins import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO
from accelplug.strategies import SingleDeviceStrategy
from tests.callbacks.parity import FRAMEWORKS, make_module, quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity test compares against lightning, not installed here")


def _recorder(framework: Any, root: Path) -> Any:
    """A user's CheckpointIO on ``framework``'s base: records each call, writes with the framework's own IO."""
    plugins = framework.pytorch.plugins if framework is lightning else accelplug.plugins

    class Recording(plugins.CheckpointIO):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.calls: list[tuple[Any, ...]] = []
            self.inner = plugins.TorchCheckpointIO()

        def _rel(self, path: Any) -> str:
            assert isinstance(path, str), f"Lightning passes ModelCheckpoint's paths as str, got {type(path)}"
            return os.path.relpath(path, root)

        def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
            self.calls.append(("save", self._rel(path), storage_options))
            self.inner.save_checkpoint(checkpoint, path)

        def load_checkpoint(self, path: Any, **options: Any) -> dict[str, Any]:
            # accelplug passes torch's default (True) where Lightning passes the None it was given; the keywords
            # are Lightning's (weights_only only: a CheckpointIO written for Lightning need not take map_location)
            self.calls.append(("load", self._rel(str(path)), options.get("weights_only") is not False, sorted(options)))
            return self.inner.load_checkpoint(path, **options)  # type: ignore[no-any-return]

        def remove_checkpoint(self, path: Any) -> None:
            self.calls.append(("remove", self._rel(path)))
            self.inner.remove_checkpoint(path)

        def teardown(self) -> None:
            self.calls.append(("teardown",))

    return Recording()


def _fit_recorded(tmp_path: Path, name: str) -> tuple[Any, Any, Path]:
    framework = FRAMEWORKS[name]
    root = tmp_path / name
    root.mkdir()
    io = _recorder(framework, root)
    checkpoint = framework.pytorch.callbacks.ModelCheckpoint(
        dirpath=root / "ckpts", monitor="val_loss", save_top_k=2, save_last=True
    )
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=5,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=root,
        callbacks=[checkpoint],
        plugins=[io],
    )
    with quiet_lightning(framework):
        trainer.fit(make_module(framework))
        assert trainer.strategy.checkpoint_io is io
        trainer.validate(make_module(framework), ckpt_path=checkpoint.best_model_path, verbose=False)
    return trainer, io, root


def test_a_custom_checkpoint_io_gets_lightnings_calls_in_lightnings_order(tmp_path: Path) -> None:
    runs = {name: _fit_recorded(tmp_path, name) for name in FRAMEWORKS}
    (_, theirs, their_root), (_, ours, our_root) = runs["lightning"], runs["accelplug"]
    assert ours.calls == theirs.calls
    assert any(call[0] == "remove" for call in ours.calls), "top-2 of 5 epochs removed files"
    assert sorted(os.listdir(our_root / "ckpts")) == sorted(os.listdir(their_root / "ckpts"))


def test_resuming_and_removing_go_through_the_plugin_and_the_files_are_accelplugs(tmp_path: Path) -> None:
    trainer, io, root = _fit_recorded(tmp_path, "accelplug")
    best = os.path.relpath(trainer.checkpoint_callback.best_model_path, root)
    state = TorchCheckpointIO().load_checkpoint(root / "ckpts" / "last.ckpt")
    assert state["sha256"] and state["loop"]["global_step"] == 30  # the checksummed file, verified on load
    assert [c for c in io.calls if c[0] == "load"] == [("load", best, True, ["weights_only"])]


def test_torch_checkpoint_io_round_trips_through_an_fsspec_url() -> None:
    io = TorchCheckpointIO()
    url = "memory://accelplug-io-test/run/model.ckpt"
    io.save_checkpoint({"w": torch.arange(4.0), "epoch": 3}, url)
    loaded = io.load_checkpoint(url)
    assert torch.equal(loaded["w"], torch.arange(4.0)) and loaded["epoch"] == 3
    io.remove_checkpoint(url)
    with pytest.raises(FileNotFoundError, match=r"model\.ckpt"):
        io.load_checkpoint(url)
    io.remove_checkpoint(url)  # already gone: no error, as Lightning's


def test_the_trainer_saves_to_a_url_through_an_async_plugin(tmp_path: Path) -> None:
    from tests.modules import LinearRegression, quiet, regression_data

    io = AsyncCheckpointIO()
    trainer = accelplug.Trainer(**quiet(max_steps=3, logger=False, enable_checkpointing=False), plugins=[io])
    trainer.fit(LinearRegression(), regression_data())
    url = "memory://accelplug-io-test/async/last.ckpt"
    assert trainer.save_checkpoint(url) == url
    io.teardown()
    assert TorchCheckpointIO().load_checkpoint(url)["loop"]["global_step"] == 3


def test_a_corrupt_file_is_refused_by_the_plugin_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "model.ckpt"
    TorchCheckpointIO().save_checkpoint({"w": torch.ones(8)}, target)
    data = bytearray(target.read_bytes())
    index = data.find(b"\x00\x00\x80?")  # a float 1.0 of the tensor's bytes
    data[index + 2] = 0x00
    target.write_bytes(bytes(data))
    with pytest.raises(MisconfigurationException, match=r"model\.ckpt.*corrupt"):
        TorchCheckpointIO().load_checkpoint(target)


def test_storage_options_are_refused_as_lightning_does_and_as_accelplug_does(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="storage_options"):
        TorchCheckpointIO().save_checkpoint({}, tmp_path / "x.ckpt", storage_options={"a": 1})
    with pytest.raises(MisconfigurationException, match="storage_options"):
        TorchCheckpointIO().save_checkpoint({}, tmp_path / "x.ckpt", storage_options={"a": 1})


@pytest.mark.parametrize(
    ("plugin", "words"),
    [
        (AsyncCheckpointIO, "AsyncCheckpointIO is a class: pass an instance, AsyncCheckpointIO()"),
        ("async", "accepted are instances of ClusterEnvironment, Precision, LayerSync, CheckpointIO"),
    ],
    ids=["a class", "a name"],
)
def test_a_plugin_that_is_no_checkpoint_io_object_is_refused_by_name(plugin: Any, words: str) -> None:
    with pytest.raises(MisconfigurationException, match=words.replace("(", r"\(").replace(")", r"\)")):
        accelplug.Trainer(accelerator="cpu", plugins=[plugin])


def test_a_duck_typed_writer_is_told_to_subclass_checkpoint_io() -> None:
    class Writer:
        def save_checkpoint(self, checkpoint: Any, path: Any) -> None: ...

        def load_checkpoint(self, path: Any) -> Any: ...

    with pytest.raises(MisconfigurationException, match=r"subclass accelplug\.plugins\.CheckpointIO"):
        accelplug.Trainer(accelerator="cpu", plugins=[Writer()])


def test_two_writers_and_a_writer_given_twice_are_refused() -> None:
    with pytest.raises(MisconfigurationException, match="2 objects of one kind"):
        accelplug.Trainer(accelerator="cpu", plugins=[TorchCheckpointIO(), AsyncCheckpointIO()])
    strategy = SingleDeviceStrategy(checkpoint_io=TorchCheckpointIO())
    with pytest.raises(MisconfigurationException, match="both name the checkpoint writer"):
        accelplug.Trainer(accelerator="cpu", strategy=strategy, plugins=[AsyncCheckpointIO()])
    with pytest.raises(MisconfigurationException, match="expected a CheckpointIO instance"):
        SingleDeviceStrategy(checkpoint_io="torch")  # type: ignore[arg-type]


def test_strategy_constructors_take_lightnings_arguments() -> None:
    io = AsyncCheckpointIO()
    strategy = SingleDeviceStrategy(device="cpu", checkpoint_io=io)
    trainer = accelplug.Trainer(accelerator="cpu", strategy=strategy, logger=False)
    assert trainer.strategy.checkpoint_io is io
    assert isinstance(io.checkpoint_io, TorchCheckpointIO), "the wrapper got the strategy's default writer"
    with pytest.raises(MisconfigurationException, match="is not a device"):
        SingleDeviceStrategy(device="quantum:0")
    plain = SingleDeviceStrategy()
    assert isinstance(plain.checkpoint_io, TorchCheckpointIO) and plain.checkpoint_io is plain.checkpoint_io
    assert isinstance(accelplug.strategies.DDPStrategy(checkpoint_io=io).checkpoint_io, AsyncCheckpointIO)


def test_the_plugin_names_are_at_lightnings_paths() -> None:
    import accelplug.plugins.io as short
    import accelplug.pytorch.plugins as mirror
    import accelplug.pytorch.plugins.io as mirror_io

    for module in (short, mirror, mirror_io):
        assert module.AsyncCheckpointIO is AsyncCheckpointIO and module.CheckpointIO is CheckpointIO
        assert module.TorchCheckpointIO is TorchCheckpointIO
