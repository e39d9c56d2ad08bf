"""The one batch mover (``accelplug.data.batches``) against Lightning's ``move_data_to_device`` and its
precisions' ``convert_input``: each kind of batch comes back as the same type, with the same devices, dtypes
and values.

The batches are moved to the ``meta`` device, which every machine has, so a move really happens; a cast is
checked on the CPU, where the values can be compared. ``TokenizerOutput`` stands for Hugging Face's
``BatchEncoding``: a ``UserDict`` whose ``to(device)`` moves its tensors and returns itself.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, UserDict, defaultdict, namedtuple
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from accelplug.data.batches import cast_floating, convert_tensors_to_scalars, make_transfer, move_data_to_device
from accelplug.errors import MisconfigurationException

lightning_apply = pytest.importorskip("lightning.fabric.utilities.apply_func", reason="the parity side is Lightning")

Pair = namedtuple("Pair", ["features", "labels"])


@dataclasses.dataclass
class Sample:
    features: torch.Tensor
    labels: torch.Tensor
    name: str = "sample"


@dataclasses.dataclass(frozen=True)
class FrozenSample:
    features: torch.Tensor
    labels: torch.Tensor


class TokenizerOutput(UserDict):  # type: ignore[type-arg]
    """Hugging Face's ``BatchEncoding`` in miniature: a ``UserDict`` whose ``to`` moves in place, returns self."""

    def to(self, device: Any) -> TokenizerOutput:
        self.data = {key: value.to(device) for key, value in self.data.items()}
        return self


class Packed:
    """A user's batch object whose ``to`` returns a new object."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def to(self, device: Any) -> Packed:
        return Packed(self.values.to(device))


class InPlace:
    """A user's batch object whose ``to`` moves in place and returns nothing (Lightning keeps the object)."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def to(self, device: Any) -> None:
        self.values = self.values.to(device)


def _features() -> torch.Tensor:
    return torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7


def _labels() -> torch.Tensor:
    return torch.tensor([1, 0])


BATCHES: dict[str, Any] = {
    "tensor": _features,
    "tuple": lambda: (_features(), _labels()),
    "list": lambda: [_features(), _labels(), "text", 3],
    "dict": lambda: {"x": _features(), "y": _labels(), "nested": [_features()]},
    "OrderedDict": lambda: OrderedDict(x=_features(), y=_labels()),
    "defaultdict": lambda: defaultdict(list, x=_features(), y=_labels()),
    "UserDict": lambda: UserDict(x=_features(), y=_labels()),
    "named tuple": lambda: Pair(_features(), _labels()),
    "dataclass": lambda: Sample(_features(), _labels()),
    "BatchEncoding-like": lambda: TokenizerOutput(input_ids=_labels(), attention_mask=_features()),
    "object returning a new object": lambda: Packed(_features()),
    "object moving in place": lambda: InPlace(_features()),
    "nested": lambda: {"pairs": [Pair(_features(), {"y": _labels()})], "samples": (Sample(_features(), _labels()),)},
}


def describe(obj: Any) -> Any:
    """Type, device, dtype and values of everything in ``obj``, for comparing two frameworks' results."""
    if isinstance(obj, torch.Tensor):
        values = obj.tolist() if obj.device.type != "meta" else None
        return ("tensor", obj.device.type, obj.dtype, values)
    if isinstance(obj, (Packed, InPlace)):
        return (type(obj).__name__, describe(obj.values))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj), {f.name: describe(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    if isinstance(obj, (dict, UserDict)):
        default = getattr(obj, "default_factory", None)
        return (type(obj), default, {k: describe(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj), [describe(v) for v in obj])
    return obj


@pytest.mark.parametrize("kind", list(BATCHES))
def test_move_data_to_device_gives_lightnings_result(kind: str) -> None:
    ours = move_data_to_device(BATCHES[kind](), torch.device("meta"))
    theirs = lightning_apply.move_data_to_device(BATCHES[kind](), torch.device("meta"))
    assert describe(ours) == describe(theirs)
    assert "'meta'" in repr(describe(ours)) or isinstance(ours, (Packed, InPlace))


LIGHTNING_PRECISIONS = {
    "64-true": (torch.float64, lambda p: p.DoublePrecision()),
    "bf16-true": (torch.bfloat16, lambda p: p.HalfPrecision("bf16-true")),
    "16-true": (torch.float16, lambda p: p.HalfPrecision("16-true")),
}


@pytest.mark.parametrize("precision", list(LIGHTNING_PRECISIONS))
@pytest.mark.parametrize("kind", list(BATCHES))
def test_a_true_precisions_cast_gives_lightnings_result(kind: str, precision: str) -> None:
    """Floating tensors take the precision's dtype, integer ones keep theirs, in every kind of batch."""
    import lightning.pytorch.plugins.precision as lightning_precision

    dtype, make_plugin = LIGHTNING_PRECISIONS[precision]
    ours = make_transfer(torch.device("cpu"), dtype)(BATCHES[kind]())
    plugin = make_plugin(lightning_precision)
    theirs = plugin.convert_input(lightning_apply.move_data_to_device(BATCHES[kind](), torch.device("cpu")))
    assert describe(ours) == describe(theirs)
    if kind.startswith("object"):  # Lightning's cast walks collections only: a user's object keeps its dtypes
        assert describe(ours)[1][2] == torch.float32


def test_a_cast_walks_into_a_mapping_that_is_not_a_dict() -> None:
    """The Trainer's mover once left a ``UserDict`` (a ``BatchEncoding``) as it was, so ``64-true`` met float32."""
    batch = make_transfer(torch.device("cpu"), torch.float64)(TokenizerOutput(mask=_features(), ids=_labels()))
    assert isinstance(batch, TokenizerOutput)
    assert (batch["mask"].dtype, batch["ids"].dtype) == (torch.float64, torch.int64)
    assert cast_floating(UserDict(x=_features()), torch.bfloat16)["x"].dtype == torch.bfloat16


def test_a_frozen_dataclass_is_moved_where_lightning_refuses_it() -> None:
    with pytest.raises(ValueError, match="frozen dataclass"):
        lightning_apply.move_data_to_device(FrozenSample(_features(), _labels()), torch.device("meta"))
    moved = move_data_to_device(FrozenSample(_features(), _labels()), torch.device("meta"))
    assert isinstance(moved, FrozenSample)
    assert (moved.features.device.type, moved.labels.device.type) == ("meta", "meta")
    cast = make_transfer(torch.device("cpu"), torch.float64)(FrozenSample(_features(), _labels()))
    assert (cast.features.dtype, cast.labels.dtype) == (torch.float64, torch.int64)


def test_on_the_cpu_without_a_cast_the_per_batch_function_hands_the_batch_back() -> None:
    batch = {"x": _features()}
    assert make_transfer(torch.device("cpu"), None)(batch) is batch


def test_a_mapping_whose_constructor_takes_other_arguments_is_copied_with_its_items_moved() -> None:
    class Keyed(UserDict):  # type: ignore[type-arg]
        def __init__(self, owner: str, data: dict[str, Any]) -> None:
            super().__init__(data)
            self.owner = owner

    moved = move_data_to_device(Keyed("me", {"x": _features()}), "meta")
    assert isinstance(moved, Keyed) and moved.owner == "me" and moved["x"].device.type == "meta"


def test_a_sequence_type_that_cannot_be_rebuilt_is_a_clear_error() -> None:
    class Frames(tuple):  # type: ignore[type-arg]
        def __new__(cls, first: torch.Tensor, second: torch.Tensor) -> Frames:
            return super().__new__(cls, (first, second))

    with pytest.raises(MisconfigurationException, match="cannot move a Frames of tensors"):
        move_data_to_device(Frames(_features(), _features()), "meta")
    assert isinstance(move_data_to_device(DataLoader([1]), "meta"), DataLoader)  # no .to, not a collection: as is


def test_metrics_become_python_numbers_as_lightnings_convert_tensors_to_scalars_makes_them() -> None:
    metrics = {"loss": torch.tensor(0.25), "nested": [torch.tensor([3]), Pair(torch.tensor(True), 2.5)]}
    ours = convert_tensors_to_scalars(metrics)
    assert ours == lightning_apply.convert_tensors_to_scalars(metrics) == {"loss": 0.25, "nested": [3, Pair(True, 2.5)]}
    with pytest.raises(ValueError, match="does not contain a single element, thus it cannot be converted to a scalar"):
        convert_tensors_to_scalars({"pair": torch.ones(2)})


def _fit_on_user_dict_batches(framework: Any, precision: str) -> torch.Tensor:
    """A regression fitted on batches that are ``TokenizerOutput`` mappings; returns the trained weight."""

    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.linear = torch.nn.Linear(3, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            assert isinstance(batch, TokenizerOutput) and batch["x"].dtype == torch.float64
            return torch.nn.functional.mse_loss(self.linear(batch["x"]), batch["y"])

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=generator)
    rows = [TokenizerOutput(x=x[i], y=x[i].sum(0, keepdim=True)) for i in range(64)]

    def collate(items: list[TokenizerOutput]) -> TokenizerOutput:
        return TokenizerOutput({key: torch.stack([item[key] for item in items]) for key in items[0]})

    module = Regression()
    trainer = framework.Trainer(
        accelerator="cpu", devices=1, precision=precision, max_epochs=2, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    trainer.fit(module, DataLoader(rows, batch_size=16, collate_fn=collate))
    return module.linear.weight.detach()


def test_a_fit_under_64_true_on_user_dict_batches_trains_as_lightnings() -> None:
    import lightning

    import accelplug
    from tests.callbacks.parity import quiet_lightning

    with quiet_lightning():
        theirs = _fit_on_user_dict_batches(lightning, "64-true")
    ours = _fit_on_user_dict_batches(accelplug, "64-true")
    assert ours.dtype == theirs.dtype == torch.float64
    torch.testing.assert_close(ours, theirs)
