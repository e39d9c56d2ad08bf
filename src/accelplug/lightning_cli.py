"""``LightningCLI``: a training script's command line and YAML config, read from the classes' signatures.

Lightning's ``lightning.pytorch.cli`` behaviour on accelplug's Trainer: ``python train.py fit --config c.yaml
--trainer.max_epochs=3`` builds the model, data module and Trainer from their ``__init__`` signatures
(jsonargparse), seeds, and runs the subcommand; ``run=False`` only builds them. The config each run used is
written as ``config.yaml`` into the run's log folder by :class:`SaveConfigCallback`, so a run can be repeated
with ``--config``. ``--optimizer``/``--lr_scheduler`` pick torch classes and replace the model's
``configure_optimizers``, as Lightning's does.

jsonargparse is an optional dependency (``pip install "accelplug[cli]"``); without it the module imports and
building a parser or a CLI raises :class:`CLINotInstalledError`, naming the package.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import sys
import warnings
from collections.abc import Callable, Iterable
from functools import partial, update_wrapper
from pathlib import Path
from types import MethodType
from typing import TYPE_CHECKING, Any, Union

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler
from torch.optim.lr_scheduler import ReduceLROnPlateau as _TorchReduceLROnPlateau

from . import __version__
from .accelerator import Accelerator
from .callbacks import Callback
from .core.datamodule import LightningDataModule
from .core.hparams import hyperparameters_given
from .core.module import LightningModule
from .core.saving import instantiate_module
from .distributed.rank_zero import rank_zero_warn
from .errors import MisconfigurationException
from .loggers.logger import Logger
from .profilers import Profiler
from .seed import seed_everything
from .strategies.base import Strategy
from .trainer import Trainer
from .trainer.options.defaults import is_unset

try:
    from jsonargparse import (  # type: ignore[attr-defined]  # re-exported names its stubs do not list
        ActionConfigFile,
        ArgumentParser,
        Namespace,
        class_from_function,
        register_unresolvable_import_paths,
    )

    # torch's classes name modules they cannot be imported from (pytorch/pytorch#74483): resolve them by torch's
    register_unresolvable_import_paths(torch)
    _HAVE_JSONARGPARSE = True
except ModuleNotFoundError:  # pragma: no cover - the test extra installs it; see test_cli_without_jsonargparse
    ArgumentParser = object  # type: ignore[assignment,misc]
    Namespace = dict  # type: ignore[assignment,misc]
    _HAVE_JSONARGPARSE = False

if TYPE_CHECKING:
    from jsonargparse import ArgumentParser, Namespace


def _import_classes_named_by_short_names() -> None:
    """jsonargparse resolves a class given without its module (``--trainer.logger=CSVLogger``, ``class_path:
    EarlyStopping``) among the subclasses imported so far. The callback, logger and profiler packages import their
    classes when first used, so the CLI imports the ones those packages used to import themselves."""
    from . import callbacks, loggers, profilers

    for package, names in (
        (callbacks, callbacks.__all__),
        (loggers, ("CSVLogger", "TensorBoardLogger")),
        (profilers, [class_name for _, class_name in profilers.PROFILER_NAMES.values()]),
    ):
        for name in names:
            getattr(package, name)


_import_classes_named_by_short_names()

__all__ = [
    "LIGHTNING_LOGO",
    "ArgsType",
    "CLINotInstalledError",
    "ConfigExistsError",
    "LRSchedulerCallable",
    "LRSchedulerType",
    "LRSchedulerTypeTuple",
    "LRSchedulerTypeUnion",
    "LightningArgumentParser",
    "LightningCLI",
    "OptimizerCallable",
    "ReduceLROnPlateau",
    "SaveConfigCallback",
    "cli_lightning_logo",
    "instantiate_class",
    "instantiate_module",
]

ArgsType = list[str] | dict[str, Any] | Namespace | None
#: what the optimizer arguments accept when no class is named: any torch optimizer
_AUTOMATIC = "AUTOMATIC"


class CLINotInstalledError(MisconfigurationException):
    """``LightningCLI`` was used without jsonargparse, the package that reads signatures into a parser."""

    def __init__(self) -> None:
        super().__init__(
            "LightningCLI needs the jsonargparse package with its signatures extra, which is not installed. "
            'Install it with: pip install "accelplug[cli]" (or pip install "jsonargparse[signatures]>=4.27").'
        )


def _require_jsonargparse() -> None:
    if not _HAVE_JSONARGPARSE:
        raise CLINotInstalledError()


class ReduceLROnPlateau(_TorchReduceLROnPlateau):
    """torch's ``ReduceLROnPlateau`` that also carries the metric it watches, so the CLI can hand it to the
    Trainer (``--lr_scheduler=ReduceLROnPlateau --lr_scheduler.monitor=val_loss``)."""

    def __init__(self, optimizer: Optimizer, monitor: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(optimizer, *args, **kwargs)
        self.monitor = monitor


#: The schedulers the CLI offers (``add_lr_scheduler_args``' default): torch's, with torch's ReduceLROnPlateau
#: only as the subclass above (one class answers to the name ``ReduceLROnPlateau``).
LRSchedulerTypeTuple = (LRScheduler, ReduceLROnPlateau)
#: A scheduler object of those kinds.
LRSchedulerTypeUnion = LRScheduler | ReduceLROnPlateau
#: A scheduler class of those kinds.
LRSchedulerType = type[LRScheduler] | type[ReduceLROnPlateau]
#: A model argument typed this way receives an optimizer factory from the CLI (``--model.optim=Adam``): the model
#: calls it with its parameters in ``configure_optimizers``.
OptimizerCallable = Callable[[Iterable[Any]], Optimizer]
#: As ``OptimizerCallable``, for a scheduler: called with the optimizer.
LRSchedulerCallable = Callable[[Optimizer], LRScheduler | ReduceLROnPlateau]
_SCHEDULER_BASES = LRSchedulerTypeTuple


class LightningArgumentParser(ArgumentParser):  # type: ignore[misc]
    """jsonargparse's parser that knows the kinds of class a Lightning script configures.

    Environment variables (``PL_TRAINER__MAX_EPOCHS``) are read only with ``default_env=True``, as in Lightning.
    """

    def __init__(
        self,
        *args: Any,
        description: str = "Lightning Trainer command line tool",
        env_prefix: str = "PL",
        default_env: bool = False,
        **kwargs: Any,
    ) -> None:
        _require_jsonargparse()
        super().__init__(*args, description=description, env_prefix=env_prefix, default_env=default_env, **kwargs)
        self.callback_keys: list[str] = []
        #: nested key -> (the class or classes accepted, where the parsed value goes or AUTOMATIC)
        self._optimizers: dict[str, tuple[type | tuple[type, ...], str]] = {}
        self._lr_schedulers: dict[str, tuple[type | tuple[type, ...], str]] = {}

    def add_lightning_class_args(
        self,
        lightning_class: Callable[..., Any] | type,
        nested_key: str | None,
        subclass_mode: bool = False,
        required: bool = True,
    ) -> list[str]:
        """The ``__init__`` arguments of a Trainer, module, data module or callback class under ``nested_key``
        (any subclass of it given by ``class_path`` with ``subclass_mode``; at the top level with ``None``);
        returns the names added."""
        if callable(lightning_class) and not isinstance(lightning_class, type):
            lightning_class = class_from_function(lightning_class)
        kinds = (Trainer, LightningModule, LightningDataModule, Callback)
        if not (isinstance(lightning_class, type) and issubclass(lightning_class, kinds)):
            raise MisconfigurationException(
                f"add_lightning_class_args({lightning_class!r}): expected a callable, or a subclass of Trainer, "
                "LightningModule, LightningDataModule or Callback."
            )
        if nested_key is None and (subclass_mode or issubclass(lightning_class, Callback)):
            raise MisconfigurationException(
                f"add_lightning_class_args({lightning_class.__name__}, nested_key=None): a callback, or a class picked "
                "by class_path (subclass_mode=True), needs a nested_key to live under; only the arguments of one "
                "fixed Trainer, module or data module class can go at the top level."
            )
        if issubclass(lightning_class, Callback):
            self.callback_keys.append(nested_key)  # type: ignore[arg-type]  # None refused above
        if subclass_mode:
            added: list[str] = self.add_subclass_arguments(
                lightning_class,
                nested_key,  # type: ignore[arg-type]  # None refused above
                fail_untyped=False,
                required=required,
            )
            return added
        if issubclass(lightning_class, Trainer):
            return self._add_trainer_arguments(lightning_class, nested_key)
        added = self.add_class_arguments(lightning_class, nested_key, fail_untyped=False, sub_configs=True)
        return added

    def _add_trainer_arguments(self, trainer_class: type[Trainer], nested_key: str | None) -> list[str]:
        """The Trainer's arguments, with ``callbacks``, ``logger`` and ``profiler`` typed as classes to build from a
        config (accelplug's signature accepts any object there; the CLI needs to know what ``class_path`` may name)."""
        typed: dict[str, Any] = {
            "callbacks": Union[list[Callback], Callback, None],  # noqa: UP007 - jsonargparse reads it at runtime
            "logger": Union[Logger, list[Logger], bool, None],  # noqa: UP007
            "profiler": Union[Profiler, str, None],  # noqa: UP007
            # a class_path (or a lazy_instance default) whose arguments `--trainer.strategy.<arg>` may then set
            "strategy": Union[str, Strategy],  # noqa: UP007
            "accelerator": Union[str, Accelerator],  # noqa: UP007
        }
        present = inspect.signature(trainer_class).parameters
        skip = {name for name in typed if name in present}
        added: list[str] = self.add_class_arguments(
            trainer_class, nested_key, fail_untyped=False, instantiate=False, sub_configs=True, skip=skip
        )
        for name in sorted(skip):
            default = present[name].default
            self.add_argument(
                f"--{_under(nested_key, name)}",
                type=typed[name],
                default=None if default is inspect.Parameter.empty or is_unset(default) else default,
                help=f"Trainer({name}=...)",
            )
            added.append(_under(nested_key, name))
        # accelplug marks a default the caller did not pass (so saved settings may fill it); jsonargparse wants
        # the plain value, and the CLI hands the mark back when the value stays the default (_unset_kept)
        self.set_defaults(
            {_under(nested_key, name): _plain(p.default) for name, p in present.items() if is_unset(p.default)}
        )
        return added

    def add_optimizer_args(
        self,
        optimizer_class: type[Optimizer] | tuple[type[Optimizer], ...] = (Optimizer,),
        nested_key: str = "optimizer",
        link_to: str = _AUTOMATIC,
    ) -> None:
        """An optimizer's arguments (``params`` left out: the model gives them) under ``nested_key``; a tuple
        accepts any subclass by ``class_path``. ``link_to`` names a model argument that receives it."""
        classes = optimizer_class if isinstance(optimizer_class, tuple) else (optimizer_class,)
        if not all(isinstance(c, type) and issubclass(c, Optimizer) for c in classes):
            raise MisconfigurationException(
                f"add_optimizer_args({optimizer_class!r}): expected a torch.optim.Optimizer subclass or a tuple "
                "of them."
            )
        self._add_config_class(optimizer_class, nested_key, skip={"params"})
        self._optimizers[nested_key] = (optimizer_class, link_to)

    def add_lr_scheduler_args(
        self,
        lr_scheduler_class: type | tuple[type, ...] = _SCHEDULER_BASES,
        nested_key: str = "lr_scheduler",
        link_to: str = _AUTOMATIC,
    ) -> None:
        """A learning-rate scheduler's arguments (``optimizer`` left out) under ``nested_key``, as above."""
        classes = lr_scheduler_class if isinstance(lr_scheduler_class, tuple) else (lr_scheduler_class,)
        if not all(isinstance(c, type) and issubclass(c, _SCHEDULER_BASES) for c in classes):
            raise MisconfigurationException(
                f"add_lr_scheduler_args({lr_scheduler_class!r}): expected a subclass of torch's LRScheduler or "
                "ReduceLROnPlateau, or a tuple of them."
            )
        self._add_config_class(lr_scheduler_class, nested_key, skip={"optimizer"})
        self._lr_schedulers[nested_key] = (lr_scheduler_class, link_to)

    def _add_config_class(self, classes: type | tuple[type, ...], nested_key: str, skip: set[str]) -> None:
        options: dict[str, Any] = {"instantiate": False, "fail_untyped": False, "skip": skip}
        if isinstance(classes, tuple):
            self.add_subclass_arguments(classes, nested_key, **options)
        else:
            self.add_class_arguments(classes, nested_key, sub_configs=True, **options)


class ConfigExistsError(MisconfigurationException, RuntimeError):
    """The config file a run would save exists already (Lightning raises a ``RuntimeError``)."""


class SaveConfigCallback(Callback):
    """Writes the parsed config into the run's log folder (``config.yaml``) when the run is set up, once.

    An existing file is an error unless ``overwrite=True``: a second run into the same folder would otherwise
    replace the record of the first. Override :meth:`save_config` to store it elsewhere too (a tracker); with
    ``save_to_log_dir=False`` only that runs.
    """

    def __init__(
        self,
        parser: LightningArgumentParser,
        config: Namespace,
        config_filename: str = "config.yaml",
        overwrite: bool = False,
        multifile: bool = False,
        save_to_log_dir: bool = True,
    ) -> None:
        self.parser = parser
        self.config = config
        self.config_filename = config_filename
        self.overwrite = overwrite
        self.multifile = multifile
        self.save_to_log_dir = save_to_log_dir
        self.already_saved = False
        if not save_to_log_dir and type(self).save_config is SaveConfigCallback.save_config:
            raise MisconfigurationException(
                "`save_to_log_dir=False` only makes sense when subclassing SaveConfigCallback to implement "
                "`save_config`: SaveConfigCallback(save_to_log_dir=False) saves nothing by itself; subclass it and "
                "implement save_config() to store the config somewhere else."
            )

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if self.already_saved:
            return
        broadcast = trainer.strategy.broadcast_object
        if self.save_to_log_dir:
            folder = Path(trainer.log_dir)
            path = folder / self.config_filename
            exists = broadcast(path.is_file() if trainer.is_global_zero else False)
            if exists and not self.overwrite:
                raise ConfigExistsError(
                    f"{type(self).__name__} expected {path} to NOT exist. Aborting to avoid overwriting the config of "
                    "a previous run. Delete it, pass LightningCLI(save_config_callback=None) to save none, or "
                    'LightningCLI(save_config_kwargs={"overwrite": True}) to replace it.'
                )
            if trainer.is_global_zero:
                folder.mkdir(parents=True, exist_ok=True)
                self.parser.save(
                    self.config,
                    str(path),
                    **_keep_none(),
                    overwrite=self.overwrite,
                    multifile=self.multifile,
                )
        if trainer.is_global_zero:
            self.save_config(trainer, pl_module, stage)
            self.already_saved = True
        self.already_saved = bool(broadcast(self.already_saved))

    def save_config(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """Store the config elsewhere as well; runs on the global-zero process only (no collectives here)."""


def instantiate_class(args: Any, init: dict[str, Any]) -> Any:
    """Build ``init["class_path"]`` with ``init["init_args"]``; ``args`` (one value or a tuple) go first
    (the parameters for an optimizer, the optimizer for a scheduler)."""
    positional = args if isinstance(args, tuple) else (args,)
    module_name, _, class_name = init["class_path"].rpartition(".")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(*positional, **init.get("init_args", {}))


def _with_class_path(cls: type, init: Any) -> dict[str, Any] | None:
    """A parsed group of one fixed class as ``{"class_path", "init_args"}`` (None when the group was left out)."""
    if not init:
        return None
    values = dict(init.get("init_args", init)) if "class_path" in init else dict(init)
    return {"class_path": f"{cls.__module__}.{cls.__name__}", "init_args": values}


def _add_class_path(cls: type) -> Callable[[Any], dict[str, Any] | None]:
    def compute(init_args: Any) -> dict[str, Any] | None:
        return _with_class_path(cls, init_args)

    return compute


def _refuse_nul_bytes(parser: ArgumentParser, args: Iterable[Any]) -> None:
    """An argument with a NUL byte (a ``--config`` path from ``args=``; a real command line cannot hold one) is
    refused in one line with exit code 2, as the parser refuses other bad arguments, instead of the bare
    ``ValueError: embedded null byte`` opening the file would raise (Lightning's CLI raises that one)."""
    previous = None
    for value in args:
        if isinstance(value, str) and "\x00" in value:
            option, _, given = value.partition("=") if value.startswith("-") and "=" in value else (previous, "", value)
            where = f"{option} " if isinstance(option, str) and option.startswith("-") else "argument "
            error = MisconfigurationException(
                f"{where}{given!r} contains a NUL byte, which no file path or command-line argument can hold; give "
                "the path of a YAML config file (or the value itself) without it."
            )
            if not getattr(parser, "exit_on_error", True):
                raise error
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2)
        previous = value


def _under(nested_key: str | None, name: str) -> str:
    """An argument's key: ``name`` inside ``nested_key``'s group, or at the top level."""
    return name if nested_key is None else f"{nested_key}.{name}"


def _plain(value: Any) -> Any:
    """An unset-marked default as the built-in value it stands for (``False``, ``1``, ``"auto"``)."""
    if isinstance(value, str):
        return str(value)
    return bool(value) if type(value).__name__ == "_UnsetBool" else int(value)


def _unset_kept(trainer_class: Any, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with each value that equals an unset-marked default replaced by that mark."""
    try:
        present = inspect.signature(trainer_class).parameters
    except (TypeError, ValueError):
        return config
    kept = dict(config)
    for name, parameter in present.items():
        if name in kept and is_unset(parameter.default) and kept[name] == _plain(parameter.default):
            kept[name] = parameter.default
    return kept


def _built_type(target: Any) -> type:
    """The class a model/data argument builds: the class, or what a factory function is annotated to return."""
    if callable(target) and not isinstance(target, type):
        annotation = inspect.signature(target).return_annotation
        return annotation if isinstance(annotation, type) else object
    return target  # type: ignore[no-any-return]


#: The ``_instantiator`` a configured class records: Lightning's path, so the checkpoint also loads in Lightning
#: (accelplug's ``load_from_checkpoint`` takes it as accelplug's ``instantiate_module``).
_INSTANTIATOR_PATH = "lightning.pytorch.cli.instantiate_module"


def _keep_none() -> dict[str, bool]:
    """``dump``/``save``'s keyword that writes None values too: ``skip_unset`` (``skip_none`` before 4.49)."""
    import jsonargparse

    release = tuple(int(part) for part in jsonargparse.__version__.split(".")[:2] if part.isdigit())
    return {"skip_unset" if release >= (4, 49) else "skip_none": False}


_ADD_INSTANTIATOR_DEPRECATED = "``ArgumentParser.add_instantiator`` was deprecated"


def _instantiated(parser: ArgumentParser, config: Namespace) -> Namespace:
    """The config with its classes built: jsonargparse's ``instantiate`` (``instantiate_classes`` before 4.49)."""
    instantiate = getattr(parser, "instantiate", None) or parser.instantiate_classes
    built: Namespace = instantiate(config)
    return built


class _BuiltFromConfig:
    """jsonargparse's instantiator for the model (or data) class: builds it while its ``save_hyperparameters()``
    records the configuration (``_class_path`` for a class picked by ``class_path``, then its arguments, with the
    values instantiation links gave) instead of the objects the configuration became."""

    def __init__(self, cli: LightningCLI, key: str) -> None:
        self.cli = cli
        self.key = key

    def __call__(self, class_type: type, *args: Any, applied_instantiation_links: dict[str, Any], **kwargs: Any) -> Any:
        hparams = self.cli._configuration_of(self.key)
        if "class_path" in hparams:
            hparams = {
                "_class_path": hparams["class_path"],
                **(hparams.get("init_args") or {}),
                **(hparams.get("dict_kwargs") or {}),
            }
        prefix = f"{self.key}."
        for target, value in applied_instantiation_links.items():
            if target.startswith(prefix):
                _set_nested(hparams, target.removeprefix(prefix).removeprefix("init_args."), value)
        with hyperparameters_given(class_type, hparams, _INSTANTIATOR_PATH):
            return class_type(*args, **kwargs)


def _set_nested(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        data = data.setdefault(key, {})
    data[last] = value


def _first_doc_line(component: Any) -> str | None:
    doc = inspect.getdoc(component)
    return doc.strip().splitlines()[0] if doc else None


class LightningCLI:
    """A command line for a Lightning script: ``LightningCLI(MyModel, MyDataModule)``. See the module doc."""

    def __init__(
        self,
        model_class: type[LightningModule] | Callable[..., LightningModule] | None = None,
        datamodule_class: type[LightningDataModule] | Callable[..., LightningDataModule] | None = None,
        save_config_callback: type[SaveConfigCallback] | None = SaveConfigCallback,
        save_config_kwargs: dict[str, Any] | None = None,
        trainer_class: type[Trainer] | Callable[..., Trainer] = Trainer,
        trainer_defaults: dict[str, Any] | None = None,
        seed_everything_default: bool | int = True,
        parser_kwargs: dict[str, Any] | dict[str, dict[str, Any]] | None = None,
        parser_class: type[LightningArgumentParser] = LightningArgumentParser,
        subclass_mode_model: bool = False,
        subclass_mode_data: bool = False,
        args: ArgsType = None,
        run: bool = True,
        auto_configure_optimizers: bool = True,
        load_from_checkpoint_support: bool = True,
    ) -> None:
        _require_jsonargparse()
        self.save_config_callback = save_config_callback
        self.save_config_kwargs = save_config_kwargs or {}
        self.trainer_class = trainer_class
        self.trainer_defaults = trainer_defaults or {}
        self.seed_everything_default = seed_everything_default
        self.parser_kwargs = parser_kwargs or {}
        self.parser_class = parser_class
        self.auto_configure_optimizers = auto_configure_optimizers
        self.load_from_checkpoint_support = load_from_checkpoint_support
        self.model_class = model_class
        self._model_class = model_class or LightningModule
        self.subclass_mode_model = model_class is None or subclass_mode_model
        self.datamodule_class = datamodule_class
        self._datamodule_class = datamodule_class or LightningDataModule
        self.subclass_mode_data = datamodule_class is None or subclass_mode_data
        self._dumped: dict[str, Any] | None = None

        names = self.subcommands()
        main_kwargs = {k: v for k, v in self.parser_kwargs.items() if k not in names}
        per_subcommand = {k: v for k, v in self.parser_kwargs.items() if k in names}
        self.setup_parser(run, main_kwargs, per_subcommand)
        self.parse_arguments(self.parser, args)
        self._read_hparams_of_ckpt_path()
        self.subcommand: str | None = self.config["subcommand"] if run else None
        self._seed()
        if load_from_checkpoint_support:
            self._record_configurations_as_hparams()
        self.before_instantiate_classes()
        self.instantiate_classes()
        self.after_instantiate_classes()
        if self.subcommand is not None:
            self._run_subcommand(self.subcommand)

    # ---- the parser ----------------------------------------------------------------------------------
    def init_parser(self, **kwargs: Any) -> LightningArgumentParser:
        """One parser (the main one, or a subcommand's) with ``-c/--config``."""
        kwargs.setdefault("dump_header", [f"accelplug=={__version__}"])
        parser = self.parser_class(**kwargs)
        parser.add_argument(
            "-c", "--config", action=ActionConfigFile, help="Path to a configuration file in json or yaml format."
        )
        return parser

    def setup_parser(
        self, add_subcommands: bool, main_kwargs: dict[str, Any], subparser_kwargs: dict[str, Any]
    ) -> None:
        """The main parser, with a parser per subcommand when the CLI runs one (``run=True``)."""
        self.parser = self.init_parser(**main_kwargs)
        if add_subcommands:
            self._subcommand_method_arguments: dict[str, list[str]] = {}
            self._add_subcommands(self.parser, **subparser_kwargs)
        else:
            self._add_arguments(self.parser)

    def add_default_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """``--seed_everything``: an int seeds with it, True picks a seed, False seeds nothing."""
        parser.add_argument(
            "--seed_everything",
            type=Union[bool, int],  # noqa: UP007 - jsonargparse reads it at runtime
            default=self.seed_everything_default,
            help="An int seeds every generator with it before the classes are built; true picks a seed; "
            "false seeds nothing.",
        )

    def add_core_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """``trainer``, ``model`` and ``data``: the arguments of their classes."""
        parser.add_lightning_class_args(self.trainer_class, "trainer")
        parser.set_defaults({f"trainer.{k}": v for k, v in self.trainer_defaults.items() if k != "callbacks"})
        parser.add_lightning_class_args(self._model_class, "model", subclass_mode=self.subclass_mode_model)
        parser.add_lightning_class_args(
            self._datamodule_class,
            "data",
            subclass_mode=self.subclass_mode_data,
            required=self.datamodule_class is not None,
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        """Override to add arguments, link them (``parser.link_arguments``) or set defaults."""

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        """Each subcommand (a Trainer method) and its arguments that the CLI fills itself."""
        return {
            "fit": {"model", "train_dataloaders", "val_dataloaders", "datamodule"},
            "validate": {"model", "dataloaders", "datamodule"},
            "test": {"model", "dataloaders", "datamodule"},
            "predict": {"model", "dataloaders", "datamodule"},
        }

    def _add_arguments(self, parser: LightningArgumentParser) -> None:
        self.add_default_arguments_to_parser(parser)
        self.add_core_arguments_to_parser(parser)
        self.add_arguments_to_parser(parser)
        if self.auto_configure_optimizers:
            if not parser._optimizers:
                parser.add_optimizer_args((Optimizer,))
            if not parser._lr_schedulers:
                parser.add_lr_scheduler_args(_SCHEDULER_BASES)
        self.link_optimizers_and_lr_schedulers(parser)

    def _add_subcommands(self, parser: LightningArgumentParser, **kwargs: Any) -> None:
        self._subcommand_parsers: dict[str, LightningArgumentParser] = {}
        subcommands = parser.add_subcommands()
        trainer_class = self.trainer_class
        if not isinstance(trainer_class, type):
            trainer_class = class_from_function(trainer_class)
        for name, filled in self.subcommands().items():
            description = _first_doc_line(getattr(trainer_class, name))
            options = dict(kwargs.get(name, {}))
            options.setdefault("description", description)
            sub = self.init_parser(**options)
            self._add_arguments(sub)
            self._subcommand_method_arguments[name] = sub.add_method_arguments(trainer_class, name, skip=set(filled))
            self._subcommand_parsers[name] = sub
            subcommands.add_subcommand(name, sub, help=description)

    @staticmethod
    def link_optimizers_and_lr_schedulers(parser: LightningArgumentParser) -> None:
        """Send each optimizer/scheduler group with a ``link_to`` into that argument (the model builds them)."""
        for key, (classes, link_to) in {**parser._optimizers, **parser._lr_schedulers}.items():
            if link_to == _AUTOMATIC:
                continue
            if isinstance(classes, tuple):
                parser.link_arguments(key, link_to)
            else:
                parser.link_arguments(key, link_to, compute_fn=_add_class_path(classes))

    def parse_arguments(self, parser: LightningArgumentParser, args: ArgsType) -> None:
        """``args`` as a command line (a list), a config (a dict or Namespace), or ``sys.argv`` when None."""
        if args is not None and len(sys.argv) > 1:
            rank_zero_warn(
                "LightningCLI's args parameter stands for a command line when run from within Python, and this "
                f"script also has command-line arguments: args={args!r}, sys.argv[1:]={sys.argv[1:]!r}; only args= "
                "is read."
            )
        if isinstance(args, (dict, Namespace)):
            self.config = parser.parse_object(args)
        else:
            _refuse_nul_bytes(parser, sys.argv[1:] if args is None else args)
            self.config = parser.parse_args(args)

    def _read_hparams_of_ckpt_path(self) -> None:
        """With ``--ckpt_path`` naming a file, the model's arguments come from the hyper-parameters saved in it
        (the command line still wins), so ``test --ckpt_path=best.ckpt`` rebuilds the trained model."""
        subcommand = self.config.get("subcommand")
        if not subcommand:
            return
        ckpt_path = self.config[subcommand].get("ckpt_path")
        if not ckpt_path or not Path(ckpt_path).is_file():
            return
        checkpoint = torch.load(ckpt_path, weights_only=True, map_location="cpu")
        hparams = dict(checkpoint.get("hyper_parameters") or {})
        hparams.pop("_instantiator", None)
        if not hparams:
            return
        if "_class_path" in hparams:
            hparams = {"class_path": hparams.pop("_class_path"), "dict_kwargs": hparams}
        try:
            self.config = self.parser.parse_object({subcommand: {"model": hparams}}, self.config)
        except SystemExit:
            sys.stderr.write(
                f"Parsing of ckpt_path hyperparameters failed: the hyper-parameters saved in {ckpt_path} do not fit "
                "the model's arguments.\n"
            )
            raise

    # ---- building --------------------------------------------------------------------------------------
    def _record_configurations_as_hparams(self) -> None:
        """The model and data module record, in ``save_hyperparameters()``, the configuration they were built from
        (see :class:`_BuiltFromConfig`), so ``load_from_checkpoint`` can rebuild what was injected into them."""
        for key, target, subclasses in (
            ("model", self._model_class, self.subclass_mode_model),
            ("data", self._datamodule_class, self.subclass_mode_data),
        ):
            with warnings.catch_warnings():
                # jsonargparse 4.49+ deprecates a parser's own instantiators (for instantiate(instantiators=...)),
                # but a script's own instantiate_classes() builds through the parser alone, so they stay there
                for deprecation in ("By default only one JsonargparseDeprecationWarning", _ADD_INSTANTIATOR_DEPRECATED):
                    warnings.filterwarnings("ignore", message=rf"\s*{deprecation}")
                self.parser.add_instantiator(_BuiltFromConfig(self, key), _built_type(target), subclasses=subclasses)

    def _configuration_of(self, key: str) -> dict[str, Any]:
        """The parsed ``model`` or ``data`` section as plain YAML values, links applied (dumped once per run)."""
        if self._dumped is None:
            import yaml  # jsonargparse's dependency, as the CLI is

            text = self.parser.dump(self.config, skip_link_targets=False, **_keep_none(), format="yaml")
            dumped = yaml.safe_load(text)
            self._dumped = dumped[self.config["subcommand"]] if "subcommand" in self.config else dumped
        section = self._dumped.get(key) or {}
        return copy.deepcopy(section) if isinstance(section, dict) else {}

    def _seed(self) -> None:
        seed = self._get(self.config, "seed_everything")
        if seed is False:
            return
        chosen = seed_everything(workers=True) if seed is True else seed_everything(seed, workers=True)
        target = self.config[self.subcommand] if self.subcommand else self.config
        target["seed_everything"] = chosen

    def before_instantiate_classes(self) -> None:
        """Override to run something before the classes are built."""

    def instantiate_classes(self) -> None:
        """Build the model, data module and Trainer from the parsed config."""
        self.config_init = _instantiated(self.parser, self.config)
        self.datamodule = self._get(self.config_init, "data")
        self.model = self._get(self.config_init, "model")
        self._install_configure_optimizers(self.subcommand)
        self.trainer = self.instantiate_trainer()

    def after_instantiate_classes(self) -> None:
        """Override to run something after the classes are built."""

    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        """The Trainer from the config (``kwargs`` win), with the configured callbacks, ``trainer_defaults``'
        callbacks and the save-config callback added."""
        extra = [self._get(self.config_init, key) for key in self._parser(self.subcommand).callback_keys]
        config = {**self._get(self.config_init, "trainer", default={}), **kwargs}
        return self._instantiate_trainer(config, extra)

    def _instantiate_trainer(self, config: dict[str, Any], callbacks: list[Callback]) -> Trainer:
        if "callbacks" not in config:
            rank_zero_warn(
                f"The `{getattr(self.trainer_class, '__qualname__', self.trainer_class)}` class does not expose the "
                "`callbacks` argument, so the configured callbacks and the config saving are left out."
            )
            return self.trainer_class(**_unset_kept(self.trainer_class, config))
        given = config["callbacks"]
        chosen = [] if given is None else list(given) if isinstance(given, Iterable) else [given]
        chosen.extend(callbacks)
        defaults = self.trainer_defaults.get("callbacks")
        if defaults is not None:
            chosen.extend(defaults if isinstance(defaults, list) else [defaults])
        if self.save_config_callback is not None and not config.get("fast_dev_run", False):
            parsed = self.config.get(str(self.subcommand), self.config)
            chosen.append(self.save_config_callback(self._parser(self.subcommand), parsed, **self.save_config_kwargs))
        config["callbacks"] = chosen
        return self.trainer_class(**_unset_kept(self.trainer_class, config))

    def _parser(self, subcommand: str | None) -> LightningArgumentParser:
        return self.parser if subcommand is None else self._subcommand_parsers[subcommand]

    @staticmethod
    def configure_optimizers(
        lightning_module: LightningModule, optimizer: Optimizer, lr_scheduler: LRSchedulerTypeUnion | None = None
    ) -> Any:
        """What the model's ``configure_optimizers`` returns when the optimizer comes from the CLI; override to
        return another shape."""
        if lr_scheduler is None:
            return optimizer
        if isinstance(lr_scheduler, ReduceLROnPlateau):
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": lr_scheduler, "monitor": lr_scheduler.monitor},
            }
        return [optimizer], [lr_scheduler]

    def _install_configure_optimizers(self, subcommand: str | None) -> None:
        """With ``--optimizer`` given (and an automatic group), the model's ``configure_optimizers`` becomes
        :meth:`configure_optimizers` over the optimizer and scheduler built from the config."""
        if not self.auto_configure_optimizers:
            return
        parser = self._parser(subcommand)

        def automatic(
            base: type | tuple[type, ...], groups: dict[str, tuple[type | tuple[type, ...], str]]
        ) -> list[str]:
            keys = []
            for key, (classes, link_to) in groups.items():
                members = classes if isinstance(classes, tuple) else (classes,)
                if link_to == _AUTOMATIC and any(issubclass(c, base) for c in members):
                    keys.append(key)
            return keys

        optimizers = automatic(Optimizer, parser._optimizers)
        schedulers = automatic(_SCHEDULER_BASES, parser._lr_schedulers)
        if not optimizers:
            return
        if len(optimizers) > 1 or len(schedulers) > 1:
            raise MisconfigurationException(
                f"{type(self).__name__}: at most one optimizer and one lr_scheduler group may be automatic, found "
                f"{optimizers + schedulers}. Give the others link_to= and build them in the model's "
                "configure_optimizers."
            )
        optimizer_init = self._init_of(parser._optimizers[optimizers[0]][0], optimizers[0])
        if not optimizer_init:
            return
        scheduler_init = self._init_of(parser._lr_schedulers[schedulers[0]][0], schedulers[0]) if schedulers else None
        if type(self.model).configure_optimizers is not LightningModule.configure_optimizers:
            rank_zero_warn(
                f"`{type(self.model).__name__}.configure_optimizers` will be overridden by `{type(self).__name__}"
                ".configure_optimizers`, because an optimizer was given on the command line or in the config."
            )
        optimizer = instantiate_class(self.model.parameters(), optimizer_init)
        scheduler = instantiate_class(optimizer, scheduler_init) if scheduler_init else None
        method = partial(self.configure_optimizers, optimizer=optimizer, lr_scheduler=scheduler)
        update_wrapper(method, self.configure_optimizers)
        self.model.configure_optimizers = MethodType(method, self.model)  # type: ignore[method-assign]

    def _init_of(self, classes: type | tuple[type, ...], key: str) -> Any:
        init = self._get(self.config_init, key)
        return init if isinstance(classes, tuple) else _with_class_path(classes, init)

    def _get(self, config: Any, key: str, default: Any = None) -> Any:
        """``key`` of the running subcommand's config (of the whole config without one)."""
        return config.get(str(self.subcommand), config).get(key, default)

    # ---- running --------------------------------------------------------------------------------------
    def _run_subcommand(self, subcommand: str) -> None:
        """``before_<subcommand>()``, the Trainer method (or this class's method of that name), then
        ``after_<subcommand>()``."""
        before = getattr(self, f"before_{subcommand}", None)
        if callable(before):
            before()
        method = getattr(self, subcommand, getattr(self.trainer, subcommand))
        method(**self._prepare_subcommand_kwargs(subcommand))
        after = getattr(self, f"after_{subcommand}", None)
        if callable(after):
            after()

    def _prepare_subcommand_kwargs(self, subcommand: str) -> dict[str, Any]:
        wanted = self._subcommand_method_arguments[subcommand]
        arguments = {k: v for k, v in self.config_init[subcommand].items() if k in wanted}
        arguments["model"] = self.model
        if self.datamodule is not None:
            arguments["datamodule"] = self.datamodule
        return arguments


#: The banner ``cli_lightning_logo`` prints (Lightning's ``LIGHTNING_LOGO`` name; accelplug's own art).
LIGHTNING_LOGO: str = r"""
    ___                __      __
   /   | ______________/ /___  / /_  ______ _
  / /| |/ ___/ ___/ _ \/ / __ \/ / / / / __ `/
 / ___ / /__/ /__/  __/ / /_/ / / /_/ / /_/ /
/_/  |_\___/\___/\___/_/ .___/_/\__,_/\__, /
                      /_/            /____/
"""


def cli_lightning_logo() -> None:
    """Print the banner Lightning's example scripts print at start (accelplug's name, not Lightning's)."""
    print(LIGHTNING_LOGO)
