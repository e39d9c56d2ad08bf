"""Lightning's import paths at accelplug: the mirror ``accelplug.pytorch`` and the short paths hand out
accelplug's own objects (never copies), and ``import accelplug`` still loads none of them."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

import accelplug
import accelplug.pytorch

MIRROR_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(accelplug.pytorch.__path__, prefix="accelplug.pytorch.")
)


def _origin(mirror: str) -> str:
    """The accelplug module a mirror module re-exports: ``accelplug.pytorch.x.y`` -> ``accelplug.x.y``
    (``accelplug.cli`` is accelplug's own command line: Lightning's CLI lives in ``accelplug.lightning_cli``)."""
    if mirror == "accelplug.pytorch.cli":
        return "accelplug.lightning_cli"
    return mirror.replace("accelplug.pytorch.", "accelplug.", 1)


@pytest.mark.parametrize("mirror", MIRROR_MODULES)
def test_every_mirror_name_is_the_object_of_accelplugs_own_module(mirror: str) -> None:
    module = importlib.import_module(mirror)
    origin_name = _origin(mirror)
    if mirror == "accelplug.pytorch.utilities.imports":  # private flags only, as Lightning's: no __all__ to walk
        flags = [name for name in vars(importlib.import_module(origin_name)) if name.endswith("_AVAILABLE")]
        assert flags, f"{origin_name} holds no availability flags"
        for name in flags:
            assert getattr(module, name) is getattr(importlib.import_module(origin_name), name), f"{mirror}.{name}"
        return
    assert module.__all__, f"{mirror} exports nothing"
    try:
        origin = importlib.import_module(origin_name)
    except ModuleNotFoundError:  # a Lightning-only grouping (core, trainer): its names come from the top level
        origin = accelplug
    for name in module.__all__:
        expected = getattr(origin, name, None)
        if expected is None:
            expected = getattr(accelplug, name)
        assert getattr(module, name) is expected, f"{mirror}.{name}"


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
