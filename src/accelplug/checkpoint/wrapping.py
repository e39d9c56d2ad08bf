"""A ``CheckpointIO`` that hands the work to another one (Lightning's ``_WrappingCheckpointIO``).

A wrapper made without an inner writer (``AsyncCheckpointIO()``) gets the strategy's default one the
first time the strategy reads its ``checkpoint_io``; one made with a writer keeps it.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException
from .io import CheckpointIO

__all__ = ["_WrappingCheckpointIO", "is_own_io"]


class _WrappingCheckpointIO(CheckpointIO):
    """Delegates save, load and remove to ``checkpoint_io`` (filled in by the strategy when None)."""

    def __init__(self, checkpoint_io: CheckpointIO | None = None) -> None:
        super().__init__()
        if checkpoint_io is not None and not isinstance(checkpoint_io, CheckpointIO):
            raise MisconfigurationException(
                f"{type(self).__name__}(checkpoint_io={checkpoint_io!r}): expected a CheckpointIO instance (such as "
                "TorchCheckpointIO()) or None for the strategy's default."
            )
        self._checkpoint_io = checkpoint_io
        #: whether the innermost writer was chosen (given here, or filled in once by the strategy)
        self._base_checkpoint_io_configured: bool = checkpoint_io is not None
        if isinstance(checkpoint_io, _WrappingCheckpointIO):
            self._base_checkpoint_io_configured = checkpoint_io._base_checkpoint_io_configured

    @property
    def checkpoint_io(self) -> CheckpointIO | None:
        return self._checkpoint_io

    @checkpoint_io.setter
    def checkpoint_io(self, checkpoint_io: CheckpointIO) -> None:
        """Fill in the innermost writer if none was chosen yet; a chosen one is kept (Lightning's rule)."""
        if isinstance(checkpoint_io, _WrappingCheckpointIO):
            raise MisconfigurationException(
                f"{type(self).__name__}.checkpoint_io = {type(checkpoint_io).__name__}(...): the inner writer must "
                "not wrap another one; nest them when constructing instead."
            )
        if self._checkpoint_io is None:
            self._checkpoint_io = checkpoint_io
            self._base_checkpoint_io_configured = True
        elif isinstance(self._checkpoint_io, _WrappingCheckpointIO) and not self._base_checkpoint_io_configured:
            self._checkpoint_io.checkpoint_io = checkpoint_io
            self._base_checkpoint_io_configured = True

    def _inner(self) -> CheckpointIO:
        if self._checkpoint_io is None:
            from .io import TorchCheckpointIO

            self.checkpoint_io = TorchCheckpointIO()  # used outside a strategy: accelplug's own file
        assert self._checkpoint_io is not None
        return self._checkpoint_io

    def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        self._inner().save_checkpoint(*args, **kwargs)

    def remove_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        self._inner().remove_checkpoint(*args, **kwargs)

    def load_checkpoint(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return self._inner().load_checkpoint(*args, **kwargs)


def is_own_io(io: object) -> bool:
    """Whether ``io`` is accelplug's own writer (its files, local paths and URLs it checks itself), also inside a
    wrapper of accelplug's: a ``CheckpointIO`` of the user's (a subclass of accelplug's included) is called as
    Lightning calls it, with the path and ``weights_only`` as given."""
    if not type(io).__module__.startswith("accelplug."):
        return False
    if any(name in getattr(io, "__dict__", ()) for name in ("save_checkpoint", "load_checkpoint", "remove_checkpoint")):
        return False  # a method replaced on this object (a mock, a patch): the user's, called as Lightning calls it
    if isinstance(io, _WrappingCheckpointIO):
        return io.checkpoint_io is None or is_own_io(io.checkpoint_io)
    return True
