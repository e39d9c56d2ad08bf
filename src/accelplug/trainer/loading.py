"""Where a stage's data comes from, and getting it ready for this process.

Data comes, first hit wins, from the loaders passed to the Trainer method, from the datamodule's
``*_dataloader()`` method, or from the module's own. Each loader is checked (a Dataset, a generator or
a number is refused with what to pass instead), pinned for CUDA, and given a sharding sampler when
the strategy runs several processes (unless ``use_distributed_sampler=False``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader, SequentialSampler

from ..errors import MisconfigurationException
from ..loaders import pin_for_cuda, rebuild_loader
from .data import check_loader

if TYPE_CHECKING:
    from .run import Run

__all__ = ["has_loader_source", "is_datamodule", "prepare_loader", "resolve_loaders", "split_datamodule"]

_METHOD = {"fit": "train_dataloader", "validate": "val_dataloader", "test": "test_dataloader",
           "predict": "predict_dataloader"}  # fmt: skip
_ARGUMENT = {"fit": "train_dataloaders", "validate": "val_dataloaders / dataloaders", "test": "dataloaders",
             "predict": "dataloaders"}  # fmt: skip


def is_datamodule(obj: object) -> bool:
    """A LightningDataModule, or any object with its protocol (``*_dataloader`` methods, not itself iterable)."""
    from ..datamodule import LightningDataModule

    if isinstance(obj, LightningDataModule):
        return True
    if obj is None or isinstance(obj, DataLoader) or hasattr(obj, "__iter__"):
        return False
    return any(callable(getattr(obj, name, None)) for name in _METHOD.values())


def split_datamodule(loaders: Any, datamodule: Any, method: str) -> tuple[Any, Any]:
    """Lightning lets a datamodule be passed where the loaders go; also refuse passing both."""
    if datamodule is None and is_datamodule(loaders):
        return None, loaders
    if datamodule is not None:
        if not is_datamodule(datamodule):
            raise MisconfigurationException(
                f"{method}(datamodule={type(datamodule).__name__} object) is not a datamodule: expected a "
                "LightningDataModule (or an object with train_dataloader()/val_dataloader()/... methods)."
            )
        if loaders is not None:
            raise MisconfigurationException(
                f"{method}() got both data loaders and datamodule=; pass one of them (the datamodule provides "
                "the loaders through its *_dataloader() methods)."
            )
    return loaders, datamodule


def _source(stage: str, module: Any, datamodule: Any) -> tuple[Callable[[], Any] | None, str]:
    from ..datamodule import LightningDataModule
    from ..module import LightningModule
    from .hooks import defines

    name = _METHOD[stage]
    if datamodule is not None and defines(datamodule, name, LightningDataModule):
        return getattr(datamodule, name), f"{type(datamodule).__name__}.{name}()"
    if defines(module, name, LightningModule):
        return getattr(module, name), f"{type(module).__name__}.{name}()"
    return None, ""


def has_loader_source(stage: str, module: Any, datamodule: Any) -> bool:
    """Whether the datamodule or the module defines the ``*_dataloader()`` method for ``stage``."""
    return _source(stage, module, datamodule)[0] is not None


def resolve_loaders(
    stage: str, given: Any, module: Any, datamodule: Any, *, required: bool
) -> tuple[list[Any], Callable[[], Any] | None, str]:
    """The loaders for ``stage``, the method that made them (to reload them) and a name for messages."""
    if given is not None:
        return _as_list(given, _ARGUMENT[stage], stage), None, _ARGUMENT[stage]
    method, label = _source(stage, module, datamodule)
    if method is None:
        if required:
            raise MisconfigurationException(
                f"{stage}() needs data: pass {_ARGUMENT[stage].split(' / ')[-1]}=..., a datamodule, or define "
                f"{_METHOD[stage]}() on {type(module).__name__} (or its datamodule)."
            )
        return [], None, ""
    return _as_list(method(), label, stage), method, label


def _as_list(value: Any, what: str, stage: str) -> list[Any]:
    """One or several loaders; a list of batches (not of loaders) is itself one loader."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, DataLoader) for v in value):
        loaders = list(value)
    elif isinstance(value, dict) and value and all(isinstance(v, DataLoader) for v in value.values()):
        loaders = list(value.values())
    else:
        loaders = [value]
    if stage == "fit" and len(loaders) > 1:
        raise MisconfigurationException(
            f"{what} holds {len(loaders)} DataLoaders; fit() trains on one. Combine the datasets "
            "(torch.utils.data.ConcatDataset) into one DataLoader."
        )
    return [check_loader(loader, what) for loader in loaders]


def prepare_loader(run: Run, loader: Any, *, shuffle: bool = True) -> Any:
    """This process's view of ``loader``: pinned for CUDA, sharded across processes when distributed,
    then as the strategy feeds its device (``Strategy.process_dataloader``)."""
    if not shuffle and isinstance(loader, DataLoader) and loader.batch_size is not None:
        loader = rebuild_loader(loader, sampler=SequentialSampler(loader.dataset))  # type: ignore[arg-type]
    loader = pin_for_cuda(loader, run.device)
    if run.strategy.is_distributed and run.options.use_distributed_sampler:
        loader = run.strategy.prepare_dataloader(loader, shuffle_seed=run.options.seed or 0)
    return run.strategy.process_dataloader(loader)


def prepare_all(run: Run, loaders: Sequence[Any], *, shuffle: bool = True) -> list[Any]:
    return [prepare_loader(run, loader, shuffle=shuffle) for loader in loaders]
