"""Lightning 2.6's public surface, walked name by name against accelplug's.

What is walked (all read from the installed Lightning at collection time, nothing typed in by hand but the
lists of modules and classes below):

- import paths: every ``lightning.pytorch`` subpackage projects import and ``lightning.fabric``, at
  accelplug's matching path (``lightning.pytorch.x`` -> ``accelplug.pytorch.x``),
  plus the short aliases ``accelplug.callbacks``/``loggers``/``utilities`` exposing the same names;
- module names: ``__all__`` of ``lightning``, ``lightning.pytorch``, its ``callbacks``, ``loggers``,
  ``utilities``, ``profilers``, ``strategies`` and ``plugins``, and ``lightning.fabric``; ``LightningCLI``
  and its companions, ``Tuner``; and deeper paths the collected real projects import (``projects/``);
- class members: the Trainer's public class attributes and the ones its instances add, LightningModule's
  own (not ``torch.nn.Module``'s), LightningDataModule's, the Callback and Logger bases, the instances of
  the callbacks and loggers projects read attributes from, LightningCLI, Tuner and Fabric;
- signatures: parameter names, positions and defaults of the Trainer's constructor (one test per parameter),
  of every public method of the Trainer, Tuner and Fabric, of the LightningModule and LightningDataModule
  methods a project calls (not the hooks it overrides), and of the constructor of every class in the walked
  ``__all__`` lists, LightningCLI and Fabric. A signature test is skipped, naming the member test that fails,
  while accelplug lacks the name itself.

Each name is its own test, so a missing one is visible by name. ``KNOWN_MISSING`` (below) lists what accelplug
lacks today, measured; those tests are ``xfail(strict=True)``, so an entry must be deleted in the change that
adds the name. Names of accelerator back ends (XLA, DeepSpeed) are not walked: back ends belong to plugins,
never to ``src/accelplug`` (BRIEF), see ``NOT_IN_CORE``.

``python tests/lightning_compat/test_surface.py`` prints the inventory: per group, how many names Lightning
has and which accelplug lacks.
"""

from __future__ import annotations

import atexit
import enum
import importlib
import inspect
import logging
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

lightning = pytest.importorskip("lightning", reason="the surface walk reads Lightning's, which is not installed here")

# ==== what accelplug lacks today: delete an entry in the change that makes its test pass =====================
KNOWN_MISSING: frozenset[str] = frozenset(
    {
        # import paths
        # lightning
        # lightning.pytorch
        # lightning.pytorch.callbacks
        # lightning.pytorch.loggers
        # lightning.pytorch.utilities
        # lightning.pytorch.profilers
        # lightning.pytorch.strategies
        # lightning.pytorch.plugins
        # lightning.fabric
        # deeper paths
        # lightning.pytorch
        # deeper paths
        # Trainer
        # Trainer()
        # LightningModule
        # LightningDataModule
        # Logger
        # LightningCLI
        # Fabric
        # signatures: Trainer()
        # signatures: Trainer methods
        # signatures: LightningModule methods
        # signatures: constructors
    }
)

#: Lightning names left out of the walk, with the reason.
NOT_IN_CORE = {
    "lightning.pytorch.strategies.DeepSpeedStrategy": "a back end's name: a DeepSpeed plugin provides it",
    "lightning.pytorch.profilers.XLAProfiler": "a back end's name: an XLA plugin provides it",
    "lightning.pytorch.plugins.XLACheckpointIO": "a back end's name: an XLA plugin provides it",
    "lightning.pytorch.plugins.XLAPrecision": "a back end's name: an XLA plugin provides it",
    "lightning.pytorch.plugins.DeepSpeedPrecision": "a back end's name: a DeepSpeed plugin provides it",
}

#: Modules whose ``__all__`` is walked.
MODULES_WITH_ALL = (
    "lightning",
    "lightning.pytorch",
    "lightning.pytorch.callbacks",
    "lightning.pytorch.loggers",
    "lightning.pytorch.utilities",
    "lightning.pytorch.profilers",
    "lightning.pytorch.strategies",
    "lightning.pytorch.plugins",
    "lightning.fabric",
)

#: Names walked that are in no ``__all__``: the CLI and tuner modules, and the deeper paths the real projects
#: (tests/lightning_compat/projects/) and the Hydra template's configs import.
MORE_NAMES = (
    "lightning.pytorch.cli.LightningCLI",
    "lightning.pytorch.cli.LightningArgumentParser",
    "lightning.pytorch.cli.SaveConfigCallback",
    "lightning.pytorch.tuner.Tuner",
    "lightning.pytorch.cli_lightning_logo",  # every Lightning example calls it
    "lightning.pytorch.core.LightningModule",  # generative_adversarial_net.py
    "lightning.pytorch.trainer.Trainer",  # the Hydra template's configs/trainer/default.yaml
    "lightning.pytorch.demos.Transformer",  # examples/pytorch/basics/transformer.py
    "lightning.pytorch.callbacks.finetuning.BaseFinetuning",  # computer_vision_fine_tuning.py
    "lightning.pytorch.loggers.csv_logs.CSVLogger",  # the Hydra template's configs/logger/csv.yaml
    "lightning.pytorch.loggers.tensorboard.TensorBoardLogger",  # configs/logger/tensorboard.yaml
    "lightning.pytorch.utilities.rank_zero.rank_zero_only",
    "lightning.pytorch.utilities.types.STEP_OUTPUT",
    "lightning.pytorch.utilities.types.OptimizerLRScheduler",
    "lightning.pytorch.utilities.combined_loader.CombinedLoader",
    "lightning.pytorch.utilities.exceptions.MisconfigurationException",
    # public names of public modules that Lightning's own tests import (scripts/lightning_tests, plain redirect)
    "lightning.pytorch.accelerators.cpu.get_cpu_stats",
    "lightning.pytorch.utilities.memory.recursive_detach",
    "lightning.pytorch.overrides.distributed.UnrepeatedDistributedSampler",
    "lightning.pytorch.overrides.distributed.UnrepeatedDistributedSamplerWrapper",
)

#: Lightning modules a project imports from, each checked at accelplug's matching path (``pytorch_lightning``
#: maps to ``accelplug.pytorch`` as ``lightning.pytorch`` does, so it is one test).
IMPORT_PATHS = (
    "lightning",
    "lightning.pytorch",
    "lightning.pytorch.accelerators",
    "lightning.pytorch.callbacks",
    "lightning.pytorch.cli",
    "lightning.pytorch.core",
    "lightning.pytorch.demos",
    "lightning.pytorch.loggers",
    "lightning.pytorch.plugins",
    "lightning.pytorch.profilers",
    "lightning.pytorch.strategies",
    "lightning.pytorch.trainer",
    "lightning.pytorch.tuner",
    "lightning.pytorch.utilities",
    "lightning.fabric",
)

#: accelplug's short paths (``from accelplug import callbacks``) and the Lightning module whose names they carry.
ALIASES = {
    "accelplug.callbacks": "lightning.pytorch.callbacks",
    "accelplug.loggers": "lightning.pytorch.loggers",
    "accelplug.utilities": "lightning.pytorch.utilities",
}


@dataclass(frozen=True)
class Walked:
    """A class whose members are walked: where Lightning has it, and how to get the object to list."""

    label: str
    path: str
    #: keyword arguments to build an instance (its instance attributes are walked too), or None for the class
    instance: dict[str, Any] | None = None
    #: members of this class are left out (the base's, walked on their own)
    minus: str | None = None


#: where the walked logger instances may write (accelplug's open their files when built); removed at exit
_LOG_DIR = tempfile.mkdtemp(prefix="accelplug-surface-walk-")
atexit.register(shutil.rmtree, _LOG_DIR, True)
WALKED_CLASSES = (
    Walked("Trainer", "lightning.pytorch.Trainer"),
    Walked(
        "Trainer()",
        "lightning.pytorch.Trainer",
        instance={"logger": False, "enable_checkpointing": False, "enable_progress_bar": False},
        minus="lightning.pytorch.Trainer",
    ),
    Walked("LightningModule", "lightning.pytorch.LightningModule", minus="torch.nn.Module"),
    Walked("LightningDataModule", "lightning.pytorch.LightningDataModule"),
    Walked("Callback", "lightning.pytorch.Callback"),
    Walked("Logger", "lightning.pytorch.loggers.Logger"),
    Walked("ModelCheckpoint()", "lightning.pytorch.callbacks.ModelCheckpoint", {}, "lightning.pytorch.Callback"),
    Walked(
        "EarlyStopping()",
        "lightning.pytorch.callbacks.EarlyStopping",
        {"monitor": "val_loss"},
        "lightning.pytorch.Callback",
    ),
    Walked(
        "LearningRateMonitor()", "lightning.pytorch.callbacks.LearningRateMonitor", {}, "lightning.pytorch.Callback"
    ),
    Walked(
        "CSVLogger()", "lightning.pytorch.loggers.CSVLogger", {"save_dir": _LOG_DIR}, "lightning.pytorch.loggers.Logger"
    ),
    Walked(
        "TensorBoardLogger()",
        "lightning.pytorch.loggers.TensorBoardLogger",
        {"save_dir": _LOG_DIR},
        "lightning.pytorch.loggers.Logger",
    ),
    Walked("LightningCLI", "lightning.pytorch.cli.LightningCLI"),
    Walked("Tuner", "lightning.pytorch.tuner.Tuner"),
    Walked("Fabric", "lightning.fabric.Fabric"),
)

#: Classes whose public methods' signatures are compared (beside every walked class's constructor), and the
#: base whose methods are left out.
METHOD_SIGNATURES = {
    "Trainer": ("lightning.pytorch.Trainer", None),
    "LightningModule": ("lightning.pytorch.LightningModule", "torch.nn.Module"),
    "LightningDataModule": ("lightning.pytorch.LightningDataModule", None),
    "Tuner": ("lightning.pytorch.tuner.Tuner", None),
    "Fabric": ("lightning.fabric.Fabric", None),
}


# ==== looking things up ===========================================================================================
class Missing(Exception):
    """A path that does not resolve; the message says which part is missing."""


def accelplug_path(path: str) -> str:
    """Lightning's dotted path at accelplug: ``lightning[.x]`` -> ``accelplug[.x]``, ``pytorch_lightning`` ->
    ``accelplug.pytorch`` (the mapping of the one-line migration)."""
    root, _, rest = path.partition(".")
    base = "accelplug.pytorch" if root == "pytorch_lightning" else "accelplug"
    return f"{base}.{rest}" if rest else base


def resolve(path: str) -> Any:
    """The object at a dotted path: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and module_name.startswith(error.name):
                continue  # this prefix is not a module: try a shorter one
            raise  # the module exists but an import inside it failed: that is a bug to show, not a gap
        for depth, attribute in enumerate(parts[split:], start=split):
            if not hasattr(obj, attribute):
                raise Missing(f"{'.'.join(parts[:depth])} has no attribute {attribute!r}")
            obj = getattr(obj, attribute)
        return obj
    raise Missing(f"no module {parts[0]!r}")


def accelplug_class(path: str) -> Any:
    """accelplug's class for a Lightning class path: at the matching path, else the same name at the top level."""
    try:
        return resolve(accelplug_path(path))
    except Missing as at_path:
        name = path.rsplit(".", 1)[1]
        try:
            return resolve(f"accelplug.{name}")
        except Missing:
            raise Missing(f"{at_path} (and accelplug has no {name!r} either)") from None


@cache
def _quiet() -> None:
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")


def _instance(cls: type, kwargs: dict[str, Any]) -> Any:
    _quiet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**kwargs)


def public(names: Any) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def _members(obj: Any) -> set[str]:
    names = public(dir(obj))
    if not isinstance(obj, type):
        names |= public(vars(obj))
    return names


def lightning_members(walked: Walked) -> list[str]:
    cls = resolve(walked.path)
    names = _members(_instance(cls, walked.instance) if walked.instance is not None else cls)
    if walked.minus is not None:
        names -= public(dir(resolve(walked.minus)))
    return sorted(names)


def _has_member(obj: Any, name: str) -> bool:
    if name in dir(obj):
        return True
    try:
        inspect.getattr_static(obj, name)
        return True
    except AttributeError:
        pass
    try:  # a member served by __getattr__
        getattr(obj, name)
        return True
    except AttributeError:
        return False
    except Exception:
        return True  # it exists but cannot be read in this state (a property needing a running fit)


# ==== signatures ===================================================================================================
_HOOKS = frozenset(
    public(dir(resolve("lightning.pytorch.core.hooks.ModelHooks")))
    | public(dir(resolve("lightning.pytorch.core.hooks.DataHooks")))
    | public(dir(resolve("lightning.pytorch.core.hooks.CheckpointHooks")))
    | {
        "forward",
        "training_step",
        "validation_step",
        "test_step",
        "predict_step",
        "configure_optimizers",
        "configure_callbacks",
        "configure_gradient_clipping",
        "lr_scheduler_step",
        "optimizer_step",
        "optimizer_zero_grad",
        "backward",
        "on_exception",
        "state_dict",
        "load_state_dict",
    }
)


def _same_default(a: Any, b: Any) -> bool:
    """Equal values of Lightning's type (a subclass counts: accelplug marks untouched defaults that way)."""
    if a is b:
        return True
    if isinstance(a, type) and a.__module__.split(".")[0] == "lightning":  # Lightning's own class: accelplug's
        return isinstance(b, type) and b.__module__.split(".")[0] == "accelplug" and a.__name__ == b.__name__
    if type(a).__module__.split(".")[0] == "lightning" and not isinstance(a, enum.Enum):  # an instance of its class
        same_class = type(b).__module__.split(".")[0] == "accelplug" and type(a).__name__ == type(b).__name__
        return same_class and vars(a) == vars(b)
    if isinstance(a, enum.Enum) and isinstance(a, str) and type(b) is str:  # a str-valued enum: the same string
        return a.value == b
    if inspect.isfunction(a) and not a.__name__.startswith("_") and a.__module__.split(".")[0] == "lightning":
        # Lightning's own public function (BackboneFinetuning's ``multiplicative``): accelplug's of the same name
        return inspect.isfunction(b) and b.__module__.split(".")[0] == "accelplug" and a.__name__ == b.__name__
    if inspect.isfunction(a) and a.__name__.startswith("_"):  # Lightning's private sentinel, e.g. _do_nothing
        return b is None or (inspect.isfunction(b) and b.__name__.startswith("_"))
    if not isinstance(b, type(a)) or isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        equal = a == b
        return equal if isinstance(equal, bool) else repr(a) == repr(b)
    except Exception:
        return repr(a) == repr(b)


def _parameters(function: Any) -> list[inspect.Parameter]:
    signature = inspect.signature(function)
    return [p for name, p in signature.parameters.items() if name not in ("self", "cls")]


def signature_problems(expected_fn: Any, actual_fn: Any, only: str | None = None) -> list[str]:
    """Where calling ``actual_fn`` as Lightning's documentation calls ``expected_fn`` would break or differ."""
    expected, actual = _parameters(expected_fn), _parameters(actual_fn)
    by_name = {p.name: p for p in actual}
    positional = [p.name for p in actual if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    problems, misplaced = [], []
    for index, parameter in enumerate(expected):
        if only is not None and parameter.name != only:
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            if not any(p.kind is p.VAR_POSITIONAL for p in actual):
                problems.append(f"no *{parameter.name}")
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            if not any(p.kind is p.VAR_KEYWORD for p in actual):
                problems.append(f"no **{parameter.name}")
            continue
        mine = by_name.get(parameter.name)
        if mine is None:
            problems.append(f"no parameter {parameter.name!r}")
            continue
        if parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
            if mine.kind not in (mine.POSITIONAL_ONLY, mine.POSITIONAL_OR_KEYWORD):
                problems.append(f"{parameter.name!r} is keyword-only, Lightning's is positional #{index + 1}")
            elif positional.index(parameter.name) != index:
                misplaced.append(f"{parameter.name!r} is positional #{positional.index(parameter.name) + 1}")
                misplaced[-1] += f", Lightning's #{index + 1}"
        if not _same_default(parameter.default, mine.default):
            shown = "none" if mine.default is inspect.Parameter.empty else repr(mine.default)
            wanted = "none" if parameter.default is inspect.Parameter.empty else repr(parameter.default)
            problems.append(f"{parameter.name!r} defaults to {shown}, Lightning's to {wanted}")
    if misplaced:  # one shifted parameter moves all after it: the first says where the order breaks
        more = f" (and {len(misplaced) - 1} after it)" if len(misplaced) > 1 else ""
        problems.append(misplaced[0] + more)
    if only is None:
        known = {p.name for p in expected}
        for p in actual:
            required = p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            if p.name not in known and required:
                problems.append(f"{p.name!r} is required and Lightning has no such parameter")
    return problems


# ==== the items ====================================================================================================
@dataclass(frozen=True)
class Item:
    """One checked name: ``check()`` returns None when accelplug matches, else what is wrong."""

    id: str
    group: str
    check: Callable[[], str | None]
    #: for signature items: the member test whose failure makes this one skip
    needs: Callable[[], str | None] | None = None


def _import_check(path: str) -> Callable[[], str | None]:
    def check() -> str | None:
        target = accelplug_path(path)
        try:
            importlib.import_module(target)
        except ModuleNotFoundError as error:
            return f"import {target}: {error}"
        return None

    return check


def _alias_check(alias: str, lightning_module: str) -> Callable[[], str | None]:
    def check() -> str | None:
        try:
            module = importlib.import_module(alias)
        except ModuleNotFoundError as error:
            return f"import {alias}: {error}"
        wanted = [n for n in resolve(lightning_module).__all__ if f"{lightning_module}.{n}" not in NOT_IN_CORE]
        lacking = [n for n in wanted if not hasattr(module, n)]
        return f"{alias} lacks {lacking}" if lacking else None

    return check


def _name_check(path: str) -> Callable[[], str | None]:
    def check() -> str | None:
        try:
            resolve(accelplug_path(path))
        except Missing as missing:
            return f"{accelplug_path(path)}: {missing}"
        return None

    return check


@cache
def _accelplug_object(label: str) -> Any:
    """accelplug's class for a walked one, or the instance built from it (once: the member tests share it)."""
    walked = next(w for w in WALKED_CLASSES if w.label == label)
    cls = accelplug_class(walked.path)
    return cls if walked.instance is None else _instance(cls, walked.instance)


def _member_check(walked: Walked, name: str) -> Callable[[], str | None]:
    def check() -> str | None:
        try:
            target = _accelplug_object(walked.label)
        except Missing as missing:
            return f"no class for {walked.label}: {missing}"
        except Exception as error:
            return f"building {walked.label} with {walked.instance} raised {type(error).__name__}: {error}"
        cls = target if isinstance(target, type) else type(target)
        return None if _has_member(target, name) else f"{cls.__module__}.{cls.__qualname__} has no {name!r}"

    return check


def _signature_check(path: str, method: str, only: str | None = None) -> Callable[[], str | None]:
    def check() -> str | None:
        expected = getattr(resolve(path), method)
        actual = getattr(accelplug_class(path), method)
        problems = signature_problems(expected, actual, only)
        return "; ".join(problems) or None

    return check


def _signature_needs(path: str, method: str) -> Callable[[], str | None]:
    def needs() -> str | None:
        try:
            cls = accelplug_class(path)
        except Missing as missing:
            return f"accelplug lacks the class ({missing})"
        if not hasattr(cls, method):
            return f"accelplug's {cls.__name__} lacks {method!r}"
        return None

    return needs


def _module_names() -> Iterator[str]:
    for module in MODULES_WITH_ALL:
        for name in resolve(module).__all__:
            yield f"{module}.{name}"
    yield from MORE_NAMES


def _callable_members(cls: type, minus: str | None) -> list[str]:
    names = []
    for name in sorted(public(dir(cls)) - (public(dir(resolve(minus))) if minus else set())):
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (property, type)) or not callable(getattr(cls, name)):
            continue
        names.append(name)
    return names


def items() -> list[Item]:
    found: list[Item] = []
    for path in IMPORT_PATHS:
        found.append(Item(f"import {accelplug_path(path)}", "import paths", _import_check(path)))
    for alias, module in ALIASES.items():
        found.append(Item(f"import {alias}", "import paths", _alias_check(alias, module)))

    for path in _module_names():
        if path not in NOT_IN_CORE:
            group = path.rsplit(".", 1)[0] if path.rsplit(".", 1)[0] in MODULES_WITH_ALL else "deeper paths"
            found.append(Item(path, group, _name_check(path)))

    for walked in WALKED_CLASSES:
        for name in lightning_members(walked):
            found.append(Item(f"{walked.label}.{name}", walked.label, _member_check(walked, name)))

    trainer_init = resolve("lightning.pytorch.Trainer").__init__
    for parameter in _parameters(trainer_init):
        found.append(
            Item(
                f"signature Trainer({parameter.name}=)",
                "signatures: Trainer()",
                _signature_check("lightning.pytorch.Trainer", "__init__", parameter.name),
                _signature_needs("lightning.pytorch.Trainer", "__init__"),
            )
        )
    for label, (path, minus) in METHOD_SIGNATURES.items():
        for method in _callable_members(resolve(path), minus):
            if method in _HOOKS:
                continue
            found.append(
                Item(
                    f"signature {label}.{method}",
                    f"signatures: {label} methods",
                    _signature_check(path, method),
                    _signature_needs(path, method),
                )
            )
    seen: set[type] = {resolve("lightning.pytorch.Trainer")}
    for path in _module_names():
        cls = resolve(path)
        if path in NOT_IN_CORE or not isinstance(cls, type) or cls in seen:
            continue
        seen.add(cls)
        if not getattr(cls.__init__, "__module__", "").startswith("lightning"):
            continue  # object's, dict's or an enum's constructor: nothing of Lightning's to compare
        found.append(
            Item(
                f"signature {cls.__name__}()",
                "signatures: constructors",
                _signature_check(path, "__init__"),
                _signature_needs(path, "__init__"),
            )
        )
    return found


def _optional_package_missing(error: ModuleNotFoundError) -> bool:
    """Whether walking Lightning failed for want of one of its optional packages (jsonargparse, tensorboard...),
    rather than because an accelplug module failed to import (a bug, shown as the error it is)."""
    return not (error.name or "").startswith("accelplug")


try:
    ITEMS = items()
except ModuleNotFoundError as error:
    if not _optional_package_missing(error):
        raise
    pytest.skip(
        f"the surface walk imports Lightning's optional parts, and one needs a package missing here ({error}); "
        'pip install "accelplug[test]"',
        allow_module_level=True,
    )
assert len({item.id for item in ITEMS}) == len(ITEMS), "two walked items share an id"


def _params(kind: Callable[[Item], bool]) -> list[Any]:
    chosen = [item for item in ITEMS if kind(item)]
    return [
        pytest.param(
            item,
            id=item.id,
            marks=[pytest.mark.xfail(strict=True, reason="missing in accelplug today")]
            if item.id in KNOWN_MISSING
            else [],
        )
        for item in chosen
    ]


def _run(item: Item) -> None:
    if item.needs is not None:
        absent = item.needs()
        if absent is not None:
            pytest.skip(f"{absent}: the member test reports it; the signature is compared once it exists")
    problem = item.check()
    assert problem is None, problem


@pytest.mark.parametrize("item", _params(lambda item: item.group == "import paths"))
def test_import_path(item: Item) -> None:
    _run(item)


@pytest.mark.parametrize("item", _params(lambda item: item.group in MODULES_WITH_ALL or item.group == "deeper paths"))
def test_module_name(item: Item) -> None:
    _run(item)


@pytest.mark.parametrize("item", _params(lambda item: item.group in {w.label for w in WALKED_CLASSES}))
def test_class_member(item: Item) -> None:
    _run(item)


@pytest.mark.parametrize("item", _params(lambda item: item.group.startswith("signatures")))
def test_signature(item: Item) -> None:
    _run(item)


@pytest.mark.slow
def test_the_walk_skips_when_an_optional_package_is_missing(tmp_path: Any) -> None:
    """Without jsonargparse (Lightning's CLI needs it) the whole walk is skipped with the reason, not an error."""
    import subprocess
    from pathlib import Path

    here = Path(__file__)
    script = tmp_path / "blocked.py"
    script.write_text(
        "import sys\n"
        "sys.modules['jsonargparse'] = None  # as if it were not installed\n"
        "import pytest\n"
        f"sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', {str(here)!r}, '-k', 'test_import_path']))\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=here.parents[2], timeout=240, check=False
    )
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout + result.stderr
    assert "SKIPPED" in result.stdout and "jsonargparse" in result.stdout, result.stdout


def test_an_accelplug_import_failure_is_not_taken_for_a_missing_package() -> None:
    assert _optional_package_missing(ModuleNotFoundError("No module named 'tensorboard'", name="tensorboard"))
    assert _optional_package_missing(ModuleNotFoundError("wandb is not installed"))  # Lightning's own, nameless
    assert not _optional_package_missing(ModuleNotFoundError("No module", name="accelplug.core.moduel"))


def test_every_known_missing_entry_names_a_walked_item() -> None:
    unknown = KNOWN_MISSING - {item.id for item in ITEMS}
    assert not unknown, f"KNOWN_MISSING entries that are no test (renamed or gone from Lightning?): {sorted(unknown)}"


def test_the_walk_finds_lightnings_surface() -> None:
    """Guards the walk itself: a Lightning upgrade or a bug here must not shrink it silently."""
    groups = {item.group for item in ITEMS}
    assert {"import paths", "Trainer", "LightningModule", "lightning.pytorch.callbacks"} <= groups
    assert sum(item.group == "Trainer" for item in ITEMS) >= 60
    assert sum(item.group == "LightningModule" for item in ITEMS) >= 90
    assert "LightningModule.load_from_checkpoint" in {item.id for item in ITEMS}
    assert "LightningModule.parameters" not in {item.id for item in ITEMS}, "torch.nn.Module's own are not walked"


def test_signature_comparison_catches_each_kind_of_difference() -> None:
    def lightning_fit(
        self: Any, model: Any, dataloaders: Any = None, ckpt_path: Any = None, *, strict: bool = True
    ) -> None:
        """Lightning's shape."""

    def reordered(
        self: Any, model: Any, ckpt_path: Any = None, dataloaders: Any = None, *, strict: bool = True
    ) -> None:
        """Positional order differs."""

    def other_default(
        self: Any, model: Any, dataloaders: Any = None, ckpt_path: Any = None, *, strict: int = 1
    ) -> None:
        """Default differs in type."""

    def extra_required(
        self: Any, model: Any, dataloaders: Any = None, ckpt_path: Any = None, *, strict: bool = True, x: int
    ) -> None:
        """Needs an argument Lightning's callers do not pass."""

    assert signature_problems(lightning_fit, lightning_fit) == []
    assert signature_problems(lightning_fit, reordered) == [
        "'dataloaders' is positional #3, Lightning's #2 (and 1 after it)"
    ]
    assert signature_problems(lightning_fit, other_default) == ["'strict' defaults to 1, Lightning's to True"]
    assert signature_problems(lightning_fit, extra_required) == ["'x' is required and Lightning has no such parameter"]
    assert signature_problems(lightning_fit, lambda self, model, **kw: None) == [
        "no parameter 'dataloaders'",
        "no parameter 'ckpt_path'",
        "no parameter 'strict'",
    ]


def test_paths_map_as_the_one_line_migration_does() -> None:
    assert accelplug_path("lightning") == "accelplug"
    assert accelplug_path("lightning.pytorch.callbacks.EarlyStopping") == "accelplug.pytorch.callbacks.EarlyStopping"
    assert accelplug_path("pytorch_lightning.loggers") == "accelplug.pytorch.loggers"
    assert accelplug_path("lightning.fabric.Fabric") == "accelplug.fabric.Fabric"
    assert resolve("torch.nn.Module").__name__ == "Module"
    with pytest.raises(Missing, match="no attribute 'NoSuchThing'"):
        resolve("lightning.pytorch.callbacks.NoSuchThing")
    with pytest.raises(Missing, match="no attribute 'no_such_module'"):
        resolve("accelplug.pytorch.no_such_module")


# ==== the inventory ================================================================================================
def inventory() -> str:
    """Per group: how many names Lightning has there, how many accelplug lacks, and which."""
    lines, lacking_total, total = [], 0, 0
    groups: dict[str, list[Item]] = {}
    for item in ITEMS:
        groups.setdefault(item.group, []).append(item)
    for group, group_items in groups.items():
        lacking, skipped = [], 0
        for item in group_items:
            if item.needs is not None and item.needs() is not None:
                skipped += 1
                continue
            problem = item.check()
            if problem is not None:
                lacking.append((item.id, problem))
        compared = len(group_items) - skipped
        total += compared
        lacking_total += len(lacking)
        extra = f" ({skipped} not compared: the name is missing)" if skipped else ""
        lines.append(f"{group}: Lightning {len(group_items)}, accelplug lacks {len(lacking)} of {compared}{extra}")
        lines.extend(f"    {name}: {problem}" for name, problem in lacking)
    lines.append(f"in all: {lacking_total} of {total} compared names differ or are missing")
    return "\n".join(lines)


if __name__ == "__main__":
    if "--known-missing" in sys.argv:  # the failing ids, grouped, to paste into KNOWN_MISSING
        group = None
        for item in ITEMS:
            if (item.needs is None or item.needs() is None) and item.check() is not None:
                if item.group != group:
                    group = item.group
                    print(f"        # {group}")
                print(f"        {item.id!r},")
    else:
        print(inventory())
