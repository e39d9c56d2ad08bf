"""Building a module or datamodule back from a checkpoint, and exporting a module (ONNX, TorchScript).

``load_from_checkpoint`` follows Lightning's rules, so checkpoints Lightning wrote load too: the saved
hyper-parameters (``save_hyperparameters``) are the constructor's arguments, ``**kwargs`` override them,
an ``hparams_file`` (YAML or CSV, as Lightning's loggers write) replaces them, arguments the constructor
does not take are dropped unless it has ``**kwargs``, and the weights are loaded with ``strict`` (or the
module's ``strict_loading``). Tensors saved on a device this machine lacks are loaded on the CPU.
"""

from __future__ import annotations

import csv
import inspect
import os
import warnings
from pathlib import Path
from typing import IO, Any

import torch

from ..errors import MisconfigurationException
from ..overrides import overrides

__all__ = ["MissingPackageError", "export_onnx", "export_tensorrt", "export_torchscript", "load_from_checkpoint"]


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


def _hparams_from_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        import yaml

        with open(path, encoding="utf-8") as file:
            loaded = yaml.full_load(file)
        return dict(loaded or {})
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as file:
            return {row["key"]: yaml_value(row["value"]) for row in csv.DictReader(file)}
    raise MisconfigurationException(
        f"load_from_checkpoint(hparams_file={os.fspath(path)!r}): expected a .yaml, .yml or .csv file."
    )


def yaml_value(text: str) -> Any:
    """A CSV cell as the value it spells (numbers, booleans, None), else the text."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _constructor_arguments(cls: type, saved: dict[str, Any], given: dict[str, Any], name: Any) -> dict[str, Any]:
    parameters = inspect.signature(cls).parameters  # the constructor's, without self
    names = [n for n, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if isinstance(name, str) and name in names:  # saved from one dict/Namespace argument: passed back as it
        saved = {name: saved}
    arguments = {**saved, **given}
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return arguments
    return {k: v for k, v in arguments.items() if k in names}


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
    if isinstance(checkpoint_path, (str, os.PathLike)) and not Path(checkpoint_path).is_file():
        raise MisconfigurationException(
            f"{cls.__name__}.load_from_checkpoint({os.fspath(checkpoint_path)!r}): no such file."
        )
    location = map_location if map_location is not None else _to_cpu_when_missing
    checkpoint = torch.load(checkpoint_path, map_location=location, weights_only=weights_only)
    if not isinstance(checkpoint, dict):
        raise MisconfigurationException(
            f"{cls.__name__}.load_from_checkpoint: the file holds a {type(checkpoint).__name__}, not a checkpoint."
        )
    key = cls.CHECKPOINT_HYPER_PARAMS_KEY
    saved = dict(checkpoint.get(key) or {}) if hparams_file is None else _hparams_from_file(hparams_file)
    arguments = _constructor_arguments(cls, saved, kwargs, checkpoint.get(cls.CHECKPOINT_HYPER_PARAMS_NAME))
    obj = cls(**arguments)
    if not isinstance(obj, torch.nn.Module):  # a datamodule: its state, where Lightning (or accelplug) put it
        state = checkpoint.get(type(obj).__qualname__, checkpoint.get("datamodule"))
        if state is not None and callable(getattr(obj, "load_state_dict", None)):
            obj.load_state_dict(state)
        return obj
    return _load_weights(obj, checkpoint, strict)


def _load_weights(module: Any, checkpoint: dict[str, Any], strict: bool | None) -> Any:
    chosen = getattr(module, "_strict_loading", None)
    if chosen is not None and strict is not None and strict != chosen:
        raise MisconfigurationException(
            f"load_from_checkpoint(strict={strict!r}) contradicts {type(module).__name__}.strict_loading={chosen!r}; "
            "set the same value for both."
        )
    strict = module.strict_loading if strict is None else strict
    if overrides(module, "configure_model"):
        module.configure_model()
    module.on_load_checkpoint(checkpoint)
    state_dict = checkpoint.get("state_dict")
    if not isinstance(state_dict, dict):
        raise MisconfigurationException(f"load_from_checkpoint: the checkpoint has no 'state_dict' for {module!r}.")
    keys = module.load_state_dict(state_dict, strict=strict)
    if not strict and (keys.missing_keys or keys.unexpected_keys):
        warnings.warn(
            f"load_from_checkpoint(strict=False): missing from the checkpoint {keys.missing_keys}, "
            f"not in the model {keys.unexpected_keys}.",
            UserWarning,
            stacklevel=3,
        )
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


@torch.no_grad()
def export_torchscript(module: Any, file_path: Any, method: str | None, example_inputs: Any, **kwargs: Any) -> Any:
    """The module scripted (``method="script"``) or traced (``"trace"``), in eval mode; saved when given a path."""
    training = module.training
    module.eval()
    cls, before = type(module), vars(type(module)).get("_jit_is_scripting")
    cls._jit_is_scripting = True  # torch.jit reads every property; the trainer one must not raise
    try:
        if method == "script":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                exported = torch.jit.script(module, **kwargs)
        elif method == "trace":
            sample = _example(module, example_inputs, "to_torchscript()")
            exported = torch.jit.trace(module, sample, **kwargs)  # type: ignore[no-untyped-call]
        else:
            raise MisconfigurationException(f"to_torchscript(method={method!r}): expected 'script' or 'trace'.")
    finally:
        if before is None:
            del cls._jit_is_scripting
        else:
            cls._jit_is_scripting = before
        module.train(training)
    if file_path is not None:
        torch.jit.save(exported, os.fspath(file_path))
    return exported
