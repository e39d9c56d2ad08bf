"""Building a module or datamodule back from a checkpoint, hyper-parameter files, and exporting a module.

``load_from_checkpoint`` follows Lightning's rules, so checkpoints Lightning wrote load too: the saved
hyper-parameters (``save_hyperparameters``; a Lightning 0.x checkpoint's ``hparams``/``module_arguments``)
are the constructor's arguments, ``**kwargs`` override them, an ``hparams_file`` (YAML or CSV, as Lightning's
loggers write) replaces them, arguments the constructor does not take are dropped unless it has ``**kwargs``,
and the weights are loaded with ``strict`` (or the module's ``strict_loading``). Tensors saved on a device
this machine lacks are loaded on the CPU.

``save_hparams_to_yaml``/``load_hparams_from_yaml`` (and the CSV pair) are the files the loggers write
(``hparams.yaml``) and ``hparams_file=`` reads: YAML as Lightning writes it, a value YAML cannot hold left
out with a warning.

A module or datamodule ``LightningCLI`` built records its configuration and ``_instantiator``, the import path of
:func:`instantiate_module`; loading such a checkpoint builds it with that function (jsonargparse turns each
``class_path``/``init_args`` back into an object). Only the paths in :data:`TRUSTED_INSTANTIATORS` are followed,
and a ``_class_path`` must name a subclass already imported: a checkpoint cannot make the loader import code.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import inspect
import os
import sys
import warnings
from argparse import Namespace
from collections.abc import Iterator
from enum import Enum
from typing import IO, Any

import torch

from ..checkpoint.migration import CheckpointKeyError
from ..errors import CheckpointNotFoundError, MisconfigurationException
from ..overrides import overrides
from .migration import pl_legacy_patch, upgrade_loaded

__all__ = [
    "CHECKPOINT_PAST_HPARAMS_KEYS",
    "TRUSTED_INSTANTIATORS",
    "MissingPackageError",
    "UntrustedCheckpointError",
    "convert",
    "export_onnx",
    "export_tensorrt",
    "export_torchscript",
    "hparams_yaml_text",
    "instantiate_module",
    "jit_reading",
    "load_from_checkpoint",
    "load_hparams_from_tags_csv",
    "load_hparams_from_yaml",
    "save_hparams_to_tags_csv",
    "save_hparams_to_yaml",
    "update_hparams",
]

#: Where checkpoints of Lightning 0.7 kept the hyper-parameters (still read, as Lightning does).
CHECKPOINT_PAST_HPARAMS_KEYS = ("hparams", "module_arguments")

#: The ``_instantiator`` paths a checkpoint may name (each means :func:`instantiate_module`): Lightning's, which
#: accelplug writes so its checkpoints load in Lightning too, and accelplug's own. Add a path only for code you trust:
#: loading calls it.
TRUSTED_INSTANTIATORS: set[str] = {
    "lightning.pytorch.cli.instantiate_module",
    "pytorch_lightning.cli.instantiate_module",
    "accelplug.pytorch.cli.instantiate_module",
    "accelplug.lightning_cli.instantiate_module",
}


class UntrustedCheckpointError(MisconfigurationException):
    """A checkpoint names code to run that is not trusted (a ``ValueError``, as Lightning raises)."""


def _filesystem(path: str | os.PathLike[str]) -> Any:
    from ..checkpoint.file import filesystem

    return filesystem(os.fspath(path))


# ---- hyper-parameter files ---------------------------------------------------------------------------
def convert(val: str) -> Any:
    """A CSV cell as the Python literal it spells (numbers, booleans, None, lists...), else the text."""
    try:
        return ast.literal_eval(val)
    except (ValueError, SyntaxError):
        return val


def load_hparams_from_tags_csv(tags_csv: str | os.PathLike[str]) -> dict[str, Any]:
    """The hyper-parameters of a ``key,value`` CSV file (a missing file: a warning and ``{}``)."""
    fs = _filesystem(tags_csv)
    if not fs.exists(os.fspath(tags_csv)):
        warnings.warn(f"Missing Tags: {tags_csv}.", RuntimeWarning, stacklevel=2)
        return {}
    with fs.open(os.fspath(tags_csv), "r", newline="") as handle:
        return {row[0]: convert(row[1]) for row in list(csv.reader(handle, delimiter=","))[1:]}


def save_hparams_to_tags_csv(tags_csv: str | os.PathLike[str], hparams: dict[str, Any] | Namespace) -> None:
    """Write ``hparams`` as a ``key,value`` CSV file (the folder must exist)."""
    fs = _filesystem(tags_csv)
    folder = os.path.dirname(os.fspath(tags_csv))
    if not fs.isdir(folder or "."):
        raise RuntimeError(f"Missing folder: {folder}.")
    values = vars(hparams) if isinstance(hparams, Namespace) else hparams
    with fs.open(os.fspath(tags_csv), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["key", "value"])
        writer.writerow({"key": "key", "value": "value"})
        for key, value in values.items():
            writer.writerow({"key": key, "value": value})


def load_hparams_from_yaml(config_yaml: str | os.PathLike[str], use_omegaconf: bool = True) -> Any:
    """The hyper-parameters of a YAML file (a missing file: a warning and ``{}``); a ``DictConfig`` when OmegaConf
    is installed, ``use_omegaconf`` is on and the values allow one."""
    import yaml

    fs = _filesystem(config_yaml)
    if not fs.exists(os.fspath(config_yaml)):
        warnings.warn(f"Missing Tags: {config_yaml}.", RuntimeWarning, stacklevel=2)
        return {}
    with fs.open(os.fspath(config_yaml), "r") as handle:
        hparams = yaml.full_load(handle)
    if use_omegaconf and _omegaconf() is not None:
        from omegaconf import OmegaConf
        from omegaconf.errors import UnsupportedValueType, ValidationError

        try:
            return OmegaConf.create(hparams)
        except (UnsupportedValueType, ValidationError):
            pass
    return hparams


def _omegaconf() -> Any:
    import importlib.util

    return importlib.util.find_spec("omegaconf")


def _as_plain_mapping(hparams: Any) -> Any:
    from .hparams import AttributeDict

    if isinstance(hparams, Namespace):
        return vars(hparams)
    if isinstance(hparams, AttributeDict):
        return dict(hparams)
    return hparams


def _omegaconf_text(hparams: Any) -> str | None:
    """``hparams`` (OmegaConf containers resolved) as OmegaConf writes it, or None when OmegaConf cannot."""
    import copy

    from lightning_utilities.core.apply_func import apply_to_collection
    from omegaconf import OmegaConf
    from omegaconf.dictconfig import DictConfig
    from omegaconf.errors import UnsupportedValueType, ValidationError

    resolved = apply_to_collection(copy.deepcopy(hparams), DictConfig, OmegaConf.to_container, resolve=True)
    try:
        return str(OmegaConf.to_yaml(resolved))
    except (UnsupportedValueType, ValidationError):
        return None


def hparams_yaml_text(hparams: Any, use_omegaconf: bool = True) -> str:
    """The text of ``hparams.yaml`` for ``hparams`` (a dict, ``Namespace``, ``AttributeDict`` or ``DictConfig``):
    an enum as its name; a value YAML cannot write is left out with a warning naming it."""
    import yaml

    hparams = _as_plain_mapping(hparams)
    if use_omegaconf and _omegaconf() is not None:
        text = _omegaconf_text(hparams)
        if text is not None:
            return text
    if not isinstance(hparams, dict):
        raise TypeError("hparams must be dictionary")
    writable: dict[str, Any] = {}
    for key, value in hparams.items():
        value = value.name if isinstance(value, Enum) else value
        try:
            yaml.dump(value)
        except (TypeError, ValueError):
            warnings.warn(
                f"Skipping '{key}' parameter because it is not possible to safely dump to YAML.", stacklevel=3
            )
        else:
            writable[key] = value
    return str(yaml.dump(writable))


def save_hparams_to_yaml(
    config_yaml: str | os.PathLike[str], hparams: dict[str, Any] | Namespace, use_omegaconf: bool = True
) -> None:
    """Write ``hparams`` to a YAML file as the loggers' ``hparams.yaml`` (the folder must exist)."""
    fs = _filesystem(config_yaml)
    folder = os.path.dirname(os.fspath(config_yaml))
    if not fs.isdir(folder or "."):
        raise RuntimeError(f"Missing folder: {folder}.")
    text = hparams_yaml_text(hparams, use_omegaconf)
    with fs.open(os.fspath(config_yaml), "w", newline="") as handle:
        handle.write(text)


def update_hparams(hparams: dict[str, Any], updates: dict[str, Any]) -> None:
    """Override ``hparams`` with ``updates`` in place, nested dicts key by key."""
    for key, value in updates.items():
        if key in hparams and isinstance(value, dict):
            update_hparams(hparams[key], value)
        else:
            hparams[key] = value


def _hparams_from_file(path: str | os.PathLike[str]) -> Any:
    extension = os.fspath(path).rsplit(".", 1)[-1].lower()
    if extension == "csv":
        return load_hparams_from_tags_csv(path)
    if extension in ("yml", "yaml"):
        return load_hparams_from_yaml(path)
    raise MisconfigurationException(
        f"load_from_checkpoint(hparams_file={os.fspath(path)!r}): .csv, .yml or .yaml is required for `hparams_file`."
    )


# ---- load_from_checkpoint ----------------------------------------------------------------------------------
def _available(location: str) -> bool:
    kind = location.split(":", 1)[0]
    if kind == "cpu":
        return True
    backend = getattr(torch, kind, None)
    is_available = getattr(backend, "is_available", None)
    return bool(is_available()) if callable(is_available) else False


def _to_cpu_when_missing(storage: Any, location: str) -> Any:
    """torch.load's ``map_location``: storages saved on a device type this machine lacks come to the CPU."""
    return None if _available(location) else storage.cpu()


def _read(checkpoint_path: str | os.PathLike[str] | IO[bytes], map_location: Any, weights_only: bool | None) -> Any:
    location = map_location if map_location is not None else _to_cpu_when_missing
    if not isinstance(checkpoint_path, (str, os.PathLike)):
        return torch.load(checkpoint_path, map_location=location, weights_only=weights_only)
    shown = os.fspath(checkpoint_path)
    fs = _filesystem(shown)
    if not fs.isfile(shown):
        raise CheckpointNotFoundError(f"load_from_checkpoint: Checkpoint file not found: {shown!r} (no such file).")
    with fs.open(shown, "rb") as handle:
        return torch.load(handle, map_location=location, weights_only=weights_only)


def _saved_arguments(cls: Any, checkpoint: dict[str, Any], init_names: list[str]) -> dict[str, Any]:
    """The constructor arguments the checkpoint holds for ``cls``, shaped as the constructor takes them."""
    saved: Any = {}
    if issubclass(cls, torch.nn.Module):  # a module (not a datamodule) also reads Lightning 0.7's keys
        for key in CHECKPOINT_PAST_HPARAMS_KEYS:
            saved.update(checkpoint.get(key) or {})
    saved.update(checkpoint.get(cls.CHECKPOINT_HYPER_PARAMS_KEY) or {})
    saved_type = checkpoint.get(cls.CHECKPOINT_HYPER_PARAMS_TYPE)
    if isinstance(saved_type, str):  # Lightning 0.x wrote the type's name: any attribute dict reads it
        from .hparams import AttributeDict

        saved = AttributeDict(saved)
    elif callable(saved_type):
        saved = saved_type(saved)
    name = checkpoint.get(cls.CHECKPOINT_HYPER_PARAMS_NAME)
    if isinstance(name, str) and name in init_names:  # saved from one dict/Namespace argument: passed back as it
        return {name: saved}
    return dict(saved)


def instantiate_module(class_type: type, config: dict[str, Any]) -> Any:
    """``class_type`` (or the subclass ``config["_class_path"]`` names) built from a configuration as
    ``LightningCLI`` records it: each ``{"class_path", "init_args"}`` value becomes the object it describes."""
    from jsonargparse import ArgumentParser

    parser = ArgumentParser(exit_on_error=False)
    if "_class_path" in config:
        parser.add_subclass_arguments(class_type, "module", fail_untyped=False)
        rest = {k: v for k, v in config.items() if k != "_class_path"}
        config = {"class_path": config["_class_path"], "dict_kwargs": rest}
    else:
        parser.add_class_arguments(class_type, "module", fail_untyped=False)
    parsed = parser.parse_object({"module": config})
    instantiate = getattr(parser, "instantiate", None) or parser.instantiate_classes  # its name before 4.49
    return instantiate(parsed).module


def _imported_subclass(class_path: Any, cls: type) -> bool:
    """Whether ``class_path`` names a subclass of ``cls`` in a module imported already (nothing is imported)."""
    if not isinstance(class_path, str):
        return False
    module_name, _, name = class_path.rpartition(".")
    found = getattr(sys.modules.get(module_name), name, None)
    return isinstance(found, type) and issubclass(found, cls)


def _checked_instantiator(cls: Any, arguments: dict[str, Any]) -> bool:
    """Whether the checkpoint asks for :func:`instantiate_module` (refusing any other code it names)."""
    path = arguments.pop("_instantiator", None)
    if path is None:
        return False
    if not isinstance(path, str) or path not in TRUSTED_INSTANTIATORS:
        raise UntrustedCheckpointError(
            f"load_from_checkpoint: the checkpoint's instantiator {path!r} is not in the allowlist of trusted "
            f"instantiators ({sorted(TRUSTED_INSTANTIATORS)}), so it was blocked: calling it would run code the "
            "checkpoint names. If you trust this checkpoint, add the path to "
            "accelplug.core.saving.TRUSTED_INSTANTIATORS before loading."
        )
    class_path = arguments.get("_class_path")
    if class_path is not None and not _imported_subclass(class_path, cls):
        raise UntrustedCheckpointError(
            f"load_from_checkpoint: the class {class_path!r} the checkpoint asks for does not resolve to an already "
            f"imported subclass of {cls.__name__}, so it was blocked (importing it would run code the checkpoint "
            "names). If you trust this checkpoint, import the module that defines the class before loading."
        )
    return True


def _build(cls: Any, checkpoint: dict[str, Any], given: dict[str, Any]) -> Any:
    parameters = inspect.signature(cls.__init__).parameters
    init_names = [n for n, p in list(parameters.items())[1:] if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    arguments = {**_saved_arguments(cls, checkpoint, init_names), **given}
    from_config = _checked_instantiator(cls, arguments)
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        arguments = {k: v for k, v in arguments.items() if k in init_names}
    return instantiate_module(cls, arguments) if from_config else cls(**arguments)


def load_from_checkpoint(
    cls: Any,
    checkpoint_path: str | os.PathLike[str] | IO[bytes],
    map_location: Any = None,
    hparams_file: str | os.PathLike[str] | None = None,
    strict: bool | None = None,
    weights_only: bool | None = None,
    **kwargs: Any,
) -> Any:
    """An instance of ``cls`` built from the checkpoint's hyper-parameters, with its state loaded."""
    with pl_legacy_patch():  # a file an older Lightning pickled classes into names them at their old paths
        checkpoint = _read(checkpoint_path, map_location, weights_only)
    if not isinstance(checkpoint, dict):
        raise MisconfigurationException(
            f"{cls.__name__}.load_from_checkpoint: the file holds a {type(checkpoint).__name__}, not a checkpoint."
        )
    checkpoint = upgrade_loaded(
        checkpoint, checkpoint_path if isinstance(checkpoint_path, (str, os.PathLike)) else None
    )
    key = cls.CHECKPOINT_HYPER_PARAMS_KEY
    if hparams_file is not None:
        checkpoint[key] = _hparams_from_file(hparams_file)
    if checkpoint.get(key) is None:
        checkpoint[key] = {}
    checkpoint[key].update(kwargs)
    obj = _build(cls, checkpoint, kwargs)
    if not isinstance(obj, torch.nn.Module):  # a datamodule: its state, where Lightning (or accelplug) put it
        state = checkpoint.get(type(obj).__qualname__, checkpoint.get("datamodule"))
        if state is not None and callable(getattr(obj, "load_state_dict", None)):
            obj.load_state_dict(state)
        return obj
    return _load_weights(obj, checkpoint, strict, checkpoint_path)


def _load_weights(module: Any, checkpoint: dict[str, Any], strict: bool | None, shown: Any) -> Any:
    chosen = getattr(module, "_strict_loading", None)
    if chosen is not None and strict is not None and strict != chosen:
        raise MisconfigurationException(
            f"You set `.load_from_checkpoint(..., strict={strict!r})` which is in conflict with "
            f"`{type(module).__name__}.strict_loading={chosen!r}`: set the same value for both."
        )
    strict = module.strict_loading if strict is None else strict
    if overrides(module, "configure_model"):
        module.configure_model()
    module.on_load_checkpoint(checkpoint)
    state_dict = checkpoint.get("state_dict")
    if not isinstance(state_dict, dict):
        raise CheckpointKeyError(  # Lightning's KeyError names the key
            f"'state_dict': load_from_checkpoint: the checkpoint has no 'state_dict' for {module!r}."
        )
    keys = module.load_state_dict(state_dict, strict=strict)
    if not strict and keys.missing_keys:
        warnings.warn(
            f"Found keys that are in the model state dict but not in the checkpoint: {keys.missing_keys}",
            UserWarning,
            stacklevel=4,
        )
    if not strict and keys.unexpected_keys:
        warnings.warn(
            f"Found keys that are not in the model state dict but in the checkpoint: {keys.unexpected_keys}",
            UserWarning,
            stacklevel=4,
        )
    if not state_dict:
        warnings.warn(f"The state dict in {shown!r} contains no parameters.", UserWarning, stacklevel=4)
        return module
    first = next((t for t in state_dict.values() if isinstance(t, torch.Tensor)), None)
    return module if first is None else module.to(first.device)


class MissingPackageError(MisconfigurationException, ModuleNotFoundError):
    """An export needs a package that is not installed: a configuration error naming it, and still the
    ``ModuleNotFoundError`` Lightning raises, so either ``except`` catches it."""


_TENSORRT_IRS = ("default", "dynamo", "ts")
_TENSORRT_FORMATS = ("exported_program", "torchscript")


def export_tensorrt(
    module: Any,
    file_path: Any,
    input_sample: Any,
    ir: str,
    output_format: str,
    retrace: bool,
    default_device: str | torch.device,
    **compile_kwargs: Any,
) -> Any:
    """``torch_tensorrt.compile`` of the module in eval mode on a CUDA device, then its mode and device restored;
    saved to ``file_path`` when one is given (``torch.jit.save`` for the TorchScript IR)."""
    import importlib.util

    from ..errors import did_you_mean

    name = type(module).__name__
    for value, accepted, option in ((ir, _TENSORRT_IRS, "ir"), (output_format, _TENSORRT_FORMATS, "output_format")):
        if value not in accepted:
            raise MisconfigurationException(
                f"{name}.to_tensorrt({option}={value!r}): accepted {list(accepted)}.{did_you_mean(value, accepted)}"
            )
    if importlib.util.find_spec("torch_tensorrt") is None:
        raise MissingPackageError(
            f"`{name}.to_tensorrt` requires `torch_tensorrt` to be installed, which is not: pip install torch-tensorrt"
        )
    training, device = module.training, module.device
    if device.type != "cuda":
        target = torch.device(default_device) if isinstance(default_device, str) else default_device
        if not torch.cuda.is_available() or target.type != "cuda":
            raise MisconfigurationException(
                f"TensorRT only supports CUDA devices. The current device is {device}. "
                "Please set the `default_device` argument to a CUDA device."
            )
        module.to(target)
    if input_sample is None and module.example_input_array is None:
        raise ValueError(
            "Could not export to TensorRT since neither `input_sample` nor"
            " `model.example_input_array` attribute is set."
        )
    import copy

    import torch_tensorrt  # type: ignore[import-not-found]

    sample = input_sample if input_sample is not None else module.example_input_array
    sample = copy.deepcopy((sample,) if isinstance(sample, torch.Tensor) else sample)
    sample = module.transfer_batch_to_device(sample, module.device, 0)
    try:
        compiled = torch_tensorrt.compile(module=module.eval(), ir=ir, inputs=sample, **compile_kwargs)
    finally:
        module.train(training)
        module.to(device)
    if file_path is not None:
        if ir == "ts":
            if output_format != "torchscript":
                raise ValueError(
                    "TensorRT with IR mode 'ts' only supports output format 'torchscript'. "
                    f"The current output format is {output_format}."
                )
            torch.jit.save(compiled, file_path)
        else:
            torch_tensorrt.save(compiled, file_path, inputs=sample, output_format=output_format, retrace=retrace)
    return compiled


def _example(module: Any, given: Any, what: str) -> Any:
    example = given if given is not None else module.example_input_array
    if example is None:
        raise MisconfigurationException(
            f"{type(module).__name__}.{what}: no input to trace with; pass one, or set self.example_input_array."
        )
    return example


@torch.no_grad()
def export_onnx(module: Any, file_path: Any, input_sample: Any, **kwargs: Any) -> Any:
    """``torch.onnx.export`` of the module (eval mode for the export, its mode restored afterwards)."""
    import importlib.util

    if importlib.util.find_spec("onnx") is None:
        raise ModuleNotFoundError(
            f"{type(module).__name__}.to_onnx() needs the 'onnx' package, which is not installed: pip install onnx"
        )
    sample = _example(module, input_sample, "to_onnx()")
    training = module.training
    try:
        path = os.fspath(file_path) if isinstance(file_path, os.PathLike) else file_path
        return torch.onnx.export(module, sample, path, **kwargs)
    finally:
        module.train(training)


@contextlib.contextmanager
def jit_reading(module: Any) -> Iterator[None]:
    """While the block runs, torch.jit may read every property of ``module`` and of the modules inside it: a
    LightningModule's ``trainer`` answers None instead of raising when there is none (Lightning's
    ``_jit_is_scripting``), an inner LightningModule's too (torch.jit scripts children recursively)."""
    classes = {type(m) for m in module.modules() if hasattr(type(m), "_jit_is_scripting")}
    before = {cls: vars(cls).get("_jit_is_scripting") for cls in classes}
    for cls in classes:
        cls._jit_is_scripting = True
    try:
        yield
    finally:
        for cls, value in before.items():
            if value is None:
                del cls._jit_is_scripting
            else:
                cls._jit_is_scripting = value


@torch.no_grad()
def export_torchscript(module: Any, file_path: Any, method: str | None, example_inputs: Any, **kwargs: Any) -> Any:
    """The module scripted (``method="script"``) or traced (``"trace"``), in eval mode; saved when given a path."""
    training = module.training
    module.eval()
    try:
        with jit_reading(module):
            if method == "script":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    exported = torch.jit.script(module, **kwargs)
            elif method == "trace":
                if example_inputs is None and module.example_input_array is None:
                    raise MisconfigurationException(  # Lightning's ValueError and words
                        f"{type(module).__name__}.to_torchscript(): choosing method=`trace` requires either "
                        "`example_inputs` or `model.example_input_array` to be defined."
                    )
                sample = _example(module, example_inputs, "to_torchscript()")
                exported = torch.jit.trace(module, sample, **kwargs)  # type: ignore[no-untyped-call]
            else:
                raise MisconfigurationException(
                    f"to_torchscript(method={method!r}): the 'method' parameter only supports 'script' or 'trace', "
                    f"but value given was: {method}"
                )
    finally:
        module.train(training)
    if file_path is not None:
        torch.jit.save(exported, os.fspath(file_path))
    return exported
