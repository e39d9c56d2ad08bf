"""Old checkpoint files through accelplug's load paths, beside Lightning 2.6's: ``trainer.fit(ckpt_path=...)`` and
``load_from_checkpoint`` upgrade what they read, and ``pl_legacy_patch`` reads the classes old files pickled.

The old files are made from a file Lightning 2.6 wrote, put back into an older release's layout the way that
release wrote it (no loop counters before 1.6, the ``save_on_train_epoch_end`` part in ``ModelCheckpoint``'s state
key before 1.9), so both frameworks resume from the same bytes.
"""

from __future__ import annotations

import logging
import pickle
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.pytorch.utilities.migration import pl_legacy_patch
from accelplug.pytorch.utilities.parsing import AttributeDict
from tests.callbacks.parity import lightning, make_module, quiet_lightning

pytorch_lightning = pytest.importorskip("pytorch_lightning", reason="pickles a class under its old package name")


def _trainer(framework: Any, root: Path, max_epochs: int) -> Any:
    return framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=max_epochs,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=root,
    )


@pytest.fixture
def file_1_5(tmp_path: Path) -> Path:
    """A file as Lightning 1.5 wrote it after one epoch: no ``loops``, the old ``ModelCheckpoint`` state key."""
    torch.manual_seed(0)
    with quiet_lightning(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(does not have many workers|log_every_n_steps).*")
        trainer = _trainer(lightning, tmp_path / "written", max_epochs=1)
        trainer.fit(make_module(lightning))
        trainer.save_checkpoint(tmp_path / "2.6.ckpt")
    checkpoint = torch.load(tmp_path / "2.6.ckpt", weights_only=True)
    del checkpoint["loops"]
    checkpoint["pytorch-lightning_version"] = "1.5.10"
    old_key = "ModelCheckpoint{'monitor': None, 'mode': 'min', 'every_n_train_steps': 0, 'every_n_epochs': 1,"
    checkpoint["callbacks"] = {old_key + " 'train_time_interval': None, 'save_on_train_epoch_end': True}": {}}
    torch.save(checkpoint, tmp_path / "1.5.ckpt")
    return tmp_path / "1.5.ckpt"


def _resume(framework: Any, root: Path, ckpt: Path) -> tuple[Any, Any]:
    torch.manual_seed(1)
    model = make_module(framework)
    trainer = _trainer(framework, root, max_epochs=3)
    with quiet_lightning(framework), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(does not have many workers|log_every_n_steps).*")
        # the file holds a ModelCheckpoint state this Trainer has no callback for, on both sides
        warnings.filterwarnings("ignore", message="Be aware that when using `ckpt_path`, callbacks used to create")
        trainer.fit(model, ckpt_path=ckpt)
    return trainer, model


def test_fit_resumes_a_1_5_file_where_lightnings_resume_of_it_goes(file_1_5: Path, tmp_path: Path) -> None:
    theirs, their_model = _resume(lightning, tmp_path / "lightning", file_1_5)
    ours, our_model = _resume(accelplug, tmp_path / "accelplug", file_1_5)
    # Lightning 2.6 starts a file from before 1.6 at epoch 0 (its fit counts the epochs processed, which the
    # upgrade leaves at 0), keeping the file's 6 steps: three epochs of 6 follow
    assert (ours.global_step, ours.current_epoch) == (theirs.global_step, theirs.current_epoch) == (24, 3)
    torch.testing.assert_close(our_model.state_dict(), their_model.state_dict())


def test_load_from_checkpoint_upgrades_the_file_and_says_how_to_upgrade_it_on_disk(
    file_1_5: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loaded: list[dict[str, Any]] = []
    module_class = type(make_module(accelplug))

    class Recording(module_class):  # type: ignore[misc, valid-type]
        def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
            loaded.append(checkpoint)

    with caplog.at_level(logging.INFO, logger="accelplug.core.migration"):
        model = Recording.load_from_checkpoint(file_1_5)
    torch.testing.assert_close(model.state_dict(), torch.load(file_1_5, weights_only=True)["state_dict"])
    assert loaded[0]["pytorch-lightning_version"] == "2.6.6"
    assert loaded[0]["legacy_pytorch-lightning_version"] == "1.5.10"
    assert loaded[0]["loops"]["fit_loop"]["epoch_progress"]["current"]["completed"] == 1  # the file's epoch
    assert "python -m accelplug.pytorch.utilities.upgrade_checkpoint" in caplog.text


def _legacy_pickle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file whose pickle names ``pytorch_lightning``'s ``AttributeDict`` and a helper Lightning removed in 1.4
    (``utilities.argparse_utils._gpus_arg_default``, put back under its old name while the file is written)."""
    removed = types.ModuleType("pytorch_lightning.utilities.argparse_utils")

    def _gpus_arg_default(value: Any) -> Any:
        return value

    _gpus_arg_default.__module__ = removed.__name__
    _gpus_arg_default.__qualname__ = "_gpus_arg_default"
    removed._gpus_arg_default = _gpus_arg_default  # type: ignore[attr-defined]
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, removed.__name__, removed)
        hparams = pytorch_lightning.utilities.parsing.AttributeDict(lr=0.1, gpus=_gpus_arg_default)
        torch.save({"pytorch-lightning_version": "1.2.0", "hyper_parameters": hparams}, tmp_path / "legacy.ckpt")
    return tmp_path / "legacy.ckpt"


def test_pl_legacy_patch_reads_classes_an_old_file_pickled_as_accelplugs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _legacy_pickle(tmp_path, monkeypatch)
    with pytest.raises((ModuleNotFoundError, pickle.UnpicklingError)):
        torch.load(path, weights_only=False)  # without the patch the removed module is missing
    with (
        pytest.warns(UserWarning, match="Redirecting import of pytorch_lightning.utilities.parsing.AttributeDict"),
        pl_legacy_patch(),
    ):
        checkpoint = torch.load(path, weights_only=False)
    hparams = checkpoint["hyper_parameters"]
    assert type(hparams) is AttributeDict and hparams.lr == 0.1
    assert hparams.gpus("2") == "2"  # the stand-in returns its argument, as the removed helper did


def test_pl_legacy_patch_puts_the_unpickler_back_when_it_ends() -> None:
    before = pickle.Unpickler
    with pl_legacy_patch():
        assert pickle.Unpickler is not before
    assert pickle.Unpickler is before


def test_pl_legacy_patch_leaves_a_name_accelplug_lacks_where_the_file_says(tmp_path: Path) -> None:
    from pytorch_lightning.utilities.migration.utils import _RedirectingUnpickler  # any class accelplug lacks

    torch.save({"kept": _RedirectingUnpickler}, tmp_path / "lightning-object.ckpt")
    with pl_legacy_patch():
        checkpoint = torch.load(tmp_path / "lightning-object.ckpt", weights_only=False)
    assert checkpoint["kept"] is _RedirectingUnpickler
