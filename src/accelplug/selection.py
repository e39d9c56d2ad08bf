"""One place that turns ``accelerator``/``devices``/``strategy``/``precision`` into a run's plan.

The Trainer, Fabric, ``accelplug launch`` and ``config`` all call :func:`select`. User input is validated once
here with plain type checks (so the shape of each argument is checked and reported the same way everywhere,
at no import cost) and the result is a frozen :class:`Selection` of plain values that nothing
downstream has to re-check. The Trainer and Fabric go one step further through :func:`build`, which takes the
run's :class:`Choices` and ``plugins=`` and returns a typed :class:`RunSetup` holding the strategy and precision
objects as well: one way to turn arguments into a run, with no string-keyed dicts between the steps.
Resolving ``"auto"`` asks accelerators only through their cheap class-level queries, so CUDA is never
initialised in the calling process and forking afterwards stays safe.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ._import_paths import is_instance_if_loaded
from ._record import record
from .accelerator import Accelerator
from .environments.base import MAX_PROCESSES, ClusterEnvironment
from .errors import AcceleratorUnavailableError, MisconfigurationException
from .hardware.devices import parse_devices
from .precision.base import NumericPrecision
from .precision.names import ACCEPTED_PRECISIONS, DTYPE_WORDS, PRECISION_ALIASES, normalize_precision
from .registry import AcceleratorRegistry, get_registry
from .status import AcceleratorStatus
from .strategies.base import Strategy

if TYPE_CHECKING:
    from .checkpoint import CheckpointIO
    from .strategies.layer_sync import LayerSync

__all__ = [
    "ACCELERATOR_ENV",
    "FORK_STRATEGIES",
    "PRECISION_ALIASES",
    "BothPrecisions",
    "Choices",
    "DevicesTypeError",
    "RunPlugins",
    "RunSetup",
    "Selection",
    "adopt_environment",
    "attach_environment",
    "build",
    "check_precision_runs",
    "cluster_environment",
    "cpu_half_as_bf16",
    "give_strategy_its_plan",
    "normalize_precision",
    "plugin_kinds",
    "select",
    "sort_plugins",
]

ACCELERATOR_ENV = "ACCELPLUG_ACCELERATOR"
#: Lightning's DDP spellings whose processes are forked from this one (a notebook's kernel included).
FORK_STRATEGIES = ("ddp_fork", "ddp_notebook")


@record(frozen=True)
class Selection:
    """The validated plan for a run: which accelerator, which devices, how, at what precision."""

    accelerator: Accelerator
    device_ids: tuple[int, ...]
    strategy: str
    precision: str
    #: Why this accelerator was chosen, in words (shown by ``accelplug demo`` and ``launch``).
    reason: str
    #: The ``Strategy`` object the user passed (``strategy=FSDPStrategy(...)``), kept with its options;
    #: None when a name was given and the Trainer makes one from the registry.
    strategy_object: Strategy | None = None
    #: How the DDP processes start when this process runs alone: ``"popen"`` (the script is started again
    #: under torchrun), ``"fork"`` (``strategy="ddp_fork"``/``"ddp_notebook"``: forked at ``fit``, which
    #: works in a notebook) or ``"spawn"`` (``"ddp_spawn"``: fresh interpreters receive the objects pickled).
    start_method: str = "popen"

    @property
    def accelerator_name(self) -> str:
        return self.accelerator.name

    @property
    def num_devices(self) -> int:
        return len(self.device_ids)

    @property
    def devices(self) -> tuple[torch.device, ...]:
        return tuple(self.accelerator.get_device(i) for i in self.device_ids)

    @property
    def root_device(self) -> torch.device:
        """This process's device: under a launcher, the one at index ``LOCAL_RANK``."""
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if local_rank >= len(self.device_ids):
            local_rank = 0
        return self.accelerator.get_device(self.device_ids[local_rank])


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shape_ok(field: str, value: object) -> bool:
    """Whether ``value`` has a type ``field`` accepts (its content is checked later, with the registry)."""
    if field == "accelerator":
        return isinstance(value, (str, Accelerator)) or (isinstance(value, type) and issubclass(value, Accelerator))
    if field == "devices":
        if _is_int(value) or isinstance(value, str):
            return True
        return isinstance(value, (list, tuple)) and all(_is_int(v) for v in value)
    if field == "strategy":
        return isinstance(value, (str, Strategy))
    return _is_int(value) or isinstance(value, str)  # precision


def _shape_problem(field: str, value: object) -> str:
    if field == "strategy" and isinstance(value, type) and issubclass(value, Strategy):
        return f"strategy={value!r} is a class; pass an instance: strategy={value.__name__}(...)"
    problem = f"{field}={value!r} has type {type(value).__name__}: {_ACCEPTED[field]}"
    meant = DTYPE_WORDS.get(str(value).lower()) if field == "precision" else None  # a torch.dtype, say
    return f"{problem} (did you mean {meant!r}?)" if meant else problem


def _validate_shapes(accelerator: object, devices: object, strategy: object, precision: object) -> None:
    """Check each argument's type and report every mismatch in one message.

    Plain ``isinstance`` checks (strict: a bool is not an int, a float is not a count) rather than a
    validation library, because this runs in every ``Trainer(...)`` and must cost nothing at start-up.
    """
    given = {"accelerator": accelerator, "devices": devices, "strategy": strategy, "precision": precision}
    wrong = [field for field, value in given.items() if not _shape_ok(field, value)]
    if wrong:
        message = "; ".join(_shape_problem(field, given[field]) for field in wrong) + "."
        if "devices" in wrong:  # Lightning's TypeError, in its words
            raise DevicesTypeError(
                f"{message} Devices must be an int, a string, a sequence of ints, but you passed {devices!r}."
            )
        raise MisconfigurationException(message)


class DevicesTypeError(MisconfigurationException, TypeError):
    """``devices`` of a type no accelerator accepts (``devices=["0"]``): a configuration error naming the value, and
    the ``TypeError`` Lightning raises there, so either ``except`` catches it."""


_ACCEPTED = {
    "accelerator": "expected 'auto', 'gpu', a registered accelerator name, or an Accelerator subclass or instance",
    "devices": 'expected "auto", a positive int, -1, a list of ints, or a string such as "2" or "0,2"',
    "strategy": (
        "expected 'auto', a registered strategy name such as 'single_device', 'ddp' or 'fsdp', "
        "or a Strategy instance such as FSDPStrategy(...)"
    ),
    "precision": f"expected one of {ACCEPTED_PRECISIONS}",
}


@record(frozen=True)
class RunPlugins:
    """Lightning's ``plugins=`` argument (Trainer and Fabric) sorted by kind: at most one object of each."""

    cluster_environment: ClusterEnvironment | None = None
    precision: NumericPrecision | None = None
    #: What happens to the model's layers across processes (``TorchSyncBatchNorm()`` is ``sync_batchnorm=True``).
    layer_sync: LayerSync | None = None
    #: the writer every checkpoint goes through (``AsyncCheckpointIO()``, a user's ``CheckpointIO`` subclass)
    checkpoint_io: CheckpointIO | None = None


def plugin_kinds() -> tuple[tuple[type[Any], str], ...]:
    """What ``plugins=`` may hold: each kind's base class and the :class:`RunPlugins` field it fills. An object is
    sorted by ``isinstance``, so a subclass of any kind (a user's own ``ClusterEnvironment``) joins its kind. The
    layer-sync and checkpoint-writer classes are imported here, where ``plugins=`` holds something, not with every
    Trainer."""
    from .checkpoint import CheckpointIO
    from .strategies.layer_sync import LayerSync

    return (
        (ClusterEnvironment, "cluster_environment"),
        (NumericPrecision, "precision"),
        (LayerSync, "layer_sync"),
        (CheckpointIO, "checkpoint_io"),
    )


#: How an error names a kind: by Lightning's class name, which is what a user passes (a precision object is
#: Lightning's ``Precision`` or one of accelplug's ``NumericPrecision`` classes under it).
_KIND_NAMES = {"precision": "Precision"}


def sort_plugins(plugins: Any) -> RunPlugins:
    """``plugins`` (None, one object or a list/tuple of them) as a :class:`RunPlugins`, refusing what fits no kind.

    Two objects of one kind are refused rather than one silently winning (Lightning raises for two
    cluster environments or two precisions too).
    """
    if plugins is None or plugins is False or isinstance(plugins, RunPlugins):
        return plugins or RunPlugins()
    items = list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
    found: dict[str, list[Any]] = {}
    every_kind = plugin_kinds()
    kinds = ", ".join(_KIND_NAMES.get(field, base.__name__) for base, field in every_kind)
    for item in items:
        slot = next((field for base, field in every_kind if isinstance(item, base)), None)
        if slot is None:
            given = repr(plugins) if len(repr(plugins)) <= 80 else f"[... {len(items)} objects]"
            shown = repr(item) if len(repr(item)) <= 60 else type(item).__name__
            raise MisconfigurationException(
                f"plugins={given}: {shown} is not a plugin object accelplug uses; accepted are instances of "
                f"{kinds} (choose a precision by name with precision=..., a strategy with strategy=...)."
                + _plugin_hint(item)
            )
        found.setdefault(slot, []).append(item)
    repeated = {slot: objects for slot, objects in found.items() if len(objects) > 1}
    if repeated:
        kind_of = {field: _KIND_NAMES.get(field, base.__name__) for base, field in every_kind}
        details = "; ".join(
            f"{len(objects)} objects of one kind ({', '.join(type(o).__name__ for o in objects)})"
            for objects in repeated.values()
        )
        raise MisconfigurationException(
            f"Received multiple values for {', '.join(kind_of[slot] for slot in repeated)} flags in `plugins`: "
            f"plugins holds {details}. Expected one value for each type at most; pass one of them."
        )
    return RunPlugins(**{slot: objects[0] for slot, objects in found.items()})


def _plugin_hint(item: object) -> str:
    """What the user probably meant: a class where an instance belongs, or a writer not built on CheckpointIO."""
    if isinstance(item, type) and any(issubclass(item, base) for base, _ in plugin_kinds()):
        return f" {item.__name__} is a class: pass an instance, {item.__name__}()."
    if all(callable(getattr(item, name, None)) for name in ("save_checkpoint", "load_checkpoint")):
        return (
            f" {type(item).__name__} has save_checkpoint/load_checkpoint but is no CheckpointIO: subclass "
            "accelplug.plugins.CheckpointIO (Lightning's base) so the Trainer writes through it."
        )
    return ""


def _check_world(num_nodes: int, num_devices: int) -> None:
    """``num_nodes`` x devices must fit the ranks torch.distributed can count (a config's ``10**23`` does not)."""
    if num_nodes * num_devices > MAX_PROCESSES:
        raise MisconfigurationException(
            f"num_nodes={num_nodes} with {num_devices} device(s) per node is {num_nodes * num_devices} processes; "
            f"expected at most {MAX_PROCESSES} in all (torch.distributed counts ranks in 32-bit ints)."
        )


def _launched_local_world_size() -> int | None:
    """Processes per node when started by torchrun / ``accelplug launch``, else None."""
    value = os.environ.get("LOCAL_WORLD_SIZE", "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def _skipped(registry: AcceleratorRegistry) -> str:
    """The accelerators ``"auto"`` passed over because their plugin misbehaved, in words (or "")."""
    broken = registry.misbehaving()
    if not broken:
        return ""
    return "; skipped because their plugin misbehaved: " + "; ".join(f"{s.name!r} ({s.problem})" for s in broken)


def _resolve_accelerator(
    accelerator: Any, registry: AcceleratorRegistry
) -> tuple[Accelerator | None, type[Accelerator], str]:
    if isinstance(accelerator, Accelerator):
        cls: type[Accelerator] = type(accelerator)
        instance: Accelerator | None = accelerator
        why = f"{cls.name!r} was passed as an Accelerator instance"
    elif isinstance(accelerator, type) and issubclass(accelerator, Accelerator):
        cls, instance, why = accelerator, None, f"{accelerator.name!r} was passed as an Accelerator class"
    else:
        name = accelerator.strip().lower()
        instance = None
        if name == "auto":
            forced = os.environ.get(ACCELERATOR_ENV, "").strip()
            if forced and forced.lower() != "auto":
                try:
                    cls = registry.get(forced)
                except MisconfigurationException as exc:
                    raise MisconfigurationException(f"{ACCELERATOR_ENV}={forced!r} is invalid: {exc}") from None
                why = f"{ACCELERATOR_ENV}={forced!r} is set (e.g. by `accelplug launch --cpu`), so 'auto' uses it"
            else:
                available = registry.available()
                cls = registry.get(available[0])
                others = ", ".join(available[1:]) or "nothing else"
                why = f"'auto' picked {cls.name!r}: the best available here (also available: {others})"
                why += _skipped(registry)
        elif name == "gpu":
            gpus = [registry.get(n) for n in registry.available() if registry.get(n).is_gpu]
            if not gpus:
                reasons = "; ".join(
                    f"{e.cls.name}: {registry.status(e.cls).reason}" for e in registry.entries() if e.cls.is_gpu
                )
                raise AcceleratorUnavailableError(
                    "gpu",
                    f"No supported gpu backend found! None of the GPU accelerators is available ({reasons})",
                    registry.available(),
                )
            cls = gpus[0]
            why = f"'gpu' picked {cls.name!r}: the best available GPU accelerator"
        else:
            cls = registry.get(name)
            why = f"{cls.name!r} was requested"
    return instance, cls, why


def _device_ids(
    cls: type[Accelerator], devices: object, status: AcceleratorStatus, registry: AcceleratorRegistry
) -> list[int]:
    """``cls.parse_devices(devices)``, answered from the accelerator's checked status where possible.

    The base class's ``parse_devices`` only needs the device counts, which the registry has already
    asked (once, in isolation, for a plugin); an accelerator that overrides it is asked directly.
    """
    if getattr(cls.parse_devices, "__func__", None) is getattr(Accelerator.parse_devices, "__func__", None):
        return parse_devices(devices, status.device_count, cls.name, status.auto_device_count)
    ids = cls.parse_devices(devices)
    if not (isinstance(ids, list) and ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
        raise MisconfigurationException(
            f"accelerator {cls.name!r} answered devices={devices!r} with {ids!r}, not a list of device indices; "
            f"its parse_devices() is broken (report it to {registry.source(cls.name).describe()})."
        )
    return ids


def _single_process_strategy(supported: tuple[str, ...], registry: AcceleratorRegistry) -> str:
    """What ``strategy="auto"`` means for one device: the accelerator's first supported strategy when that
    one runs in a single process (a backend whose device needs its own handling lists its strategy
    first), else ``single_device``."""
    first = supported[0] if supported else "single_device"
    if first in registry.strategy_names() and not registry.get_strategy(first).is_distributed:
        return first
    return "single_device"


def _resolve_strategy(
    strategy: str | Strategy,
    accelerator: type[Accelerator],
    num_devices: int,
    supported: tuple[str, ...],
    registry: AcceleratorRegistry,
    num_nodes: int = 1,
) -> str:
    world = os.environ.get("WORLD_SIZE", "").strip()
    launched = (_launched_local_world_size() or 1) > 1 or (world.isascii() and world.isdigit() and int(world) > 1)
    if isinstance(strategy, Strategy):
        strategy_cls: type[Strategy] = type(strategy)
        name = strategy_cls.name
    else:
        name = strategy.strip().lower()
        if name == "auto":
            if num_devices == 1 and num_nodes == 1 and not launched:  # several nodes: DDP, as in Lightning
                return _single_process_strategy(supported, registry)
            name = "ddp"
        strategy_cls = registry.get_strategy(name)
    verdict = strategy_cls.supports(accelerator)
    if not (name in supported if verdict is None else verdict):
        why = strategy_cls.unsupported_reason(accelerator)
        if why is None and accelerator.name == "mps":
            why = (
                "the Apple GPU is a single device, and torch.distributed's backends (gloo, nccl) cannot "
                "move mps tensors, so MPS runs on one device with strategy 'single_device' only"
            )
            if name.startswith("ddp"):  # Lightning's words for the DDP names
                why += " (strategies from the DDP family are not supported on the MPS accelerator)"
        elif why is None:
            why = f"accelerator {accelerator.name!r} supports only {', '.join(repr(s) for s in supported)}"
        raise MisconfigurationException(f"strategy={strategy!r} cannot run on {accelerator.name!r}: {why}.")
    if not strategy_cls.is_distributed and num_devices > 1:
        raise MisconfigurationException(
            f"strategy={strategy!r} uses one device, but {num_devices} devices were selected; "
            "use strategy='ddp' or devices=1."
        )
    return name


def check_precision_runs(
    registry: AcceleratorRegistry, cls: type[Accelerator], listed: tuple[str, ...], given: object, canonical: str
) -> None:
    """Refuse a precision ``cls`` cannot train in, naming the ones it can (``listed``: its checked own list)."""
    if not registry.can_train_in(canonical, cls, listed):
        extra = " (the Apple GPU has no float64)" if cls.name == "mps" and canonical == "64-true" else ""
        autocast_dtype = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(canonical)
        from .hardware.capabilities import capabilities  # the refusal's detail only

        backend = capabilities(cls.device_type)
        lacking = backend.autocast_refusal(autocast_dtype) if autocast_dtype and backend.is_privateuse1() else None
        if lacking is not None:
            extra = f": {lacking}"
        raise MisconfigurationException(
            f"precision={given!r} cannot run on {cls.name!r}{extra}. It supports: "
            f"{', '.join(repr(p) for p in registry.trainable_precisions(cls, listed))}."
        )


def select(
    accelerator: str | Accelerator | type[Accelerator] = "auto",
    devices: int | str | list[int] | tuple[int, ...] = "auto",
    strategy: str | Strategy = "auto",
    precision: str | int = "32-true",
    *,
    registry: AcceleratorRegistry | None = None,
    num_nodes: int = 1,
) -> Selection:
    """Validate the four user-facing choices and resolve them into a :class:`Selection`.

    ``strategy`` may be a name or a ``Strategy`` object carrying its own options (Lightning's habit:
    ``strategy=FSDPStrategy(auto_wrap_policy={Block})``); the object is checked like a name and kept.
    ``num_nodes`` above 1 makes ``strategy="auto"`` DDP even with one device per node, as in Lightning.
    """
    start_method, forking_name = "popen", None
    if isinstance(strategy, str) and strategy.strip().lower() in FORK_STRATEGIES:
        forking_name = strategy.strip().lower()
        strategy, start_method = "ddp", "fork"  # checked as "ddp"; run under its own (preset) name below
    _validate_shapes(accelerator, devices, strategy, precision)
    registry = registry or get_registry()
    if isinstance(accelerator, type) and accelerator.name not in registry.names():
        registry.register(accelerator)
    given, cls, why = _resolve_accelerator(accelerator, registry)
    status = registry.status(cls)  # a plugin's answers were asked once, in isolation; a built-in's just now
    if status.reason is not None:
        raise AcceleratorUnavailableError(cls.name, status.reason, registry.available(), class_name=cls.__name__)
    instance = given if given is not None else cls()
    local_world = _launched_local_world_size()
    if local_world and isinstance(devices, str) and devices.strip().lower() == "auto":
        devices = local_world  # under torchrun, "auto" means one device per local process
    device_ids = _device_ids(cls, devices, status, registry)
    if local_world and local_world != len(device_ids):
        raise MisconfigurationException(
            f"devices={devices!r} selects {len(device_ids)} device(s), but this process was launched "
            f"with {local_world} processes per node (LOCAL_WORLD_SIZE); use devices={local_world} or 'auto'."
        )
    _check_world(num_nodes, len(device_ids))
    strategy_name = _resolve_strategy(strategy, cls, len(device_ids), status.strategies, registry, num_nodes)
    canonical = normalize_precision(precision, registry.precision_aliases())
    check_precision_runs(registry, cls, status.precisions, precision, canonical)
    strategy_object = strategy if isinstance(strategy, Strategy) else None
    if forking_name is None:  # "ddp_spawn", DDPStrategy(start_method="spawn"): processes started at the call
        start_method = getattr(strategy_object or registry.get_strategy(strategy_name), "preset_start_method", "popen")
        start_method = getattr(strategy_object, "start_method", start_method)
    if len(device_ids) == 1 or num_nodes > 1 or (forking_name is not None and strategy_name != "ddp"):
        start_method = "popen"  # one process, several machines (a launcher's), another strategy: nothing to start
    if forking_name is not None and strategy_name == "ddp":
        strategy_name = forking_name  # the registered preset: Lightning's DDPStrategy(start_method="fork")
    return Selection(instance, tuple(device_ids), strategy_name, canonical, why, strategy_object, start_method)


@record(frozen=True)
class Choices:
    """What a run was asked for, before anything is resolved: each an argument, else ``ACCELPLUG_*`` or the config
    file, else the built-in default (the Trainer's :func:`~accelplug.trainer.options.defaults.resolve_defaults`)."""

    accelerator: str | Accelerator | type[Accelerator] = "auto"
    devices: int | str | list[int] | tuple[int, ...] = "auto"
    strategy: str | Strategy = "auto"
    precision: str | int = "32-true"
    num_nodes: int = 1
    #: Apple's MPS fallback to the CPU for operators MPS lacks (the Trainer's ``mps_fallback``).
    mps_fallback: bool = False


@record(frozen=True)
class RunSetup:
    """The typed record :func:`build` returns and both the Trainer and Fabric run with: the resolved
    :class:`Selection` and the objects made from it (strategy, precision), with the ``plugins=`` that ride along."""

    selection: Selection
    #: The strategy object: the user's own (``strategy=DDPStrategy(...)``) or the registry's for the chosen name,
    #: its precision plugin and checkpoint writer attached.
    strategy: Strategy
    precision: NumericPrecision
    num_nodes: int
    #: How processes start when this one runs alone: "popen" (the script is started again), "fork" or "spawn".
    start_method: str
    #: The ``ClusterEnvironment`` given in ``plugins`` (None: the one detected when processes start).
    cluster_environment: ClusterEnvironment | None = None
    #: The ``LayerSync`` given in ``plugins`` (the Trainer adds ``sync_batchnorm=True``'s).
    layer_sync: LayerSync | None = None

    @property
    def accelerator(self) -> Accelerator:
        return self.selection.accelerator

    @property
    def device_ids(self) -> tuple[int, ...]:
        return self.selection.device_ids

    @property
    def num_devices(self) -> int:
        return self.selection.num_devices

    @property
    def precision_name(self) -> str:
        return self.selection.precision

    @property
    def root_device(self) -> torch.device:
        return self.selection.root_device


class BothPrecisions(MisconfigurationException):
    """``precision=`` and a precision object in ``plugins=``: Lightning refuses the pair (Trainer and Fabric)."""


def build(
    choices: Choices,
    plugins: RunPlugins | None = None,
    *,
    precision_given: bool = True,
    make_strategy: Callable[[str], Strategy] | None = None,
    adjust: Callable[[Selection], Selection] | None = None,
    select_with: Callable[..., Selection] | None = None,
) -> RunSetup:
    """The run's :class:`RunSetup` from what was asked (``choices``) and the sorted ``plugins=``: one way for the
    Trainer and Fabric.

    A precision object in ``plugins`` chooses the precision (its registered name is checked against the
    accelerator like a name; a user's own trains as its numerics say); with ``precision=`` also passed
    (``precision_given``) the pair is refused, in Lightning's words. ``make_strategy`` makes the strategy object for
    a name (default: the registry's class); ``adjust`` may change the selection before objects are made from it
    (Fabric turns ``"16-mixed"`` on the CPU into ``"bf16-mixed"``); ``select_with`` replaces :func:`select`, called
    with the same arguments (Fabric's ``strategy="dp"`` fallback on the CPU).
    """
    plugins = plugins or RunPlugins()
    registry = get_registry()
    name: str | int = choices.precision
    if plugins.precision is not None:
        if precision_given:
            raise BothPrecisions(
                f"Received both `precision={choices.precision}` and `plugins={plugins.precision}`. Choose one: the "
                "plugin chooses the precision itself, so leave precision= out (or drop the plugin)."
            )
        plugin_name = getattr(plugins.precision, "name", None)
        name = plugin_name if isinstance(plugin_name, str) and plugin_name in registry.precision_names() else "32-true"
    selection = (select_with or select)(
        choices.accelerator, choices.devices, choices.strategy, name, num_nodes=choices.num_nodes
    )
    if adjust is not None:
        selection = adjust(selection)
    strategy = selection.strategy_object or (make_strategy or (lambda n: registry.get_strategy(n)()))(
        selection.strategy
    )
    _attach_checkpoint_io(strategy, plugins.checkpoint_io)
    precision = plugins.precision or registry.get_precision(selection.precision)(selection.root_device.type)
    strategy.precision_plugin = precision  # the strategy's init contexts and steps read it
    return RunSetup(
        selection,
        strategy,
        precision,
        choices.num_nodes,
        selection.start_method,
        plugins.cluster_environment,
        plugins.layer_sync,
    )


def cpu_half_as_bf16(owner: str) -> Callable[[Selection], Selection]:
    """Lightning's rule for ``precision="16-mixed"`` on the CPU, for ``build(adjust=...)``: the run uses
    ``"bf16-mixed"`` instead (CPU autocast's float16 is slow and needs loss scaling; bfloat16 has float32's range),
    with Lightning's warning naming ``owner`` (``"Trainer"`` or ``"Fabric"``)."""

    def adjust(selection: Selection) -> Selection:
        if selection.precision != "16-mixed" or selection.root_device.type != "cpu":
            return selection
        from .distributed.rank_zero import rank_zero_warn

        rank_zero_warn(
            f"You passed `{owner}(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not supported on "
            "CPU. Using `precision='bf16-mixed'` instead.",
            stacklevel=5,  # the line that made the Trainer or Fabric
        )
        return dataclasses.replace(selection, precision="bf16-mixed")

    return adjust


def _attach_checkpoint_io(strategy: Strategy, checkpoint_io: CheckpointIO | None) -> None:
    """Give the strategy the ``plugins=`` writer; one also given to the strategy itself is a conflict."""
    if checkpoint_io is None:
        return
    own = getattr(strategy, "_checkpoint_io", None)
    if own is not None and own is not checkpoint_io:
        raise MisconfigurationException(
            f"plugins=[{type(checkpoint_io).__name__}(...)] and {type(strategy).__name__}(checkpoint_io="
            f"{type(own).__name__}(...)) both name the checkpoint writer; choose one."
        )
    strategy.checkpoint_io = checkpoint_io


# ---- the cluster environment a run adopts (Trainer and Fabric, at construction) ---------------------------
def cluster_environment(given: ClusterEnvironment | None = None) -> ClusterEnvironment | None:
    """The environment a run uses: ``given`` (``plugins=[SLURMEnvironment()]``), else the one detected
    (:meth:`AcceleratorRegistry.detect_environment`), else Lightning's own where ``LOCAL_RANK`` says the processes
    were started by hand, else None (the Trainer starts its own processes)."""
    if given is not None:
        return given
    found = get_registry().detect_environment()
    if found is not None:
        return found()
    if (os.environ.get("LOCAL_RANK") or "").strip():
        # processes started by hand, each told its LOCAL_RANK (and NODE_RANK): Lightning's environment takes them
        # as started externally and works out their ranks from the run (adopt_environment)
        from .environments.lightning import LightningEnvironment

        return LightningEnvironment()
    return None


def attach_environment(strategy: Strategy, environment: ClusterEnvironment | None) -> None:
    """Give a one-process-per-device strategy the environment its process identity is asked of.

    Trainer and Fabric ask the strategy (``node_rank``...), the strategy asks this environment: the one that
    started the processes, else Lightning's local one (the Trainer or Fabric starts them, or torchrun's
    variables are read). A strategy of one process has none, as in Lightning.
    """
    if is_instance_if_loaded(strategy, "accelplug.strategies.parallel", "ParallelStrategy"):
        from .environments.lightning import LightningEnvironment

        strategy.cluster_environment = environment if environment is not None else LightningEnvironment()


def give_strategy_its_plan(strategy: Strategy, selection: Selection, num_nodes: int) -> None:
    """What Lightning's strategy knows from the Trainer's (and Fabric's) construction on: its device
    (``root_device``; a strategy built for another index of the same type, ``SingleDeviceStrategy("cuda:1")``,
    keeps its own), and for a parallel one the run's plan (this node's devices, the node count), so
    ``trainer.world_size`` and ``fabric.world_size`` answer before any process starts, and after ``ddp_spawn``
    in the parent, as Lightning's do; and the run's accelerator (``strategy.accelerator``), so that Lightning's
    argument-less ``strategy.setup_environment()`` works on a strategy a Trainer or Fabric holds."""
    if getattr(strategy, "accelerator", None) is None:
        strategy.accelerator = selection.accelerator
    own = strategy.root_device
    if own is None or own.type != selection.root_device.type:
        strategy.root_device = selection.root_device
    # a single-device run (the default) loads neither module
    parallel = "accelplug.strategies.parallel"
    if is_instance_if_loaded(strategy, parallel, "ParallelStrategy") and strategy.parallel_devices is None:
        strategy.parallel_devices = list(selection.devices)
    if is_instance_if_loaded(strategy, "accelplug.strategies.ddp", "DDPStrategy"):
        strategy.num_nodes = num_nodes


def adopt_environment(environment: ClusterEnvironment | None, num_devices: int, num_nodes: int) -> bool:
    """When ``environment`` started the processes: check ``devices``/``num_nodes`` against it and export its
    ranks and rendezvous for torch (:func:`~accelplug.environments.rendezvous.export_rendezvous`); True then.

    False when nothing started the processes, so the caller may start them itself; also for a one-process run
    whose environment, given explicitly, did not start this process (``plugins=[SLURMEnvironment()]`` outside a
    Slurm job): Lightning runs that on one device and never asks the environment, and so does accelplug.
    """
    if environment is None or not environment.creates_processes_externally:
        return False
    if num_devices * num_nodes == 1 and not environment.detect():
        return False
    from .environments.rendezvous import export_rendezvous

    environment.validate_settings(num_devices, num_nodes)
    # Lightning's rule for an environment that takes its ranks from the run (processes started by hand with
    # LOCAL_RANK/NODE_RANK): node rank x devices + local rank, devices x nodes; a scheduler's ignores both.
    if type(environment).set_global_rank is not ClusterEnvironment.set_global_rank:
        environment.set_world_size(num_devices * num_nodes)
        environment.set_global_rank(environment.node_rank() * num_devices + environment.local_rank())
    export_rendezvous(environment)
    return True
