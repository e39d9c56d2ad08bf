"""Hyper-parameters: the one ``save_hyperparameters`` the LightningModule and the LightningDataModule share.

:class:`HyperparametersMixin` (Lightning's ``lightning.pytorch.core.mixins.HyperparametersMixin``) gives a class
``save_hyperparameters``, ``hparams`` (mutable), ``hparams_initial`` (a frozen copy of what was saved: what the
loggers write to ``hparams.yaml``) and ``remove_ignored_hparams``. Both Lightning base classes inherit it, so the
module and the datamodule record hyper-parameters by the same rules, Lightning's:

- ``save_hyperparameters()`` records the arguments of the ``__init__`` that called it, and of every ``__init__``
  of the same object (or of an enclosing object that also has the mixin) it was called through, the most
  derived class's values winning; the values are read from the frames at the call, so an argument reassigned
  before the call is recorded as reassigned. It is found by walking up the stack from the caller (so it may be
  called from a helper method) to the first ``__init__`` that uses ``super()``; a dataclass records its
  ``init`` fields instead.
- ``save_hyperparameters("a", "b")`` records those arguments; ``save_hyperparameters(config)`` with one dict,
  ``Namespace`` or other mutable mapping (an OmegaConf ``DictConfig``) records its items, and remembers which
  ``__init__`` argument held it (``_hparams_name``) so ``load_from_checkpoint`` passes it back as that
  argument. An empty container records nothing; a number or string is refused.
- ``ignore=`` leaves arguments out, and also removes them when a base class's call had recorded them.
- ``self.hparams.lr`` reads a key as an attribute (:class:`AttributeDict`); an ``nn.Module`` recorded there
  gets Lightning's warning (its weights are in the checkpoint already).

What goes into ``hparams`` must survive ``pickle`` to be written into a checkpoint or handed to a spawned
process (:func:`is_picklable`); :func:`clean_namespace` drops what does not, with Lightning's warning, when a
Trainer call starts.

A class built by ``LightningCLI`` records the configuration it was built from instead of its arguments' values
(:func:`hyperparameters_given`): an injected object (an activation module, an optimizer factory) is written as
its ``class_path``/``init_args`` and ``load_from_checkpoint`` builds it again from there.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import types
from argparse import Namespace
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import fields, is_dataclass
from typing import Any, ClassVar

from ..distributed.rank_zero import rank_zero_warn
from ..errors import MisconfigurationException

__all__ = [
    "AttributeDict",
    "HyperparameterNameError",
    "HyperparametersMixin",
    "clean_namespace",
    "collect_init_args",
    "get_init_args",
    "hyperparameters_given",
    "is_picklable",
    "parse_class_init_keys",
    "save_hyperparameters",
]

#: Single values ``save_hyperparameters`` refuses as the whole set of hyper-parameters (Lightning's list).
_PRIMITIVE_TYPES = (bool, int, float, str)
#: Locals of an ``__init__`` that are never hyper-parameters, whatever its signature says.
_NEVER_RECORDED = ("__class__", "frame", "frame_args")


class AttributeDict(dict[str, Any]):
    """A dict whose keys read as attributes: ``self.hparams.lr`` (Lightning's ``AttributeDict``)."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __delattr__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        del self[key]

    def __repr__(self) -> str:
        """One ``"key": value`` line per key, sorted, the values aligned (Lightning's layout)."""
        if not self:
            return ""
        width = max(len(str(key)) for key in self) + 3
        return "\n".join(f"{_quoted(key):<{width}} {self[key]}" for key in sorted(self, key=str))


def _quoted(key: object) -> str:
    return f'"{key}":'


class HyperparameterNameError(MisconfigurationException, KeyError):
    """``save_hyperparameters("name")`` with a name that is not an ``__init__`` argument: a configuration error,
    and the ``KeyError`` Lightning raises, so either ``except`` catches it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def is_picklable(obj: object) -> bool:
    """Whether ``pickle`` can write ``obj`` (what hparams and spawned processes need)."""
    try:
        pickle.dumps(obj)
    except (pickle.PickleError, AttributeError, RuntimeError, TypeError):
        return False
    return True


def clean_namespace(hparams: MutableMapping[str, Any]) -> None:
    """Remove the values ``pickle`` cannot write, each with Lightning's warning (run when a Trainer call starts)."""
    for key in [k for k, v in hparams.items() if not is_picklable(v)]:
        rank_zero_warn(
            f"Attribute '{key}' removed from hparams because it cannot be pickled. You can suppress this warning by"
            f" setting `self.save_hyperparameters(ignore=['{key}'])`.",
        )
        del hparams[key]


def parse_class_init_keys(cls: type) -> tuple[str, str | None, str | None]:
    """The names ``cls.__init__`` gives ``self``, ``*args`` and ``**kwargs`` (None where it has none)."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())  # type: ignore[misc]
    var_positional = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
    var_keyword = next((p.name for p in parameters if p.kind is p.VAR_KEYWORD), None)
    return parameters[0].name, var_positional, var_keyword


def _frame_init_args(frame: types.FrameType) -> tuple[Any, dict[str, Any]]:
    """``(self, arguments)`` of an ``__init__`` frame that uses ``super()``; ``(None, {})`` for any other frame.

    The arguments are the ``__init__``'s named parameters as its locals hold them now, plus what its
    ``**kwargs`` received; ``self``, ``*args`` and ``**kwargs`` themselves are not arguments.
    """
    local = frame.f_locals
    if "__class__" not in local or frame.f_code.co_name != "__init__":
        return None, {}
    cls = local["__class__"]
    self_name, args_name, kwargs_name = parse_class_init_keys(cls)
    arguments = {name: local[name] for name in inspect.signature(cls.__init__).parameters if name in local}
    if kwargs_name:
        arguments.update(arguments.get(kwargs_name) or {})
    skipped = {self_name, args_name, kwargs_name, *_NEVER_RECORDED}
    return local.get(self_name), {k: v for k, v in arguments.items() if k not in skipped}


def get_init_args(frame: types.FrameType) -> dict[str, Any]:
    """The arguments of the ``__init__`` running in ``frame`` (empty for a frame that is not one)."""
    return _frame_init_args(frame)[1]


def collect_init_args(
    frame: types.FrameType, path_args: list[dict[str, Any]], inside: bool = False, classes: tuple[type, ...] = ()
) -> list[dict[str, Any]]:
    """The arguments of each ``__init__`` on the stack from ``frame`` up, innermost first, appended to ``path_args``.

    Frames are skipped until the first ``__init__`` that uses ``super()`` (of an instance of ``classes``, when
    given); collecting then stops at the first frame that is not one.
    """
    current: types.FrameType | None = frame
    while current is not None and current.f_back is not None:
        owner, arguments = _frame_init_args(current)
        if "__class__" in current.f_locals and (not classes or isinstance(owner, classes)):
            path_args.append(arguments)
            inside = True
        elif inside:
            break
        current = current.f_back
    return path_args


def _normalized_ignore(ignore: Sequence[str] | str | None) -> list[str]:
    if ignore is None:
        return []
    if isinstance(ignore, str):
        return [ignore]
    if isinstance(ignore, (list, tuple)):
        return list(dict.fromkeys(name for name in ignore if isinstance(name, str)))
    return list(dict.fromkeys(ignore))


def _recorded_arguments(obj: Any, frame: types.FrameType) -> dict[str, Any]:
    """What ``save_hyperparameters()`` without names may record: a dataclass's ``init`` fields, else the
    arguments of the ``__init__`` calls it was reached through (the most derived class's values winning)."""
    if is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in fields(obj) if f.init}
    recorded: dict[str, Any] = {}
    for arguments in collect_init_args(frame, [], classes=(HyperparametersMixin,)):
        recorded.update(arguments)
    return recorded


def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # a tensor's ambiguous truth value, a comparison that raises: not the same argument
        return False


def _chosen(obj: Any, args: tuple[Any, ...], arguments: dict[str, Any]) -> Any:
    """What to record for ``save_hyperparameters(*args)``, setting ``obj._hparams_name`` (Lightning's rule)."""
    if not args:
        obj._hparams_name = "kwargs" if arguments else None
        return arguments
    containers = [arg for arg in args if not isinstance(arg, str)]
    if len(containers) == 1:
        names = [name for name, value in arguments.items() if _same_value(value, containers[0])]
        obj._hparams_name = names[0] if names else None
        return containers[0]
    missing = [arg for arg in args if isinstance(arg, str) and arg not in arguments]
    if missing:
        raise HyperparameterNameError(
            f"save_hyperparameters({', '.join(map(repr, args))}): {missing[0]!r} is not an argument of "
            f"{type(obj).__name__}.__init__; its arguments are {sorted(arguments)}."
        )
    obj._hparams_name = "kwargs"
    return {arg: arguments[arg] for arg in args if isinstance(arg, str)}


#: The class being built by a builder that knows its configuration, and that configuration (see below).
_GIVEN: ContextVar[tuple[type, dict[str, Any]] | None] = ContextVar("accelplug_given_hyperparameters", default=None)


@contextmanager
def hyperparameters_given(class_type: type, hparams: dict[str, Any], instantiator: str) -> Iterator[None]:
    """While building ``class_type``, its ``save_hyperparameters()`` records ``hparams`` (plus ``_instantiator``:
    the import path of the function that builds the class from them) instead of the ``__init__`` arguments.

    ``LightningCLI`` builds the model and data module under it, so a checkpoint holds the configuration of
    injected objects, which ``load_from_checkpoint`` can build again, rather than the objects. Only an object of
    exactly ``class_type`` reads it: another mixin class built inside its ``__init__`` records its own arguments.
    """
    token = _GIVEN.set((class_type, {**hparams, "_instantiator": instantiator}))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def _given_for(obj: Any) -> dict[str, Any] | None:
    given = _GIVEN.get()
    return dict(given[1]) if given is not None and type(obj) is given[0] else None


def save_hyperparameters(
    obj: Any,
    *args: Any,
    ignore: Sequence[str] | str | None = None,
    frame: types.FrameType | None = None,
    given_hparams: dict[str, Any] | None = None,
) -> None:
    """Record ``obj``'s hyper-parameters in ``obj.hparams`` (the rules are this module's docstring);
    :meth:`HyperparametersMixin.save_hyperparameters` is the method users call. ``given_hparams`` stands for the
    ``__init__`` arguments (a builder that knows the configuration passes it)."""
    if len(args) == 1 and not isinstance(args[0], str) and not args[0]:
        return  # an empty container: nothing to record
    if frame is None:
        caller = inspect.currentframe()
        frame = caller.f_back if caller is not None else None
    if not isinstance(frame, types.FrameType):
        raise AttributeError("There is no `frame` available while being required.")
    ignored = _normalized_ignore(ignore)
    recorded = _recorded_arguments(obj, frame) if given_hparams is None else given_hparams
    arguments = {k: v for k, v in recorded.items() if k not in ignored}
    obj._set_hparams(_chosen(obj, args, arguments))
    obj.remove_ignored_hparams(ignored)
    import torch

    for key, value in obj._hparams.items():
        if isinstance(value, torch.nn.Module):
            rank_zero_warn(
                f"Attribute {key!r} is an instance of `nn.Module` and is already saved during checkpointing."
                f" It is recommended to ignore them using `self.save_hyperparameters(ignore=[{key!r}])`."
            )
    obj._hparams_initial = copy.deepcopy(obj._hparams)


class HyperparametersMixin:
    """``save_hyperparameters``, ``hparams`` and ``hparams_initial`` for any class (the LightningModule and the
    LightningDataModule inherit it)."""

    __jit_unused_properties__: ClassVar[list[str]] = ["hparams", "hparams_initial"]
    _hparams: MutableMapping[str, Any]
    _hparams_initial: MutableMapping[str, Any]
    #: the ``__init__`` argument one saved container came from ("kwargs": the arguments themselves)
    _hparams_name: str | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: whether the loggers get these hyper-parameters (``save_hyperparameters(logger=...)``)
        self._log_hyperparams = False

    def save_hyperparameters(
        self,
        *args: Any,
        ignore: Sequence[str] | str | None = None,
        frame: types.FrameType | None = None,
        logger: bool = True,
    ) -> None:
        """Record the ``__init__`` arguments (all, those named in ``args``, or one dict/Namespace/mapping given)
        in ``self.hparams``, for checkpoints (``load_from_checkpoint`` passes them back) and, unless
        ``logger=False``, the loggers' ``log_hyperparams``; ``ignore`` leaves some out (an ``nn.Module``)."""
        self._log_hyperparams = logger
        if frame is None:
            caller = inspect.currentframe()
            frame = caller.f_back if caller is not None else None
        save_hyperparameters(self, *args, ignore=ignore, frame=frame, given_hparams=_given_for(self))

    def _set_hparams(self, hp: Any) -> None:
        hp = self._to_hparams_dict(hp)
        if isinstance(hp, dict) and isinstance(self.hparams, dict):
            self.hparams.update(hp)
        else:
            self._hparams = hp

    @staticmethod
    def _to_hparams_dict(hp: Any) -> MutableMapping[str, Any]:
        if isinstance(hp, Namespace):
            hp = vars(hp)
        if isinstance(hp, dict):
            return AttributeDict(hp)
        if isinstance(hp, _PRIMITIVE_TYPES):
            raise MisconfigurationException(
                f"save_hyperparameters({hp!r}): Primitives {_PRIMITIVE_TYPES} are not allowed. Name the __init__ "
                "arguments to record as strings, or pass one dict, Namespace or mapping."
            )
        if not isinstance(hp, MutableMapping):
            raise MisconfigurationException(
                f"save_hyperparameters: Unsupported config type of {type(hp)}; expected argument names, or one "
                "dict, Namespace or mutable mapping (an OmegaConf DictConfig)."
            )
        return hp

    def remove_ignored_hparams(self, ignore_list: list[str]) -> None:
        """Drop hyper-parameters a base class's ``save_hyperparameters()`` recorded (names not held are no error).

        A subclass that builds an argument itself (an ``nn.Module``) removes it so checkpoints stay plain.
        ``hparams_initial`` keeps what was saved, as in Lightning.
        """
        if isinstance(ignore_list, str) or not isinstance(ignore_list, (list, tuple, set, frozenset)):
            raise MisconfigurationException(
                f"remove_ignored_hparams(ignore_list={ignore_list!r}): expected a list of hyper-parameter names."
            )
        for key in ignore_list:
            self.hparams.pop(key, None)

    @property
    def hparams(self) -> Any:
        """The hyper-parameters ``save_hyperparameters`` recorded, which the user may change (an
        :class:`AttributeDict`, or the mapping given, e.g. a ``DictConfig``)."""
        if "_hparams" not in self.__dict__:
            self._hparams = AttributeDict()
        return self._hparams

    @property
    def hparams_initial(self) -> Any:
        """A copy of the hyper-parameters as ``save_hyperparameters`` recorded them (later changes to ``hparams``
        aside): what the loggers are given."""
        initial = self.__dict__.get("_hparams_initial")
        return AttributeDict() if initial is None else copy.deepcopy(initial)
