"""Lightning's precision plugins in ``Trainer(plugins=[...])``, side by side with Lightning 2.6.

Each CPU-usable plugin fits the same regression under both frameworks and must end with the same weights
(and, in accelplug, with exactly the weights ``precision=<name>`` reaches); a subclass that rewrites a step
method must be called as often as Lightning calls it, with the hooks in Lightning's order around it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from tests.callbacks.parity import FRAMEWORKS, data, make_module, quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

#: (what Lightning's plugins module is asked for, the precision name accelplug trains in without a plugin)
PLUGINS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "Precision": (lambda p: p.Precision(), "32-true"),
    "MixedPrecision-bf16": (lambda p: p.MixedPrecision("bf16-mixed", "cpu"), "bf16-mixed"),
    "MixedPrecision-fp16": (lambda p: p.MixedPrecision("16-mixed", "cpu"), "16-mixed"),
    "HalfPrecision-bf16": (lambda p: p.HalfPrecision("bf16-true"), "bf16-true"),
    "HalfPrecision-fp16": (lambda p: p.HalfPrecision("16-true"), "16-true"),
    "DoublePrecision": (lambda p: p.DoublePrecision(), "64-true"),
}


def _plugins_module(framework: Any) -> Any:
    return lightning.pytorch.plugins if framework is lightning else accelplug.plugins


def _fit(framework: Any, root: Path, module: Any = None, **options: Any) -> tuple[Any, Any]:
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    module = module if module is not None else make_module(framework, validation=False)
    settings = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 2,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "default_root_dir": root,
        **options,
    }
    with quiet_lightning(framework):
        trainer = framework.Trainer(**settings)
        trainer.fit(module)
    return trainer, module


def _weights(module: Any) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("case", sorted(PLUGINS))
def test_a_plugin_trains_as_lightning_does_and_as_its_precision_name(case: str, tmp_path: Path) -> None:
    make, name = PLUGINS[case]
    weights, seen = {}, {}
    for label, framework in FRAMEWORKS.items():
        plugin = make(_plugins_module(framework))
        trainer, module = _fit(framework, tmp_path / label, plugins=[plugin])
        assert trainer.precision_plugin is plugin and trainer.strategy.precision_plugin is plugin
        seen[label] = trainer.precision
        weights[label] = _weights(module)
    assert seen["accelplug"] == seen["lightning"] == getattr(plugin, "precision", name)
    for key, expected in weights["lightning"].items():
        assert weights["accelplug"][key].dtype == expected.dtype, key
        torch.testing.assert_close(weights["accelplug"][key], expected, rtol=0, atol=0, msg=key)
    if name == "16-mixed":
        return  # the name on the CPU trains in bf16-mixed, as Lightning's Trainer does (test_cpu_half_as_bf16)
    _, by_name = _fit(accelplug, tmp_path / "by_name", precision=name)
    for key, value in _weights(by_name).items():
        assert torch.equal(weights["accelplug"][key], value), key


def _counting_subclass(framework: Any, base: str, *args: Any) -> Any:
    """A plugin subclass counting its step methods and recording the order of hooks around them."""
    parent = getattr(_plugins_module(framework), base)
    calls: list[str] = []

    class Counting(parent):  # type: ignore[misc, valid-type]
        def pre_backward(self, tensor: Any, module: Any) -> Any:
            calls.append("pre_backward")
            return super().pre_backward(tensor, module)

        def backward(self, tensor: Any, model: Any, optimizer: Any, *a: Any, **k: Any) -> None:
            calls.append(f"backward(optimizer={'yes' if optimizer is not None else None})")
            super().backward(tensor, model, optimizer, *a, **k)

        def post_backward(self, tensor: Any, module: Any) -> Any:
            calls.append("post_backward")
            return super().post_backward(tensor, module)

        def optimizer_step(self, optimizer: Any, model: Any, closure: Any, **kwargs: Any) -> Any:
            calls.append("optimizer_step")
            return super().optimizer_step(optimizer, model, closure, **kwargs)

        def clip_gradients(self, optimizer: Any, clip_val: Any = 0.0, gradient_clip_algorithm: Any = "norm") -> None:
            calls.append(
                f"clip_gradients({clip_val}, {getattr(gradient_clip_algorithm, 'value', gradient_clip_algorithm)})"
            )
            super().clip_gradients(optimizer, clip_val, gradient_clip_algorithm)

    plugin = Counting(*args)
    plugin.calls = calls
    return plugin


def _hook_recorder(framework: Any, calls: list[str]) -> Any:
    class Hooks(framework.Callback):  # type: ignore[misc, name-defined]
        def on_before_backward(self, trainer: Any, pl_module: Any, loss: Any) -> None:
            calls.append(f"on_before_backward({float(loss.detach()):.6g})")

        def on_after_backward(self, trainer: Any, pl_module: Any) -> None:
            calls.append("on_after_backward")

        def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
            calls.append("on_before_optimizer_step")

    return Hooks()


@pytest.mark.parametrize(
    ("base", "args", "options"),
    [
        ("Precision", (), {}),
        ("Precision", (), {"gradient_clip_val": 0.5, "gradient_clip_algorithm": "value"}),
        ("MixedPrecision", ("16-mixed", "cpu"), {"gradient_clip_val": 1.0}),
        ("MixedPrecision", ("bf16-mixed", "cpu"), {"accumulate_grad_batches": 2}),
        ("HalfPrecision", ("bf16-true",), {}),
    ],
)
def test_a_subclass_rewriting_step_methods_is_called_as_lightning_calls_it(
    base: str, args: tuple[Any, ...], options: dict[str, Any], tmp_path: Path
) -> None:
    recorded, weights = {}, {}
    for label, framework in FRAMEWORKS.items():
        plugin = _counting_subclass(framework, base, *args)
        callbacks = [_hook_recorder(framework, plugin.calls)]
        _, module = _fit(framework, tmp_path / label, plugins=[plugin], callbacks=callbacks, max_epochs=1, **options)
        recorded[label], weights[label] = plugin.calls, _weights(module)
    assert recorded["accelplug"] == recorded["lightning"]
    assert recorded["accelplug"].count("optimizer_step") == 6 // options.get("accumulate_grad_batches", 1)
    for key, expected in weights["lightning"].items():
        torch.testing.assert_close(weights["accelplug"][key], expected, rtol=0, atol=0, msg=key)


def test_manual_optimization_goes_through_a_rewritten_plugin_as_in_lightning(tmp_path: Path) -> None:
    recorded, weights = {}, {}
    for label, framework in FRAMEWORKS.items():

        class Manual(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                torch.manual_seed(0)
                self.layer = torch.nn.Linear(4, 1)
                self.automatic_optimization = False

            def training_step(self, batch: Any, batch_idx: int) -> None:
                optimizer = self.optimizers()
                x, y = batch
                loss = torch.nn.functional.mse_loss(self.layer(x), y)
                optimizer.zero_grad()
                self.manual_backward(loss)
                optimizer.step()

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.05)

            def train_dataloader(self) -> Any:
                return data()

        plugin = _counting_subclass(framework, "MixedPrecision", "16-mixed", "cpu")
        _, module = _fit(framework, tmp_path / label, module=Manual(), plugins=[plugin], max_epochs=1)
        recorded[label], weights[label] = plugin.calls, _weights(module)
    assert recorded["accelplug"] == recorded["lightning"]
    assert "backward(optimizer=None)" in recorded["accelplug"]
    for key, expected in weights["lightning"].items():
        torch.testing.assert_close(weights["accelplug"][key], expected, rtol=0, atol=0, msg=key)


def test_a_rewritten_forward_context_is_entered_around_each_step_as_in_lightning(tmp_path: Path) -> None:
    entered = {}
    for label, framework in FRAMEWORKS.items():
        counts = {"forward": 0}
        parent = _plugins_module(framework).Precision

        class Context(parent):  # type: ignore[misc, valid-type]
            def forward_context(self, counts: dict[str, int] = counts) -> Any:
                counts["forward"] += 1
                return torch.autocast("cpu", dtype=torch.bfloat16)

        module = make_module(framework, validation=True)
        _fit(framework, tmp_path / label, module=module, plugins=[Context()], max_epochs=1, num_sanity_val_steps=0)
        entered[label] = counts["forward"]
    assert entered["accelplug"] == entered["lightning"] == 6 + 2  # six training batches, two validation batches
