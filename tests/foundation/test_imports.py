"""The names the contract promises, and what importing them costs."""

from __future__ import annotations

import pluggy
import pytest

import accelplug
from accelplug import Accelerator, MisconfigurationException, Trainer, get_registry, hookimpl
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator
from accelplug.accelerators.cpu import CPUAccelerator as CPUFromModule
from accelplug.accelerators.cuda import CUDAAccelerator as CUDAFromModule
from accelplug.accelerators.mps import MPSAccelerator as MPSFromModule


def test_contract_names_are_importable_from_the_top_level() -> None:
    assert issubclass(MisconfigurationException, ValueError)
    assert callable(get_registry)
    assert isinstance(Trainer, type)
    assert isinstance(Accelerator, type)


def test_builtin_accelerators_are_the_same_classes_from_both_paths() -> None:
    assert (CPUAccelerator, CUDAAccelerator, MPSAccelerator) == (CPUFromModule, CUDAFromModule, MPSFromModule)


def test_hookimpl_marks_for_the_accelplug_project() -> None:
    assert isinstance(hookimpl, pluggy.HookimplMarker)
    assert hookimpl.project_name == "accelplug"


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        accelplug.no_such_name  # noqa: B018


def test_importing_accelplug_loads_no_plugins_and_no_registry(run_python) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import sys, accelplug\n"
        "watched = ('accelplug.registry', 'accelplug.builtin_plugin', 'pluggy', 'pydantic')\n"
        "loaded = [m for m in watched if m in sys.modules]\n"
        "print(loaded)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_get_registry_does_not_import_pydantic(run_python) -> None:  # type: ignore[no-untyped-def]
    code = "import sys, accelplug\naccelplug.get_registry().available()\nprint('pydantic' in sys.modules)\n"
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_every_public_name_resolves_to_an_object_of_its_room() -> None:
    rooms = {
        "Callback": "accelplug.callbacks.base",
        "ModelCheckpoint": "accelplug.callbacks.model_checkpoint",
        "EarlyStopping": "accelplug.callbacks.early_stopping",
        "CSVLogger": "accelplug.loggers.csv_logs",
        "TensorBoardLogger": "accelplug.loggers.tensorboard",
        "Trainer": "accelplug.trainer.trainer",
        "LightningModule": "accelplug.core.module",
        "Strategy": "accelplug.strategies.base",
        "NumericPrecision": "accelplug.precision.base",
    }
    for name in accelplug.__all__:
        assert getattr(accelplug, name) is not None, name
    assert {name: getattr(accelplug, name).__module__ for name in rooms} == rooms


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("accelplug.trainer.callbacks", "accelplug.callbacks", ("Callback", "ModelCheckpoint", "EarlyStopping")),
        ("accelplug.trainer.loggers", "accelplug.loggers", ("CSVLogger", "TensorBoardLogger", "next_version_dir")),
        ("accelplug.cli.models", "accelplug.cli.reports", ("ListReport", "EnvReport", "ConfigReport")),
    ],
)
def test_a_moved_user_path_still_imports_with_a_deprecation_warning(old: str, new: str, names: tuple[str, ...]) -> None:
    import importlib
    import sys

    sys.modules.pop(old, None)  # warn afresh, whichever test imported it first
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        shim = importlib.import_module(old)
    moved = importlib.import_module(new)
    assert all(getattr(shim, n) is getattr(moved, n) for n in names)


def test_the_old_name_of_numeric_precision_still_answers_with_a_deprecation_warning() -> None:
    from accelplug.plugins.precision import Precision as LightningPrecision
    from accelplug.precision.base import NumericPrecision

    with pytest.warns(DeprecationWarning, match="Precision is now NumericPrecision"):
        old = accelplug.Precision
    assert old is NumericPrecision
    assert LightningPrecision is not NumericPrecision and issubclass(LightningPrecision, NumericPrecision)


def test_every_callback_and_logger_class_is_exported_from_accelplug_itself() -> None:
    """The contract: callbacks and loggers are also names of ``accelplug`` (``L.ModelCheckpoint``, ``L.Logger``)."""
    import inspect

    import accelplug
    import accelplug.callbacks
    import accelplug.loggers

    for package in (accelplug.callbacks, accelplug.loggers):
        classes = [n for n in package.__all__ if inspect.isclass(getattr(package, n)) and not n.endswith("Error")]
        missing = [n for n in classes if getattr(accelplug, n, None) is not getattr(package, n)]
        assert not missing, f"{package.__name__} classes not exported from accelplug: {missing}"
