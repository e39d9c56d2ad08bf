"""Where a name is imported from: Lightning's import paths hold no code, and paths accelplug had keep working.

A module at one of Lightning's import paths (``accelplug.pytorch``, ``accelplug.plugins``,
``accelplug.utilities``, ``accelplug.fabric.{accelerators,loggers,plugins,strategies,utilities}``) only imports
names and lists them in ``__all__``: the code lives in a room named by what it does, so "where does X live"
has one answer. Read from the source with ``ast``, as the layering test reads the graph.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from accelplug._import_paths import MOVED

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "accelplug"

#: Lightning's import paths under ``accelplug`` (a folder covers every module in it).
LIGHTNING_PATHS = (
    "pytorch",
    "plugins",
    "utilities",
    "fabric/accelerators",
    "fabric/loggers",
    "fabric/plugins",
    "fabric/strategies",
    "fabric/utilities",
)


def _runs_an_imported_main(node: ast.stmt) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__": main()``: a Lightning path one runs with ``python -m``
    (``upgrade_checkpoint``) calls the program it imported, and does nothing else."""
    if not isinstance(node, ast.If) or node.orelse or ast.unparse(node.test) != "__name__ == '__main__'":
        return False
    body = node.body
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Call)
        and isinstance(body[0].value.func, ast.Name)
        and not body[0].value.args
        and not body[0].value.keywords
    )


def definitions(source: str) -> list[str]:
    """What a module binds besides imports, ``__all__``, a ``__getattr__`` made by ``lazy_submodules`` and a
    ``__main__`` guard that calls an imported program."""
    found = []
    for index, node in enumerate(ast.parse(source).body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if names == ["__all__"]:
                continue
            lazy = isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "lazy_submodules"
            if names == ["__getattr__"] and lazy:
                continue
        if _runs_an_imported_main(node):
            continue
        found.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}")
    return found


def _lightning_path_modules() -> list[Path]:
    found: list[Path] = []
    for relative in LIGHTNING_PATHS:
        path = PACKAGE / relative
        found += [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    return found


@pytest.mark.parametrize("path", _lightning_path_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_at_a_lightning_path_only_imports(path: Path) -> None:
    found = definitions(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(PACKAGE)} defines code; move it to the room it belongs to:\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "source",
    [
        "def helper():\n    pass\n",
        "class Thing:\n    pass\n",
        "LIMIT = 3\n",
        "__getattr__ = make_getattr()\n",
        "if True:\n    import os\n",
        "if __name__ == '__main__':\n    main()\n    print('more')\n",
        "if __name__ == '__main__':\n    main(3)\n",
    ],
)
def test_the_check_finds_a_definition(source: str) -> None:
    assert definitions('"""A Lightning path."""\nfrom x import y\n__all__ = ["y"]\n' + source)


def test_the_check_accepts_imports_all_and_a_lazy_getattr() -> None:
    source = (
        '"""A Lightning path."""\n'
        "from __future__ import annotations\n"
        "from .._import_paths import lazy_submodules\n"
        "from ..callbacks import Callback\n"
        '__all__ = ["Callback"]\n'
        '__getattr__ = lazy_submodules(__name__, ("callbacks",))\n'
        "if __name__ == '__main__':\n    main()\n"
    )
    assert definitions(source) == []


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_moved_module_imports_from_its_old_path_as_the_same_module(old: str, new: str) -> None:
    sys.modules.pop(f"accelplug.{old}", None)  # warn afresh, whichever test imported it first
    with pytest.warns(DeprecationWarning, match=f"accelplug.{old} moved to accelplug.{new}"):
        module = importlib.import_module(f"accelplug.{old}")
    assert module is importlib.import_module(f"accelplug.{new}")


def test_a_name_from_an_old_path_is_the_object_of_the_new_one() -> None:
    from accelplug.core.module import LightningModule

    sys.modules.pop("accelplug.module", None)
    with pytest.warns(DeprecationWarning, match="accelplug.module moved to accelplug.core.module"):
        from accelplug.module import LightningModule as old  # type: ignore[import-not-found]
    assert old is LightningModule


def test_an_unknown_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"accelplug\.no_such_module"):
        importlib.import_module("accelplug.no_such_module")


def public_classes() -> dict[str, list[str]]:
    """Class name -> the modules defining a public (not underscored) class of that name at module level."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(path.relative_to(PACKAGE).as_posix())
    return found


def test_no_two_public_classes_share_a_name() -> None:
    shared = {name: where for name, where in public_classes().items() if len(where) > 1}
    assert not shared, f"one name, several classes (rename the one Lightning's API does not fix): {shared}"


@pytest.mark.parametrize(
    ("path", "name", "home"),
    [
        ("fabric.utilities.apply_func", "move_data_to_device", "data.batches"),
        ("fabric.utilities.apply_func", "convert_tensors_to_scalars", "data.batches"),
        ("fabric.utilities.apply_func", "convert_to_tensors", "data.batches"),
        ("fabric.utilities.exceptions", "MisconfigurationException", "errors"),
        ("fabric.utilities.warnings", "PossibleUserWarning", "errors"),
        ("fabric.utilities.seed", "pl_worker_init_function", "data.workers"),
        ("fabric.loggers.logger", "Logger", "loggers.logger"),
        ("fabric.loggers.logger", "rank_zero_experiment", "loggers.logger"),
    ],
)
def test_lightning_fabrics_utility_paths_give_accelplugs_one_object(path: str, name: str, home: str) -> None:
    """Each of these is a public name at the same path in Lightning Fabric; here it is the room's object."""
    lightning_module = importlib.import_module(f"lightning.{path}")
    assert hasattr(lightning_module, name)
    ours = getattr(importlib.import_module(f"accelplug.{path}"), name)
    expected_name = "worker_init_function" if name == "pl_worker_init_function" else name
    assert ours is getattr(importlib.import_module(f"accelplug.{home}"), expected_name)


@pytest.mark.parametrize(
    ("path", "name", "home"),
    [
        ("fabric.loggers.csv_logs", "CSVLogger", "loggers.csv_logs.FabricCSVLogger"),
        ("fabric.loggers.tensorboard", "TensorBoardLogger", "loggers.tensorboard.FabricTensorBoardLogger"),
    ],
)
def test_lightning_fabrics_logger_modules_give_fabrics_loggers(path: str, name: str, home: str) -> None:
    """Lightning Fabric's loggers at their module paths are the ones ``accelplug.fabric.loggers`` gives (not the
    Trainer's classes of the same names, which save hyper-parameters)."""
    assert hasattr(importlib.import_module(f"lightning.{path}"), name)
    module, class_name = home.rsplit(".", 1)
    ours = getattr(importlib.import_module(f"accelplug.{path}"), name)
    assert ours is getattr(importlib.import_module(f"accelplug.{module}"), class_name)
    assert ours is getattr(importlib.import_module("accelplug.fabric.loggers"), name)


def test_an_instance_check_against_a_module_not_loaded_is_false_and_loads_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    import torch

    from accelplug._import_paths import is_instance_if_loaded
    from accelplug.strategies.single_device import SingleDeviceStrategy

    strategy = SingleDeviceStrategy(torch.device("cpu"))
    monkeypatch.delitem(sys.modules, "accelplug.strategies.ddp", raising=False)
    assert not is_instance_if_loaded(strategy, "accelplug.strategies.ddp", "DDPStrategy")
    assert "accelplug.strategies.ddp" not in sys.modules
    assert is_instance_if_loaded(strategy, "accelplug.strategies.single_device", "SingleDeviceStrategy")
