"""Lightning 1.x's precision plugin names (``MixedPrecisionPlugin``...) and ``LightningDoublePrecisionModule``: still
importable where Lightning 2.6 keeps them, each a subclass of its new class that warns as Lightning's does."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest
import torch

from accelplug.errors import LightningDeprecationWarning

lightning = pytest.importorskip("lightning", reason="compares with Lightning's deprecation messages")

#: old name -> (Lightning's module under ``plugins.precision``, the new name, arguments that build one on a CPU)
RENAMED: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    "PrecisionPlugin": ("precision", "Precision", ()),
    "MixedPrecisionPlugin": ("amp", "MixedPrecision", ("bf16-mixed", "cpu")),
    "HalfPrecisionPlugin": ("half", "HalfPrecision", ("bf16-true",)),
    "DoublePrecisionPlugin": ("double", "DoublePrecision", ()),
}


def _built_with_warning(cls: type, *args: Any) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(*args)
    deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, deprecations
    return deprecations[0]


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_an_old_precision_name_is_the_new_class_and_warns_lightnings_message(old: str) -> None:
    _module, new, args = RENAMED[old]
    mine = importlib.import_module("accelplug.pytorch.plugins.precision")
    theirs = importlib.import_module("lightning.pytorch.plugins.precision")
    assert issubclass(getattr(mine, old), getattr(mine, new))
    with pytest.warns(LightningDeprecationWarning, match=f"The `{old}` is deprecated"):
        getattr(mine, old)(*args)
    assert _built_with_warning(getattr(mine, old), *args) == _built_with_warning(getattr(theirs, old), *args)


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_an_old_precision_name_is_reachable_at_each_of_lightnings_paths(old: str) -> None:
    module = RENAMED[old][0]
    found = {
        importlib.import_module(path).__dict__[old]
        for path in (
            "accelplug.pytorch.plugins",
            "accelplug.pytorch.plugins.precision",
            f"accelplug.pytorch.plugins.precision.{module}",
        )
    }
    assert len(found) == 1


def test_fsdp_mixed_precision_plugin_takes_the_device_it_once_had() -> None:
    from accelplug.pytorch.plugins.precision import FSDPMixedPrecisionPlugin, FSDPPrecision

    with pytest.warns(LightningDeprecationWarning, match="Use `lightning.pytorch.plugins.precision.FSDPPrecision`"):
        plugin = FSDPMixedPrecisionPlugin("bf16-mixed", device="cpu")
    assert isinstance(plugin, FSDPPrecision)


def test_the_old_precision_plugin_module_path_names_the_base_class() -> None:
    from accelplug.pytorch.plugins.precision.precision import Precision
    from accelplug.pytorch.plugins.precision.precision_plugin import Precision as same

    assert same is Precision


class _Recorder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def forward(self, *args: Any, **kwargs: Any) -> str:
        self.seen.append((args, kwargs))
        return "forward"

    def training_step(self, batch: Any, batch_idx: int) -> str:
        self.seen.append((batch, batch_idx))
        return "training_step"


def test_the_double_precision_module_gives_float64_floats_and_leaves_other_values() -> None:
    from accelplug.pytorch.plugins.precision.double import LightningDoublePrecisionModule

    inner = _Recorder()
    with pytest.warns(LightningDeprecationWarning, match="LightningDoublePrecisionModule` is deprecated"):
        wrapper = LightningDoublePrecisionModule(inner)
    batch = {"x": torch.ones(2, dtype=torch.float32), "y": torch.ones(2, dtype=torch.int64)}
    assert wrapper.training_step(batch, 3) == "training_step"
    seen_batch, seen_index = inner.seen[-1]
    assert (seen_batch["x"].dtype, seen_batch["y"].dtype, seen_index) == (torch.float64, torch.int64, 3)
    assert wrapper(torch.zeros(1, dtype=torch.float16), scale=torch.zeros(1)) == "forward"
    (arg,), kwargs = inner.seen[-1]
    assert (arg.dtype, kwargs["scale"].dtype) == (torch.float64, torch.float64)


def test_the_double_precision_module_prefixes_the_parameters_ddp_ignores() -> None:
    from accelplug.pytorch.plugins.precision.double import LightningDoublePrecisionModule

    inner = _Recorder()
    inner._ddp_params_and_buffers_to_ignore = ["weight"]  # type: ignore[assignment]
    with pytest.warns(LightningDeprecationWarning):
        wrapper = LightningDoublePrecisionModule(inner)
    assert wrapper._ddp_params_and_buffers_to_ignore == ["module.weight"]
