"""Lightning's import paths at accelplug: the mirror ``accelplug.pytorch`` and the short paths hand out
accelplug's own objects (never copies), and ``import accelplug`` still loads none of them."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
import warnings
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

import accelplug
import accelplug.pytorch

MIRROR_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(accelplug.pytorch.__path__, prefix="accelplug.pytorch.")
)


def _lightnings_public_exports() -> dict[str, list[str]]:
    """Per module under ``lightning.pytorch`` and ``lightning.fabric`` whose path has no private part, the public
    names of its ``__all__``, read from the installed Lightning (none where it is not installed). Private names
    Lightning lists there (its launchers, ``_runif_reasons``) are not walked."""
    if importlib.util.find_spec("lightning") is None:
        return {}
    exports = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # importing Lightning's packages: its own deprecations are not ours
        for root in ("lightning.pytorch", "lightning.fabric"):
            package = importlib.import_module(root)
            for name in [root] + [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{root}.")]:
                if any(part.startswith("_") for part in name.split(".")):
                    continue
                listed = getattr(importlib.import_module(name), "__all__", ())
                if public := [n for n in listed if not n.startswith("_")]:
                    exports[name] = public
    return exports


LIGHTNING_EXPORTS = _lightnings_public_exports()


#: Libraries whose objects a Lightning path names as Lightning does (type aliases: ``UntypedStorage``, ``Any``).
_SHARED = ("torch", "typing")
#: Names a Lightning path re-exports from another library, as Lightning's own module does (code written for
#: Lightning patches rich's ``Progress`` at the rich bar's path): the library each comes from.
_THIRD_PARTY = {("accelplug.pytorch.callbacks.progress.rich_progress", "Progress"): "rich"}


def _defining_module_holds(obj: object) -> bool:
    """Whether a class or function is the very object its defining module names (not a copy made elsewhere)."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    return module is not None and getattr(module, getattr(obj, "__name__", ""), None) is obj


@pytest.mark.parametrize("mirror", MIRROR_MODULES)
def test_every_mirror_name_is_the_object_of_accelplugs_own_module(mirror: str) -> None:
    """A Lightning path only imports: each class and function it names is the object of the room that defines it
    (accelplug's own, or the library accelplug shares with Lightning), under Lightning's name."""
    module = importlib.import_module(mirror)
    if mirror == "accelplug.pytorch.utilities.imports":  # private flags only, as Lightning's: no __all__ to walk
        origin = importlib.import_module("accelplug.utilities.imports")
        flags = [name for name in vars(origin) if name.endswith("_AVAILABLE")]
        assert flags, "accelplug.utilities.imports holds no availability flags"
        for name in flags:
            assert getattr(module, name) is getattr(origin, name), f"{mirror}.{name}"
        return
    assert module.__all__, f"{mirror} exports nothing"
    for name in module.__all__:
        obj = getattr(module, name)
        if not (isinstance(obj, type) or inspect.isfunction(obj)) or obj.__module__.split(".")[0] in _SHARED:
            continue  # a value, or a type alias for a torch or typing object
        if _THIRD_PARTY.get((mirror, name)) == obj.__module__.split(".")[0]:
            continue
        assert obj.__module__.split(".")[0] in ("accelplug", "lightning_utilities"), f"{mirror}.{name}"
        assert _defining_module_holds(obj), f"{mirror}.{name} is not the object {obj.__module__} defines"


def test_the_mirror_carries_each_source_modules_whole_export_list() -> None:
    for mirror in ("callbacks", "loggers", "utilities"):
        mine = importlib.import_module(f"accelplug.pytorch.{mirror}")
        source = importlib.import_module(f"accelplug.{mirror}")
        assert sorted(mine.__all__) == sorted(source.__all__)


def test_a_lightning_script_s_imports_resolve_to_the_top_level_names() -> None:
    import accelplug as L
    from accelplug import callbacks, cli, loggers, pytorch, utilities
    from accelplug.pytorch.callbacks import EarlyStopping, ModelCheckpoint
    from accelplug.pytorch.core import LightningModule
    from accelplug.pytorch.loggers.csv_logs import CSVLogger
    from accelplug.pytorch.trainer.trainer import Trainer
    from accelplug.pytorch.utilities.rank_zero import rank_zero_only

    assert (L.pytorch, L.callbacks, L.loggers, L.utilities, L.cli) == (pytorch, callbacks, loggers, utilities, cli)
    assert pytorch.Trainer is Trainer is L.Trainer
    assert pytorch.LightningModule is LightningModule is L.LightningModule
    assert pytorch.callbacks.EarlyStopping is EarlyStopping is callbacks.EarlyStopping is L.EarlyStopping
    assert ModelCheckpoint is L.ModelCheckpoint and CSVLogger is loggers.CSVLogger is L.CSVLogger
    assert rank_zero_only is utilities.rank_zero_only is pytorch.utilities.rank_zero_only
    assert pytorch.seed_everything is L.seed_everything
    assert cli.LightningCLI is pytorch.cli.LightningCLI and pytorch.cli_lightning_logo is pytorch.cli.cli_lightning_logo


def test_an_unknown_name_under_the_mirror_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        accelplug.pytorch.no_such_thing  # noqa: B018
    with pytest.raises(ImportError):
        importlib.import_module("accelplug.pytorch.no_such_module")


def test_lightnings_mirror_modules_are_all_present_where_accelplug_has_the_names() -> None:
    lightning = pytest.importorskip("lightning.pytorch", reason="compares with Lightning's package")
    for mirror in MIRROR_MODULES:
        lightnings = mirror.replace("accelplug.pytorch", "lightning.pytorch", 1)
        importlib.import_module(lightnings)  # a path accelplug has that Lightning does not would be invented
    assert lightning is not None


def test_every_mirror_module_is_reached_by_attributes_from_the_top_as_after_import_lightning(
    run_python: Callable[..., CompletedProcess[str]],
) -> None:
    """``import lightning`` loads nearly all of its modules, so scripts write
    ``L.pytorch.utilities.model_summary.ModelSummary`` without importing the module; accelplug loads each one on
    its first read (a fresh interpreter: this process has imported them all already)."""
    paths = [m for m in MIRROR_MODULES if not any(p.startswith("_") for p in m.split("."))]
    code = (
        "import accelplug, functools, sys\n"
        f"paths = {paths!r}\n"
        "failed = []\n"
        "for path in paths:\n"
        "    try:\n"
        "        functools.reduce(getattr, path.split('.')[1:], accelplug)\n"
        "    except AttributeError as error:\n"
        "        failed.append((path, str(error)))\n"
        "print(len(paths), failed)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(" ", 1) == [str(len(paths)), "[]\n"]
    assert len(paths) > 50


def test_importing_accelplug_loads_neither_the_mirror_nor_the_utilities(
    run_python: Callable[..., CompletedProcess[str]],
) -> None:
    code = (
        "import sys, accelplug\n"
        "watched = ('accelplug.pytorch', 'accelplug.utilities', 'lightning_utilities', 'accelplug.trainer')\n"
        "print([m for m in watched if m in sys.modules])\n"
        "accelplug.pytorch\n"
        "print('accelplug.pytorch' in sys.modules, 'jsonargparse' in sys.modules)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "True", "False"]  # the CLI's jsonargparse loads with the CLI only


@pytest.mark.parametrize("lightnings", sorted(LIGHTNING_EXPORTS))
def test_each_public_name_of_lightnings_module_is_at_accelplugs_path(lightnings: str) -> None:
    """``from lightning.pytorch.x import Name`` works as ``from accelplug.pytorch.x import Name`` (and so under
    the interop redirect, which maps ``pytorch_lightning``/``lightning_fabric`` to the same modules) for every
    public name of each of Lightning's ``__all__`` lists."""
    mine = importlib.import_module(lightnings.replace("lightning.", "accelplug.", 1))
    missing = [name for name in LIGHTNING_EXPORTS[lightnings] if not hasattr(mine, name)]
    assert not missing, f"{mine.__name__} lacks {missing}"


def test_xla_environment_is_at_lightnings_environments_path_as_the_back_ends_class() -> None:
    from accelplug.backends import XLAEnvironment
    from accelplug.pytorch.plugins.environments import XLAEnvironment as at_lightnings_path

    assert at_lightnings_path is XLAEnvironment


@pytest.mark.parametrize("where", ["accelplug", "accelplug.pytorch"])
def test_the_examples_banner_is_where_a_swapped_lightning_pytorch_import_looks(
    where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `from lightning.pytorch import cli_lightning_logo` becomes one of these two, depending on the swap
    module = importlib.import_module(where)
    module.cli_lightning_logo()
    assert capsys.readouterr().out.strip() == module.LIGHTNING_LOGO.strip() != ""


@pytest.mark.parametrize("where", ["accelplug.fabric.strategies", "accelplug.pytorch.strategies"])
def test_deepspeed_strategy_imports_by_lightnings_name_and_names_its_plugin(where: str) -> None:
    if importlib.util.find_spec("accelplug_deepspeed") is not None:
        pytest.skip("accelplug-deepspeed is installed here: the name is its class (its own tests cover it)")
    strategy = importlib.import_module(where).DeepSpeedStrategy
    assert strategy is accelplug.fabric.strategies.DeepSpeedStrategy
    # Lightning raises an ImportError when DeepSpeed is missing; accelplug's is one too, naming the plugin
    with pytest.raises(ImportError, match="pip install accelplug-deepspeed"):
        strategy(stage=2)
