"""``fabric.save``/``load``/``load_raw`` write and read the Trainer's checkpoint file: atomic, checksummed, verified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from accelplug.checkpoint import TorchCheckpointIO
from accelplug.checkpoint.file import DIGEST_KEY, FORMAT_KEY, content_digest
from accelplug.fabric import Fabric
from accelplug.strategies.single_device import SingleDeviceStrategy
from tests.callbacks.parity import quiet_lightning

from . import loops


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _set_up(seed: int = 0, steps: int = 1) -> tuple[Fabric, Any, Any]:
    fabric = Fabric(accelerator="cpu", devices=1)
    torch.manual_seed(seed)
    original = loops.Net()
    model, opt = fabric.setup(original, torch.optim.Adam(original.parameters(), lr=0.01))
    for _ in range(steps):
        fabric.backward(model(torch.randn(4, 4)).sum())
        opt.step()
    return fabric, model, opt


class Counter:
    """A stateful object: saved through its state_dict, restored through load_state_dict."""

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def state_dict(self) -> dict[str, int]:
        return {"value": self.value}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.value = state["value"]


def test_a_saved_state_loads_back_in_place_with_the_rest_returned(tmp_path: Path) -> None:
    fabric, model, opt = _set_up()
    path = tmp_path / "state.ckpt"
    fabric.save(path, {"model": model, "optimizer": opt, "counter": Counter(5), "step": 12, "note": "hi"})
    _, other_model, other_opt = _set_up(seed=1, steps=0)
    assert loops.weights(other_model) != loops.weights(model) and not other_opt.state_dict()["state"]
    counter = Counter()
    state: dict[str, Any] = {"model": other_model, "optimizer": other_opt, "counter": counter, "step": 0}
    remainder = fabric.load(path, state)
    assert remainder == {"note": "hi"}
    assert state["step"] == 12 and counter.value == 5
    assert loops.weights(other_model) == loops.weights(model)
    assert other_opt.state_dict()["state"].keys() == opt.state_dict()["state"].keys()
    for saved, loaded in zip(opt.state_dict()["state"].values(), other_opt.state_dict()["state"].values(), strict=True):
        assert torch.equal(saved["exp_avg"], loaded["exp_avg"])
    full = fabric.load(path)
    assert sorted(full) == ["counter", "model", "note", "optimizer", "step"]


def test_the_file_is_the_trainers_format_with_a_checksum_verified_on_load(tmp_path: Path) -> None:
    fabric, model, _ = _set_up()
    path = tmp_path / "model.ckpt"
    fabric.save(path, {"model": model})
    raw = torch.load(path, weights_only=True)
    assert raw[FORMAT_KEY] == 2 and raw[DIGEST_KEY] == content_digest(raw)
    raw["model"]["out.bias"] += 1.0  # damage the weights, keep the stored digest
    torch.save(raw, path)
    with pytest.raises(MisconfigurationException, match=r"model\.ckpt.*corrupt"):
        fabric.load(path, {"model": model})
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(MisconfigurationException, match="cannot be read as a checkpoint"):
        fabric.load(path)
    assert not list(tmp_path.glob(".*.tmp")), "the atomic writer leaves no temporary file behind"


def test_a_trainer_checkpoint_loads_into_a_fabric_model(tmp_path: Path) -> None:
    torch.manual_seed(0)
    trained = loops.Net()
    trained.configure_optimizers = lambda: torch.optim.SGD(trained.parameters(), lr=0.1)  # type: ignore[method-assign]
    loader = torch.utils.data.DataLoader(loops.dataset(8), batch_size=4)
    trainer = Trainer(
        accelerator="cpu", max_steps=2, logger=False, enable_checkpointing=False, enable_progress_bar=False
    )
    trainer.fit(trained, loader)
    trainer.save_checkpoint(tmp_path / "trainer.ckpt")
    fabric = Fabric(accelerator="cpu", devices=1)
    model = fabric.setup(loops.Net())
    remainder = fabric.load(tmp_path / "trainer.ckpt", {"state_dict": model}, strict=False)
    assert loops.weights(model) == loops.weights(trained)
    assert remainder["global_step"] == 2


def test_filter_strict_and_load_raw(tmp_path: Path) -> None:
    fabric, model, opt = _set_up()
    fabric.save(tmp_path / "weights.ckpt", {"model": model}, filter={"model": lambda name, _value: "out." in name})
    assert sorted(fabric.load(tmp_path / "weights.ckpt")["model"]) == ["out.bias", "out.weight"]
    with pytest.raises(KeyError, match="contains a key 'optimizer' that does not exist in the loaded") as raised:
        fabric.load(tmp_path / "weights.ckpt", {"model": model, "optimizer": opt})
    assert isinstance(raised.value, MisconfigurationException)  # Lightning's KeyError, and accelplug's error
    assert str(raised.value).startswith("The requested state")  # a sentence, not a KeyError's quoted repr
    torch.save(model.module.state_dict(), tmp_path / "raw.pt")
    _, other, _ = _set_up()
    other.module.inp.weight.data.zero_()
    fabric.load_raw(tmp_path / "raw.pt", other)
    assert loops.weights(other) == loops.weights(model)
    with pytest.raises(MisconfigurationException, match="does not fit Linear"):
        fabric.load_raw(tmp_path / "raw.pt", torch.nn.Linear(2, 2))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda f, p: f.save(p, {"m": 1}, filter={"x": lambda *_: True}), r"The filter keys \{'x'\} are not present"),
        (lambda f, p: f.save(p, {"m": 1}, filter={"m": 3}), "for key 'm' to be a callable, given 3"),
        (lambda f, p: f.save(p, [1, 2]), "expected a dict"),
        (lambda f, p: f.save(None, {"m": 1}), "expected a file path"),
        (lambda f, p: f.load(p / "missing.ckpt"), "no such file"),
        (lambda f, p: f.load(p), "is a folder"),
        (lambda f, p: f.load_raw(p / "x", 3), "expected a module or an optimizer"),
    ],
)
def test_bad_checkpoint_calls_name_the_value(tmp_path: Path, call: Any, words: str) -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    with pytest.raises(MisconfigurationException, match=words):
        call(fabric, tmp_path)


class _InMemoryStrategy(SingleDeviceStrategy):
    """A strategy that keeps checkpoints in a dict instead of files: the kind Fabric must hand its calls to."""

    def __init__(self) -> None:
        super().__init__(device="cpu")
        self.store: dict[str, Any] = {}

    def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        self.store[str(kwargs["path"])] = {k: v.state_dict() for k, v in kwargs["state"].items()}

    def load_checkpoint(  # type: ignore[override]
        self, path: Any, state: Any = None, strict: bool = True, weights_only: bool | None = None
    ) -> dict[str, Any]:
        saved = self.store[str(path)]
        target = state if isinstance(state, dict) else {"model": state}
        for key, obj in target.items():
            obj.load_state_dict(saved[key])
        return {}


def test_save_load_and_load_raw_are_the_strategys_so_no_file_is_needed() -> None:
    strategy = _InMemoryStrategy()
    fabric = Fabric(strategy=strategy)
    torch.manual_seed(0)
    model = fabric.setup(loops.Net())
    fabric.save("nowhere/model.pt", {"model": model})  # the strategy receives the user's module, not the wrapper
    assert set(strategy.store["nowhere/model.pt"]) == {"model"}
    other, raw = loops.Net(), loops.Net()
    fabric.load("nowhere/model.pt", {"model": other})
    fabric.load_raw("nowhere/model.pt", raw)
    assert loops.weights(other) == loops.weights(model) == loops.weights(raw)


def test_a_missing_file_is_named_by_the_default_strategy_as_a_file_not_found(tmp_path: Path) -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    with pytest.raises(FileNotFoundError, match="no such file"):
        fabric.load(tmp_path / "missing.ckpt", {"model": loops.Net()})


class _RecordingWriter:
    """A writer that is not a CheckpointIO subclass (Lightning's strategies take any object as checkpoint_io)."""

    def __init__(self) -> None:
        self.saved: dict[str, Any] = {}
        self.paths: list[Any] = []

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        self.saved, self.paths = checkpoint, [*self.paths, path]

    def load_checkpoint(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        self.paths.append(path)
        return dict(self.saved)


def test_a_users_writer_gets_the_filtered_entries_and_nothing_else(tmp_path: Path) -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    writer = _RecordingWriter()
    fabric.strategy.checkpoint_io = writer  # type: ignore[assignment]
    model = loops.Net()
    state = {"model": model, "meta": {"epoch": 3, "note": "x"}, "step": 7}
    keep_ints = {"meta": lambda _k, v: isinstance(v, int), "model": lambda k, _v: k.endswith("weight")}
    fabric.save(tmp_path / "c.pt", state, filter=keep_ints)
    assert writer.saved["meta"] == {"epoch": 3} and writer.saved["step"] == 7
    assert all(k.endswith("weight") for k in writer.saved["model"])
    fabric.save(tmp_path / "c.pt", state, filter={"meta": lambda *_: False})  # nothing kept: the entry is left out
    assert set(writer.saved) == {"model", "step"}


def test_filter_mistakes_raise_lightnings_exception_types(tmp_path: Path) -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    with pytest.raises(TypeError, match="should be a dict"):
        fabric.save(tmp_path / "c.pt", {"m": 1}, filter="m")
    with pytest.raises(TypeError, match="to be a callable"):
        fabric.save(tmp_path / "c.pt", {"m": 1}, filter={"m": "m"})
    with pytest.raises(ValueError, match="are not present in the state keys"):
        fabric.save(tmp_path / "c.pt", {"m": 1}, filter={"x": lambda *_: True})


def test_checkpoint_io_refuses_a_class_and_an_object_that_cannot_write() -> None:
    strategy = SingleDeviceStrategy(device="cpu")
    with pytest.raises(MisconfigurationException, match=r"pass an instance: TorchCheckpointIO\(\)"):
        strategy.checkpoint_io = TorchCheckpointIO  # type: ignore[assignment]
    with pytest.raises(MisconfigurationException, match="expected a CheckpointIO instance"):
        strategy.checkpoint_io = "torch"  # type: ignore[assignment]


def test_a_users_writer_gets_the_path_as_written_and_reads_it_back() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    writer = _RecordingWriter()
    fabric.strategy.checkpoint_io = writer  # type: ignore[assignment]
    torch.manual_seed(0)
    model = loops.Net()
    fabric.save("store://run/c.pt", {"model": model, "step": 7})  # no local file is made or looked for
    other = loops.Net()
    assert fabric.load("store://run/c.pt", {"model": other}) == {"step": 7}
    assert writer.paths == ["store://run/c.pt", "store://run/c.pt"]
    assert loops.weights(other) == loops.weights(model)
