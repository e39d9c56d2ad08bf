"""Fabric's objects and methods on one process, each beside what Lightning Fabric 2.6 does with the same code."""

from __future__ import annotations

import contextlib
import csv
import os
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from accelplug import MisconfigurationException
from accelplug.fabric import Fabric, is_wrapped, seed_everything
from accelplug.fabric.loggers import CSVLogger
from accelplug.fabric.plugins import BF16MixedPrecision
from accelplug.precision.base import NumericPrecision
from tests.callbacks.parity import quiet_lightning

from . import loops

lightning_fabric = pytest.importorskip(
    "lightning.fabric", reason="the parity tests compare against lightning, not installed here"
)


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


class Probe(torch.nn.Module):
    """Records the dtypes its forward sees (input, autocast, a fresh tensor) and keeps a custom attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.hidden_size = 2
        self.seen: list[tuple[str, ...]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.lin(x)
        self.seen.append((str(x.dtype), str(out.dtype), str(torch.zeros(1).dtype)))
        return out

    def score(self, x: torch.Tensor) -> torch.Tensor:
        return self(x).sum()

    def describe(self) -> str:
        return f"probe of {self.hidden_size}"


def _both(**options: Any) -> list[Any]:
    return [framework(accelerator="cpu", devices=1, **options) for framework in (lightning_fabric.Fabric, Fabric)]


@pytest.mark.parametrize("precision", ["32-true", "bf16-mixed", "16-mixed", "64-true", "bf16-true", "16-true"])
def test_forward_sees_the_dtypes_lightning_fabric_gives_it(precision: str) -> None:
    outputs = []
    # '16-mixed' on the CPU: both Fabrics say they use bf16-mixed instead
    swapped = pytest.warns(UserWarning, match="16-mixed") if precision == "16-mixed" else contextlib.nullcontext()
    with swapped:
        fabrics = _both(precision=precision)
    for fabric in fabrics:
        torch.manual_seed(0)
        model = fabric.setup(Probe())
        out = model(torch.randn(4, 3))
        outputs.append((model.module.seen, str(out.dtype), str(next(model.parameters()).dtype)))
    assert outputs[1] == outputs[0]


def test_the_wrapped_module_passes_attributes_and_keeps_the_users_state_dict_keys() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    original = Probe()
    model, opt = fabric.setup(original, torch.optim.SGD(original.parameters(), lr=0.1))
    assert is_wrapped(model) and is_wrapped(opt) and not is_wrapped(original)
    assert model.module is original
    assert model.hidden_size == 2 and model.describe() == "probe of 2"
    model.hidden_size = 5
    assert original.hidden_size == 5
    model.new_attribute = "set through the wrapper"
    assert original.new_attribute == "set through the wrapper"
    assert list(model.state_dict()) == list(original.state_dict()) == ["lin.weight", "lin.bias"]
    model.load_state_dict({k: torch.zeros_like(v) for k, v in original.state_dict().items()})
    assert float(original.lin.weight.detach().abs().sum()) == 0.0
    assert model.device == torch.device("cpu")
    theirs = lightning_fabric.Fabric(accelerator="cpu", devices=1).setup(Probe())
    assert list(theirs.state_dict()) == list(model.state_dict())


def test_the_wrapped_optimizer_is_still_its_class_and_steps_through_the_precision() -> None:
    class Counting(NumericPrecision):
        name = "32-counting"
        steps = 0

        def step(self, optimizer: torch.optim.Optimizer, closure: Any = None) -> Any:
            type(self).steps += 1
            return super().step(optimizer, closure)

    fabric = Fabric(accelerator="cpu", devices=1, plugins=Counting("cpu"))
    original = Probe()
    sgd = torch.optim.SGD(original.parameters(), lr=0.1)
    model, opt = fabric.setup(original, sgd)
    assert isinstance(opt, torch.optim.SGD) and opt.optimizer is sgd
    opt.param_groups[0]["lr"] = 0.5
    assert sgd.param_groups[0]["lr"] == 0.5
    fabric.backward(model(torch.randn(2, 3)).sum())
    assert original.lin.weight.grad is not None
    opt.step()
    opt.zero_grad()
    assert original.lin.weight.grad is None and Counting.steps == 1
    assert opt.state_dict()["param_groups"][0]["lr"] == 0.5


def test_a_loss_scaling_precision_refuses_loss_backward_and_scales_fabric_backward() -> None:
    class Scaled(NumericPrecision):
        name = "32-scaled"

        @property
        def needs_help_with_steps(self) -> bool:
            return True

        def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
            (loss * 4.0).backward(*args, **kwargs)

        def unscale(self, optimizer: torch.optim.Optimizer) -> None:
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.div_(4.0)

    fabric = Fabric(accelerator="cpu", devices=1, plugins=[Scaled("cpu")])
    original = Probe()
    model, opt = fabric.setup(original, torch.optim.SGD(original.parameters(), lr=0.1))
    with pytest.raises(MisconfigurationException, match=r"fabric\.backward\(loss\)"):
        model(torch.ones(1, 3)).sum().backward()
    original.lin.weight.grad = None
    fabric.backward(model(torch.ones(1, 3)).sum())
    assert torch.equal(original.lin.weight.grad, torch.ones(2, 3) * 4.0)
    norm = fabric.clip_gradients(model, opt, max_norm=100.0)
    assert torch.equal(original.lin.weight.grad, torch.ones(2, 3)), "clipping unscaled first"
    assert norm is not None and float(norm) == pytest.approx(8**0.5), "six weight and two bias gradients of 1"
    opt.step()
    assert torch.equal(original.lin.weight.grad, torch.ones(2, 3)), "not unscaled twice"


def test_clipping_returns_the_norm_torch_computes_and_clips_values() -> None:
    for fabric in _both():
        torch.manual_seed(0)
        original = Probe()
        model, opt = fabric.setup(original, torch.optim.SGD(original.parameters(), lr=0.1))
        fabric.backward(model(torch.randn(4, 3)).pow(2).sum())
        expected = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in original.parameters()]))
        norm = fabric.clip_gradients(model, opt, max_norm=1e-3)
        assert float(norm) == pytest.approx(float(expected), rel=1e-6)
        fabric.clip_gradients(model, opt, clip_val=1e-5)
        assert max(float(p.grad.abs().max()) for p in original.parameters()) <= 1e-5


def test_marked_forward_methods_are_checked_like_lightning_fabric() -> None:
    model = Fabric(accelerator="cpu", devices=1).setup(Probe())
    model.mark_forward_method("score")
    model.mark_forward_method(model.module.describe)
    assert float(model.score(torch.ones(1, 3)).detach()) == float(model.module.score(torch.ones(1, 3)).detach())
    for bad, words in ((3, "expected a method"), ("forward", "forward always"), ("nosuch", "does not exist")):
        with pytest.raises(MisconfigurationException, match=words):
            model.mark_forward_method(bad)


def test_init_module_and_init_tensor_create_on_the_device_in_the_precisions_dtype() -> None:
    fabric = Fabric(accelerator="cpu", devices=1, precision="bf16-true")
    with fabric.init_module():
        model = torch.nn.Linear(2, 2)
    with fabric.init_tensor():
        tensor = torch.zeros(3)
    assert model.weight.dtype == tensor.dtype == torch.bfloat16
    assert torch.get_default_dtype() == torch.float32
    untouched = torch.full((2,), 7.0)
    with Fabric(accelerator="cpu", devices=1).init_module(empty_init=True):
        torch.nn.init.constant_(untouched, 5.0)
    assert untouched.tolist() == [7.0, 7.0], "empty_init skips torch.nn.init"
    with Fabric(accelerator="cpu", devices=1).init_module(empty_init=False):
        torch.nn.init.constant_(untouched, 5.0)
    assert untouched.tolist() == [5.0, 5.0]


@pytest.mark.parametrize(("strategy", "devices", "num_nodes"), [("ddp", 2, 1), ("ddp_spawn", 2, 1), ("ddp", 2, 2)])
def test_a_parallel_fabric_knows_its_world_size_before_it_launches(strategy: str, devices: int, num_nodes: int) -> None:
    """Devices x nodes from construction on, as Lightning's (code that sizes its data before ``launch`` relies
    on it); this process is rank 0 of it until launched."""
    seen = [
        (fabric.world_size, fabric.global_rank, fabric.local_rank, fabric.node_rank, fabric.is_global_zero)
        for fabric in (
            framework(accelerator="cpu", strategy=strategy, devices=devices, num_nodes=num_nodes)
            for framework in (lightning_fabric.Fabric, Fabric)
        )
    ]
    assert seen[0] == seen[1] == (devices * num_nodes, 0, 0, 0, True)


def test_autocast_to_device_and_the_rank_properties_of_one_process() -> None:
    fabric = Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")
    with fabric.autocast():
        product = torch.ones(2, 2) @ torch.ones(2, 2)
    assert product.dtype == torch.bfloat16
    moved = fabric.to_device({"x": [torch.ones(1)], "n": 3})
    assert moved["x"][0].device == fabric.device and moved["n"] == 3
    assert (fabric.global_rank, fabric.local_rank, fabric.node_rank, fabric.world_size) == (0, 0, 0, 1)
    assert fabric.is_global_zero and fabric.device == torch.device("cpu")
    assert fabric.all_gather(torch.tensor([1.0])).tolist() == [1.0]
    assert fabric.all_reduce(torch.tensor(2.0)).item() == 2.0
    assert fabric.broadcast("x") == "x"
    fabric.barrier()
    with fabric.rank_zero_first():
        pass


def test_seed_everything_is_one_function_and_seeds_workers_from_fabric(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelplug

    monkeypatch.setenv("PL_SEED_WORKERS", "0")
    assert seed_everything is accelplug.seed_everything
    assert Fabric.seed_everything(3, verbose=False) == 3
    assert os.environ["PL_SEED_WORKERS"] == "1" and os.environ["PL_GLOBAL_SEED"] == "3"


def test_a_loader_set_up_after_seed_everything_seeds_its_workers_as_lightning_fabrics_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lightning.fabric.utilities.seed import pl_worker_init_function

    from accelplug.data.workers import worker_init_function

    monkeypatch.delenv("PL_SEED_WORKERS", raising=False)
    loaders = [fabric.setup_dataloaders(DataLoader(loops.dataset(4))) for fabric in _both()]
    assert [loader.worker_init_fn for loader in loaders] == [None, None]
    Fabric.seed_everything(3, verbose=False)
    theirs, ours = (fabric.setup_dataloaders(DataLoader(loops.dataset(4))) for fabric in _both())
    assert theirs.worker_init_fn.func is pl_worker_init_function and theirs.worker_init_fn.keywords == {"rank": 0}
    assert ours.worker_init_fn.func is worker_init_function and ours.worker_init_fn.keywords == {"rank": 0}


def test_creating_and_clipping_go_through_the_strategys_methods() -> None:
    """A strategy sees Lightning Fabric's calls: ``module_init_context``, ``tensor_init_context``,
    ``clip_gradients_norm`` and ``clip_gradients_value``, with the user's module and optimizer."""
    from accelplug.strategies.single_device import SingleDeviceStrategy

    calls: list[tuple[Any, ...]] = []

    class Recording(SingleDeviceStrategy):
        def module_init_context(self, empty_init: bool | None = None) -> Any:
            calls.append(("module_init_context", empty_init))
            return super().module_init_context(empty_init)

        def tensor_init_context(self, empty_init: bool | None = None) -> Any:
            calls.append(("tensor_init_context",))
            return super().tensor_init_context(empty_init)

        def clip_gradients_norm(self, module: Any, optimizer: Any, max_norm: float, **options: Any) -> Any:
            calls.append(("clip_gradients_norm", module, optimizer, max_norm, options))
            return super().clip_gradients_norm(module, optimizer, max_norm, **options)

        def clip_gradients_value(self, module: Any, optimizer: Any, clip_val: float) -> None:
            calls.append(("clip_gradients_value", module, optimizer, clip_val))
            super().clip_gradients_value(module, optimizer, clip_val)

    fabric = Fabric(accelerator="cpu", strategy=Recording(), precision="bf16-true")
    with fabric.init_module():
        original = Probe()
    with fabric.init_tensor():
        x = torch.ones(2, 3)
    assert original.lin.weight.dtype == x.dtype == torch.bfloat16
    optimizer = torch.optim.SGD(original.parameters(), lr=0.1)
    model, opt = fabric.setup(original, optimizer)
    fabric.backward(model(x).float().sum())
    assert fabric.clip_gradients(model, opt, max_norm=2) is not None
    assert fabric.clip_gradients(model, opt, clip_val=0.5) is None
    assert calls == [
        ("module_init_context", None),
        ("tensor_init_context",),
        ("clip_gradients_norm", original, optimizer, 2, {"norm_type": 2.0, "error_if_nonfinite": True}),
        ("clip_gradients_value", original, optimizer, 0.5),
    ]


def test_a_script_started_by_lightnings_fabric_cli_may_not_launch_again(monkeypatch: pytest.MonkeyPatch) -> None:
    class WithRun(Fabric):
        def run(self) -> None:
            pass

    monkeypatch.setenv("LT_CLI_USED", "1")  # what `fabric run script.py` sets
    for framework in (lightning_fabric.Fabric, Fabric):
        with pytest.raises(RuntimeError, match=r"Calling  `\.launch\(\)` again is not allowed"):
            framework(accelerator="cpu", devices=1).launch()
    with pytest.raises(TypeError, match=r"Overriding `Fabric\.run\(\)` and launching from the CLI is not allowed"):
        WithRun(accelerator="cpu", devices=1)


def test_callbacks_get_the_keyword_arguments_their_signature_takes() -> None:
    calls: list[tuple[str, Any]] = []

    class Recorder:
        not_callable = 3

        def on_epoch(self, epoch: int) -> None:
            calls.append(("on_epoch", epoch))

        def on_anything(self, **kwargs: Any) -> None:
            calls.append(("on_anything", sorted(kwargs)))

        def on_after_setup(self, fabric: Any, module: Any) -> None:
            calls.append(("on_after_setup", type(module).__name__))

        def on_after_optimizer_step(self, strategy: Any, optimizer: Any) -> None:
            calls.append(("on_after_optimizer_step", type(optimizer).__name__))

    fabric = Fabric(accelerator="cpu", devices=1, callbacks=Recorder())
    original = Probe()
    model, opt = fabric.setup(original, torch.optim.SGD(original.parameters(), lr=0.1))
    fabric.call("on_epoch", epoch=1, loss=0.5)
    fabric.call("on_anything", a=1, b=2)
    fabric.call("no_such_hook", x=1)
    with pytest.warns(UserWarning, match="Skipping the callback `Recorder.not_callable` because it is not callable"):
        fabric.call("not_callable")
    fabric.backward(model(torch.ones(1, 3)).sum())
    opt.step()
    assert calls == [
        ("on_after_setup", "FabricModule"),
        ("on_epoch", 1),
        ("on_anything", ["a", "b"]),
        ("on_after_optimizer_step", "SGD"),
    ]


def test_log_reaches_every_logger_and_the_csv_matches_lightning_fabrics(tmp_path: Path) -> None:
    rows = []
    for framework, logger_cls in ((lightning_fabric.Fabric, lightning_fabric.loggers.CSVLogger), (Fabric, CSVLogger)):
        logger = logger_cls(tmp_path / framework.__module__, name="run")
        fabric = framework(accelerator="cpu", devices=1, loggers=[logger])
        assert fabric.logger is logger and fabric.loggers == [logger]
        fabric.log("loss", torch.tensor(0.5), step=0)
        fabric.log_dict({"loss": 0.25, "acc": torch.tensor(1.0)}, step=1)
        fabric.log("lr", 0.1)
        logger.finalize("success")
        with open(Path(logger.log_dir) / "metrics.csv", newline="") as handle:
            rows.append(list(csv.reader(handle)))
        assert Path(logger.log_dir).name == "version_0"
    assert rows[1] == rows[0]
    with pytest.raises(MisconfigurationException, match=r"does not contain a single element, thus it cannot be"):
        Fabric(accelerator="cpu", devices=1).log("x", torch.ones(3))


def test_dataloaders_move_batches_and_keep_the_loader_attributes() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    loader = fabric.setup_dataloaders(DataLoader(loops.dataset(8), batch_size=4))
    assert is_wrapped(loader) and loader.batch_size == 4 and len(loader) == 2
    assert [x.shape[0] for x, _ in loader] == [4, 4]
    first, second = fabric.setup_dataloaders(DataLoader(loops.dataset(8)), DataLoader(loops.dataset(4)))
    assert (len(first), len(second)) == (8, 4)


def test_a_precision_passed_as_a_plugin_is_the_one_used() -> None:
    outputs = []
    for fabric in (
        Fabric(accelerator="cpu", devices=1, plugins=BF16MixedPrecision("cpu")),
        Fabric(accelerator="cpu", devices=1, precision="bf16-mixed"),
    ):
        torch.manual_seed(0)
        model = fabric.setup(Probe())
        outputs.append(model(torch.ones(1, 3)))
        assert model.module.seen == [("torch.bfloat16", "torch.bfloat16", "torch.float32")]
    assert torch.equal(outputs[0], outputs[1])


def test_a_subclass_run_method_runs_launched() -> None:
    class MyFabric(Fabric):
        def run(self, factor: int) -> int:
            return factor * (self.world_size + 1)

    assert MyFabric(accelerator="cpu", devices=1).run(21) == 42


def test_accelplug_exports_fabric_lazily() -> None:
    import accelplug

    assert accelplug.Fabric is Fabric


def test_a_compiled_module_runs_compiled_and_saves_the_users_keys() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    torch.manual_seed(0)
    original = Probe()
    compiled = torch.compile(original, backend="eager")
    model = fabric.setup(compiled)
    assert model.module is original
    assert torch.equal(model(torch.ones(1, 3)), original(torch.ones(1, 3)))
    assert list(model.state_dict()) == ["lin.weight", "lin.bias"]


def test_move_to_device_false_leaves_placement_to_the_user() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    model = fabric.setup(Probe(), move_to_device=False)
    loader = fabric.setup_dataloaders(DataLoader(loops.dataset(4), batch_size=2), move_to_device=False)
    assert model.device == torch.device("cpu") and loader.device is None
    assert len(list(loader)) == 2


def test_no_backward_sync_with_a_distributed_strategy_that_cannot_skip_the_sync_warns_as_lightning_fabric() -> None:
    import torch.distributed as dist

    from accelplug.errors import PossibleUserWarning
    from accelplug.strategies.base import Strategy
    from accelplug.strategies.ddp import DDPStrategy

    class SyncsEveryBackward(DDPStrategy):  # a distributed strategy written without a way to skip the sync
        no_gradient_sync = Strategy.no_gradient_sync
        wrap_module = Strategy.wrap_module  # no DDP wrapper: this test runs no backward

    fabric = Fabric(accelerator="cpu", devices=1, strategy=SyncsEveryBackward())
    fabric.launch()
    try:
        model = fabric.setup(torch.nn.Linear(2, 2))
        phrase = "The `SyncsEveryBackward` does not support skipping the gradient synchronization"
        for enabled in (True, False):  # Lightning Fabric warns either way: the call does nothing with this strategy
            with pytest.warns(PossibleUserWarning, match=phrase), fabric.no_backward_sync(model, enabled=enabled):
                pass
    finally:
        if dist.is_initialized():  # the one-process group this test's launch made
            dist.destroy_process_group()


def test_no_backward_sync_on_one_device_does_nothing_and_does_not_warn() -> None:
    import warnings

    fabric = Fabric(accelerator="cpu", devices=1)
    model = fabric.setup(torch.nn.Linear(2, 2))
    with warnings.catch_warnings(record=True) as caught, fabric.no_backward_sync(model):
        warnings.simplefilter("always")
    assert caught == []
