"""A user's precision plugin, strategy and CheckpointIO under Fabric are called as Lightning Fabric calls them
(each case run under Lightning itself and compared)."""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

import lightning.fabric as lf
import lightning.fabric.plugins as lp
import lightning.fabric.strategies as ls
import torch
from torch import nn

import accelplug.fabric as af
import accelplug.fabric.plugins as ap
import accelplug.fabric.strategies as ast

HOOKS = (
    "convert_module",
    "convert_input",
    "convert_output",
    "forward_context",
    "module_init_context",
    "tensor_init_context",
    "pre_backward",
    "backward",
    "post_backward",
    "optimizer_step",
    "unscale_gradients",
    "main_params",
)


def _counting(base: type) -> tuple[Any, collections.Counter[str]]:
    calls: collections.Counter[str] = collections.Counter()

    def counted(name: str) -> Any:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return getattr(super(cls, self), name)(*args, **kwargs)

        return method

    cls = type("Counting", (base,), {name: counted(name) for name in HOOKS})
    return cls(), calls


def _loop(fabric_mod: Any, precision_base: type) -> dict[str, int]:
    plugin, calls = _counting(precision_base)
    fabric = fabric_mod.Fabric(accelerator="cpu", devices=1, plugins=[plugin])
    torch.manual_seed(0)
    with fabric.init_module():
        model = nn.Linear(3, 1)
    model, opt = fabric.setup(model, torch.optim.SGD(model.parameters(), lr=0.1))
    for _ in range(3):
        loss = model(torch.randn(4, 3)).sum()
        fabric.backward(loss)
        fabric.clip_gradients(model, opt, max_norm=1.0)
        fabric.clip_gradients(model, opt, clip_val=0.5)
        opt.step()
        opt.zero_grad()
    with fabric.autocast(), fabric.init_tensor():
        pass
    return dict(calls)


def test_a_precision_plugins_hooks_run_as_in_lightning_fabric() -> None:
    ours = _loop(af, ap.Precision)
    assert ours == _loop(lf, lp.Precision)
    assert ours["optimizer_step"] == 3 and ours["pre_backward"] == 3 and ours["unscale_gradients"] == 6


def _strategy_loop(fabric_mod: Any, strategy_base: type) -> list[Any]:
    log: list[Any] = []

    class Mine(strategy_base):  # type: ignore[misc, valid-type]
        def backward(self, tensor: Any, module: Any, *args: Any, **kwargs: Any) -> None:
            log.append(("backward", module is None))
            super().backward(tensor, module, *args, **kwargs)

        def optimizer_step(self, optimizer: Any, **kwargs: Any) -> Any:
            log.append(("optimizer_step", sorted(kwargs)))
            return super().optimizer_step(optimizer, **kwargs)

    fabric = fabric_mod.Fabric(strategy=Mine(device=torch.device("cpu")))
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    model, opt = fabric.setup(model, torch.optim.SGD(model.parameters(), lr=0.1))
    fabric.backward(model(torch.ones(2, 3)).sum(), model=model)
    opt.step()
    fabric.backward(model(torch.ones(2, 3)).sum())
    opt.step()
    log.append(round(float(model.weight.detach().sum()), 5))
    return log


def test_a_strategys_backward_and_optimizer_step_written_to_lightnings_form_are_called() -> None:
    ours = _strategy_loop(af, ast.SingleDeviceStrategy)
    assert ours == _strategy_loop(lf, ls.SingleDeviceStrategy)
    assert ("optimizer_step", []) in ours


def _io_calls(fabric_mod: Any, io_base: type, folder: Path) -> list[Any]:
    log: list[Any] = []

    class Recording(io_base):  # type: ignore[misc, valid-type]
        def save_checkpoint(self, checkpoint: Any, path: Any, storage_options: Any = None) -> None:
            log.append(("save", type(path).__name__, storage_options))
            super().save_checkpoint(checkpoint, path, storage_options)

        def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: Any = None) -> Any:
            log.append(("load", type(path).__name__, weights_only))
            return super().load_checkpoint(path, map_location=map_location, weights_only=weights_only)

    fabric = fabric_mod.Fabric(accelerator="cpu", devices=1, plugins=[Recording()])
    model = fabric.setup(nn.Linear(2, 2))
    path = os.path.join(folder, f"{fabric_mod.__name__}.ckpt")
    fabric.save(path, {"model": model, "n": 1})
    remainder = fabric.load(path, {"model": model})
    log.append(remainder)
    return log


def test_a_users_checkpoint_io_gets_the_path_and_weights_only_as_given(tmp_path: Path) -> None:
    ours = _io_calls(af, ap.TorchCheckpointIO, tmp_path)
    assert ours == _io_calls(lf, lp.TorchCheckpointIO, tmp_path)
    assert ours[:2] == [("save", "str", None), ("load", "str", None)]


def _collective_calls(fabric_mod: Any, strategy_base: type) -> list[Any]:
    log: list[Any] = []

    class Mine(strategy_base):  # type: ignore[misc, valid-type]
        def barrier(self, name: Any = None) -> None:
            log.append(("barrier", name))

        def broadcast(self, obj: Any, src: int = 0) -> Any:
            log.append(("broadcast", obj, src))
            return obj

        def all_gather(self, tensor: Any, group: Any = None, sync_grads: bool = False) -> Any:
            log.append(("all_gather", tensor.tolist(), sync_grads))
            return tensor

        def all_reduce(self, tensor: Any, group: Any = None, reduce_op: Any = "mean") -> Any:
            log.append(("all_reduce", tensor.tolist(), reduce_op))
            return tensor * 2

    fabric = fabric_mod.Fabric(strategy=Mine(device=torch.device("cpu")))
    fabric.barrier("here")
    fabric.broadcast("x", src=0)
    fabric.all_gather({"a": torch.tensor(1), "b": [torch.tensor(2)]}, sync_grads=True)
    reduced = fabric.all_reduce({"a": torch.tensor(3)}, reduce_op="sum")
    log.append(reduced["a"].item())
    return log


def test_collectives_run_through_the_strategys_methods() -> None:
    ours = _collective_calls(af, ast.SingleDeviceStrategy)
    assert ours == _collective_calls(lf, ls.SingleDeviceStrategy)
    assert ours[0] == ("barrier", "here") and ours[-1] == 6


def _bare_backward(fabric_mod: Any, precision: str) -> str | None:
    fabric = fabric_mod.Fabric(accelerator="cpu", devices=1, precision=precision)
    model = fabric.setup(nn.Linear(2, 2))
    output = model(torch.ones(1, 2))
    try:
        output.sum().backward()
    except RuntimeError as error:
        return "refused" if "requires you to call `fabric.backward(loss)`" in str(error) else str(error)
    return None


def test_a_bare_loss_backward_is_refused_where_lightning_refuses_it() -> None:
    for precision in ("32-true", "bf16-true", "bf16-mixed"):
        assert _bare_backward(af, precision) == _bare_backward(lf, precision), precision
    assert _bare_backward(af, "bf16-mixed") == "refused" and _bare_backward(af, "32-true") is None


def test_a_strategy_saves_with_the_path_positional_and_the_state_by_keyword(tmp_path: Path) -> None:
    model = nn.Linear(2, 2)
    for strategy in (ast.SingleDeviceStrategy(), ls.SingleDeviceStrategy()):
        target = tmp_path / type(strategy).__module__
        strategy.save_checkpoint(target, state={"model": model, "n": 1})
        other = nn.Linear(2, 2)
        assert strategy.load_checkpoint(target, {"model": other}) == {"n": 1}
        assert torch.equal(other.weight, model.weight)


def test_a_writer_whose_save_was_replaced_on_the_object_gets_lightnings_call(tmp_path: Path) -> None:
    def saved_with(strategy: Any) -> Any:
        calls: list[Any] = []
        strategy.checkpoint_io.save_checkpoint = lambda **kwargs: calls.append(kwargs)
        strategy.save_checkpoint(tmp_path, {"n": 1})
        return calls

    ours = saved_with(ast.SingleDeviceStrategy())
    assert ours == saved_with(ls.SingleDeviceStrategy())
    assert ours == [{"checkpoint": {"n": 1}, "path": tmp_path, "storage_options": None}]
