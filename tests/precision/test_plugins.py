"""The precision and layer-sync plugins' own rules: Lightning's import paths, refusals, checkpoints, the lean path."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.errors import MisconfigurationException
from accelplug.plugins import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    LayerSync,
    MixedPrecision,
    Precision,
    TorchSyncBatchNorm,
    TransformerEnginePrecision,
)
from accelplug.plugins.precision import Float8Precision
from tests.callbacks.parity import data, make_module
from tests.processes import REPO, child_env

NAMES = (
    "BitsandbytesPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TransformerEnginePrecision",
)


def _trainer(**options: Any) -> accelplug.Trainer:
    settings = {"accelerator": "cpu", "devices": 1, "logger": False, "enable_progress_bar": False}
    return accelplug.Trainer(**{**settings, **options})


@pytest.mark.parametrize(
    "path",
    [
        "accelplug.plugins",
        "accelplug.plugins.precision",
        "accelplug.pytorch.plugins",
        "accelplug.pytorch.plugins.precision",
    ],
)
def test_lightnings_import_paths_hold_the_same_classes(path: str) -> None:
    module = importlib.import_module(path)
    for name in NAMES:
        assert getattr(module, name) is getattr(accelplug.plugins, name), (path, name)
    if path.endswith("plugins"):
        assert module.LayerSync is LayerSync and module.TorchSyncBatchNorm is TorchSyncBatchNorm
    layer_sync = importlib.import_module(path.replace(".precision", "") + ".layer_sync")
    assert layer_sync.TorchSyncBatchNorm is TorchSyncBatchNorm


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: MixedPrecision("bf16-mixd", "cpu"), r"precision='bf16-mixd'.*Did you mean 'bf16-mixed'"),
        (lambda: MixedPrecision("bf16-true", "cpu"), r"Precision must be '16-mixed' or 'bf16-mixed'"),
        (lambda: MixedPrecision("bf16-mixed", "cpux"), r"device='cpux'.*Did you mean 'cpu'"),
        (lambda: MixedPrecision("bf16-mixed", 3), r"device=3\) is not a device type"),
        (lambda: MixedPrecision("bf16-mixed", "cpu", torch.amp.GradScaler("cpu")), r"does not use a scaler"),
        (lambda: MixedPrecision("16-mixed", "cpu", scaler="scaler"), r"scaler='scaler'.*not a gradient scaler"),
        (lambda: HalfPrecision("bf16_true"), r"precision='bf16_true'.*Did you mean 'bf16-true'"),
        (lambda: HalfPrecision("16-mixed"), r"Accepted: '16-true', 'bf16-true'"),
        (lambda: FSDPPrecision("bf16-mix"), r"not supported in FSDP.*Did you mean 'bf16-mixed'"),
        (lambda: FSDPPrecision("bf16-mixed", scaler=object()), r"does not use a scaler"),
        (lambda: BitsandbytesPrecision("nf5"), r"mode='nf5'.*Did you mean 'nf4'"),
        (lambda: BitsandbytesPrecision("nf4", dtype="bf16"), r"dtype='bf16'\) is invalid"),
        (lambda: BitsandbytesPrecision("nf4", ignore_modules="lm_head"), r"ignore_modules='lm_head'"),
        (lambda: TransformerEnginePrecision(weights_dtype=torch.int8), r"weights_dtype=torch.int8\) is invalid"),
        (lambda: TransformerEnginePrecision(weights_dtype=torch.bfloat16, replace_layers="yes"), r"replace_layers"),
        (lambda: Float8Precision(ignore_modules="output"), r"ignore_modules='output'\) is invalid"),
    ],
)
def test_bad_arguments_are_named_with_what_is_accepted(make: Any, words: str) -> None:
    with pytest.raises(MisconfigurationException, match=words):
        make()


@pytest.mark.parametrize(
    ("make", "package"),
    [
        (lambda: BitsandbytesPrecision("nf4"), "bitsandbytes"),
        (lambda: BitsandbytesPrecision("int8", dtype=torch.float16, ignore_modules={"lm_head"}), "bitsandbytes"),
        (lambda: TransformerEnginePrecision(weights_dtype=torch.bfloat16), "transformer_engine"),
        (lambda: Float8Precision(ignore_modules={"lm_head"}), "torchao"),
    ],
)
def test_a_plugin_whose_package_is_missing_names_it(make: Any, package: str) -> None:
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    with pytest.raises(MisconfigurationException, match=rf"needs the '{package}' package.*pip install"):
        make()


def test_a_typo_in_precision_beside_a_plugin_is_named_and_any_precision_beside_one_refused() -> None:
    with pytest.raises(MisconfigurationException, match=r"Received both `precision=bf16-mixed` and `plugins="):
        _trainer(precision="bf16-mixed", plugins=[MixedPrecision("bf16-mixed", "cpu")])
    with pytest.raises(MisconfigurationException, match=r"Received both `precision=32-true`"):
        _trainer(precision="32-true", plugins=[DoublePrecision()])
    with pytest.raises(MisconfigurationException, match=r"two|2 objects of one kind"):
        _trainer(plugins=[DoublePrecision(), Precision()])
    with pytest.raises(MisconfigurationException, match=r"precision='bf16-mixd'.*Did you mean 'bf16-mixed'"):
        _trainer(precision="bf16-mixd")


def test_lightning_refuses_a_precision_beside_a_plugin_too() -> None:
    lightning = pytest.importorskip("lightning")
    with pytest.raises(ValueError, match=r"Received both `precision=32-true` and `plugins="):
        lightning.Trainer(accelerator="cpu", precision="32-true", plugins=[lightning.pytorch.plugins.DoublePrecision()])


def test_the_trainer_names_follow_the_plugin() -> None:
    plugin = HalfPrecision("bf16-true")
    trainer = _trainer(plugins=[plugin])
    assert trainer.precision_plugin is plugin and trainer.strategy.precision_plugin is plugin
    assert trainer.precision == "bf16-true"
    assert trainer.selection.precision == "bf16-true"


class _Own(Precision):
    """A user's plugin with its own name that changes nothing (Lightning's base: float32)."""

    precision = "my-own"


def test_a_users_own_precision_name_is_reported_and_trains_in_float32(tmp_path: Path) -> None:
    trainer = _trainer(plugins=[_Own()], max_epochs=1, default_root_dir=tmp_path, enable_checkpointing=False)
    assert trainer.precision == "my-own" and trainer.selection.precision == "32-true"
    module = make_module(accelplug, validation=False)
    trainer.fit(module)
    assert module.layer.weight.dtype == torch.float32


def _paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from accelplug.trainer.loops.fit import FitLoop

    seen: list[str] = []
    run = FitLoop.run

    def record(self: FitLoop) -> Any:
        seen.append(self.batch_step.__name__)
        return run(self)

    monkeypatch.setattr(FitLoop, "run", record)
    return seen


class _Stepping(Precision):
    def optimizer_step(self, optimizer: Any, model: Any, closure: Any, **kwargs: Any) -> Any:
        return super().optimizer_step(optimizer, model, closure, **kwargs)


@pytest.mark.parametrize(
    ("plugin", "path"),
    [
        (Precision(), "fast_batch"),
        (MixedPrecision("bf16-mixed", "cpu"), "fast_batch"),
        (DoublePrecision(), "fast_batch"),
        (_Stepping(), "general_batch"),
    ],
)
def test_a_plugin_that_rewrites_nothing_keeps_the_lean_path(
    plugin: Precision, path: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _paths(monkeypatch)
    trainer = _trainer(plugins=[plugin], max_epochs=1, default_root_dir=tmp_path, enable_checkpointing=False)
    trainer.fit(make_module(accelplug, validation=False))
    assert seen == [path]
    assert plugin._loop is None  # lent to the plugin for the fit only


def test_the_scaler_a_mixed_plugin_is_given_is_the_one_that_scales_and_is_checkpointed(tmp_path: Path) -> None:
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**7, growth_interval=2)
    plugin = MixedPrecision("16-mixed", "cpu", scaler=scaler)
    assert plugin.scaler is scaler and plugin.numerics.scaler is scaler
    trainer = _trainer(plugins=[plugin], max_epochs=1, default_root_dir=tmp_path)
    trainer.fit(make_module(accelplug, validation=False))
    assert scaler.get_scale() == 2.0**10  # six clean steps, doubling every second one
    saved = torch.load(next(tmp_path.rglob("*.ckpt")), weights_only=False)
    assert saved["precision_state"]["scale"] == 2.0**10
    fresh = MixedPrecision("16-mixed", "cpu")
    fresh.load_state_dict(saved["precision_state"])
    assert fresh.scaler.get_scale() == 2.0**10


class _Converting(Precision):
    def convert_input(self, data: Any) -> Any:
        x, y = data
        return torch.zeros_like(x), y


def test_a_rewritten_convert_input_sees_every_batch_after_the_move(tmp_path: Path) -> None:
    sums: list[float] = []

    class Seeing(accelplug.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            sums.append(float(batch[0].abs().sum()))
            return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    trainer = _trainer(plugins=[_Converting()], max_epochs=1, default_root_dir=tmp_path, enable_checkpointing=False)
    trainer.fit(Seeing(), data())
    assert sums == [0.0] * 6


def test_sync_batchnorm_is_a_torch_sync_batchnorm_and_refused_beside_another_layer_sync() -> None:
    assert isinstance(_trainer(sync_batchnorm=True)._layer_sync, TorchSyncBatchNorm)
    given = TorchSyncBatchNorm()
    assert _trainer(plugins=[given], sync_batchnorm=True)._layer_sync is given
    assert _trainer()._layer_sync is None

    class Mine(LayerSync):
        def apply(self, model: torch.nn.Module) -> torch.nn.Module:
            return model

        def revert(self, model: torch.nn.Module) -> torch.nn.Module:
            return model

    with pytest.raises(
        MisconfigurationException, match=r"sync_batchnorm=True\)` and provided a `LayerSync` plugin \(`Mine`\)"
    ):
        _trainer(plugins=[Mine()], sync_batchnorm=True)
    with pytest.raises(MisconfigurationException, match=r"Fabric takes a Precision or a ClusterEnvironment"):
        accelplug.fabric.Fabric(accelerator="cpu", plugins=[Mine()])


def test_revert_undoes_apply_keeping_parameters_and_statistics() -> None:
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Sequential(torch.nn.BatchNorm1d(4))
    )
    model[1].running_mean.fill_(0.5)
    synced = TorchSyncBatchNorm().apply(model)
    assert isinstance(synced[1], torch.nn.SyncBatchNorm) and isinstance(synced[2][0], torch.nn.SyncBatchNorm)
    weight = synced[1].weight
    reverted = TorchSyncBatchNorm().revert(synced)
    assert not any(isinstance(m, torch.nn.SyncBatchNorm) for m in reverted.modules())
    assert reverted[1].weight is weight and torch.equal(reverted[1].running_mean, torch.full((4,), 0.5))
    reverted.eval()
    assert reverted(torch.randn(5, 3)).shape == (5, 4)


@pytest.mark.slow  # two forked DDP processes: about 15 s on a busy 2-core machine
def test_a_custom_layer_sync_is_applied_on_each_ddp_process(tmp_path: Path) -> None:
    job = REPO / "tests" / "precision" / "layer_sync_job.py"
    result = subprocess.run(
        [sys.executable, str(job), str(tmp_path)],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = sorted(p.name for p in tmp_path.glob("rank*.json"))
    assert ranks == ["rank0.json", "rank1.json"], (ranks, result.stderr[-2000:])
    seen = [json.loads((tmp_path / r).read_text()) for r in ranks]
    assert all("BatchNorm1d" in s["seen"] for s in seen)
    assert seen[0]["pid"] != seen[1]["pid"]


@pytest.mark.parametrize("precision", ["16", 16, "bf16"])
def test_mixed_precision_refuses_a_short_precision_name_with_lightnings_words(precision: object) -> None:
    from accelplug.pytorch.plugins import MixedPrecision

    expected = re.escape(
        f"Passed `MixedPrecision(precision={precision!r})`. Precision must be '16-mixed' or 'bf16-mixed'"
    )
    with pytest.raises(ValueError, match=expected):
        MixedPrecision(precision, "cpu")  # type: ignore[arg-type]


def test_the_trainers_mixed_precision_answers_its_device_type_as_lightnings_plugin_does() -> None:
    from accelplug import Trainer

    assert Trainer(precision="bf16-mixed", accelerator="cpu", logger=False).precision_plugin.device == "cpu"  # type: ignore[attr-defined]


def _cpu_scaler(scale: float) -> Any:
    return torch.amp.GradScaler("cpu", init_scale=scale)


def test_fsdp_precision_scales_the_loss_before_backward_as_lightnings_does() -> None:
    precision = FSDPPrecision("16-mixed", scaler=_cpu_scaler(4.0))
    assert float(precision.pre_backward(torch.tensor(1.5), None)) == 6.0


def test_fsdp_precision_steps_through_its_scaler_with_the_true_gradients() -> None:
    precision = FSDPPrecision("16-mixed", scaler=_cpu_scaler(8.0))
    weight = torch.nn.Parameter(torch.zeros(3))
    optimizer = torch.optim.SGD([weight], lr=0.5)

    def closure() -> torch.Tensor:
        loss = weight.sum()
        precision.scaler.scale(loss).backward()
        return loss

    precision.optimizer_step(optimizer, None, closure)
    assert torch.equal(weight.detach(), torch.full((3,), -0.5))  # the gradient 1.0 unscaled, then one SGD step


@pytest.mark.parametrize(
    ("precision", "dtype"),
    [("32-true", torch.float32), ("16-mixed", torch.float16), ("bf16-mixed", torch.bfloat16)],
)
def test_fsdp_precision_reports_its_dtypes_as_torchs_mixed_precision_config(precision: str, dtype: torch.dtype) -> None:
    config = FSDPPrecision(precision).mixed_precision_config
    assert (config.param_dtype, config.reduce_dtype, config.buffer_dtype) == (dtype, dtype, dtype)


@pytest.mark.parametrize(("precision", "dtype"), [("16-true", torch.float16), ("bf16-true", torch.bfloat16)])
def test_fsdp_precision_config_of_a_true_low_precision_warns_of_the_full_precision_copy(
    precision: str, dtype: torch.dtype
) -> None:
    plugin = FSDPPrecision(precision)
    with pytest.warns(UserWarning, match=f"FSDP with `{precision}` enables computation in lower precision"):
        config = plugin.mixed_precision_config
    assert config.param_dtype == config.buffer_dtype == dtype


def test_fsdp_precision_refuses_a_precision_fsdp_cannot_shard_in_lightnings_words() -> None:
    with pytest.raises(ValueError, match=re.escape("is not supported in FSDP. `precision` must be one of")):
        FSDPPrecision("64-true")


@pytest.mark.parametrize("owner", ["Trainer", "Fabric"])
def test_cpu_half_as_bf16(owner: str) -> None:
    """``precision="16-mixed"`` on the CPU runs as ``"bf16-mixed"``, with the warning Lightning's Trainer and Fabric
    give (float16 autocast on the CPU is slow and needs loss scaling)."""
    import lightning

    import accelplug

    said = {}
    for framework in (lightning, accelplug):
        with pytest.warns(UserWarning, match="AMP with fp16 is not supported on CPU") as seen:
            made = getattr(framework, owner)(accelerator="cpu", precision="16-mixed")
        plugin = made.precision_plugin if owner == "Trainer" else made.strategy.precision
        assert plugin.precision == "bf16-mixed"
        said[framework.__name__] = [str(w.message) for w in seen if "fp16" in str(w.message)]
    assert (
        said["accelplug"]
        == said["lightning"]
        == [
            f"You passed `{owner}(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not supported on CPU. "
            "Using `precision='bf16-mixed'` instead."
        ]
    )


@pytest.mark.parametrize("precision", ["bf16-mixed", "bf16-true", "64-true", "32-true"])
def test_the_trainers_precision_answers_lightnings_precision_attribute(precision: str) -> None:
    from accelplug import Trainer

    trainer = Trainer(precision=precision, accelerator="cpu", logger=False)
    assert trainer.precision_plugin.precision == precision == trainer.precision
