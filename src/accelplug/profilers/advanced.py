"""``AdvancedProfiler``: a ``cProfile`` per action, every Python function called while it ran."""

from __future__ import annotations

import cProfile
import io
import os
import pstats
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..errors import MisconfigurationException
from .base import Profiler

__all__ = ["AdvancedProfiler"]


def _check_restriction(value: Any) -> float | int:
    """``pstats``' own restriction: a count of lines (int >= 0) or a fraction of them (0.0 to 1.0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MisconfigurationException(
            f"AdvancedProfiler(line_count_restriction={value!r}): expected a number of lines (int >= 0) or a "
            "fraction of them (float from 0.0 to 1.0)."
        )
    if value < 0 or (isinstance(value, float) and value > 1.0):
        raise MisconfigurationException(
            f"AdvancedProfiler(line_count_restriction={value!r}): expected an int >= 0 (lines) or a float from "
            "0.0 to 1.0 (a fraction of the lines)."
        )
    return value


class AdvancedProfiler(Profiler):
    """One ``cProfile.Profile`` per action, only one enabled at a time (Python allows one profiler per thread:
    a nested action takes over and the outer one's inner time is counted under the inner action).

    The report lists each action's functions by cumulative time, cut to ``line_count_restriction``; with
    ``dump_stats=True`` each action's raw stats also go to ``{dirpath}/{stage}-{filename}-{action}.prof``.
    """

    def __init__(
        self,
        dirpath: str | Path | None = None,
        filename: str | None = None,
        line_count_restriction: float = 1.0,
        dump_stats: bool = False,
    ) -> None:
        # before the checks, so the teardown of an object whose __init__ raised (run by __del__) finds it
        self.profiled_actions: dict[str, cProfile.Profile] = defaultdict(cProfile.Profile)
        super().__init__(dirpath=dirpath, filename=filename)
        self.line_count_restriction = _check_restriction(line_count_restriction)
        self.dump_stats = dump_stats

    def start(self, action_name: str) -> None:
        for profile in self.profiled_actions.values():
            profile.disable()
        self.profiled_actions[action_name].enable()

    def stop(self, action_name: str) -> None:
        profile = self.profiled_actions.get(action_name)
        if profile is None:
            raise ValueError(f"Attempting to stop recording an action ({action_name}) which was never started.")
        profile.disable()

    def _dump_stats(self, action_name: str, profile: cProfile.Profile) -> None:
        if not self.dirpath:
            raise MisconfigurationException(
                "AdvancedProfiler(dump_stats=True) writes one .prof file per action and needs a folder: pass "
                "dirpath=..., or let the Trainer give its log_dir."
            )
        folder = os.fspath(self.dirpath)
        target = os.path.join(folder, self._prepare_filename(action_name=action_name, extension=".prof"))
        from ..checkpoint.file import filesystem, is_url

        if is_url(folder):  # pstats writes local files only: marshal the stats and copy the bytes over
            import marshal

            profile.create_stats()
            fs = filesystem(folder)
            fs.makedirs(folder, exist_ok=True)
            with fs.open(target, "wb") as handle:
                handle.write(marshal.dumps(profile.stats))  # type: ignore[attr-defined]
            return
        os.makedirs(folder, exist_ok=True)
        profile.dump_stats(target)

    def summary(self) -> str:
        recorded: dict[str, str] = {}
        for action_name, profile in self.profiled_actions.items():
            if self.dump_stats:
                self._dump_stats(action_name, profile)
            stream = io.StringIO()
            stats = pstats.Stats(profile, stream=stream).strip_dirs().sort_stats("cumulative")
            stats.print_stats(self.line_count_restriction)
            recorded[action_name] = stream.getvalue()
        return self._stats_to_str(recorded)

    def teardown(self, stage: str | None) -> None:
        super().teardown(stage=stage)
        self.profiled_actions.clear()

    def __reduce__(self) -> tuple[Any, ...]:
        # cProfile.Profile cannot be pickled (DDP's spawn, a deepcopy of the Trainer): travel as the arguments
        return (
            self.__class__,
            (),
            {"dirpath": self.dirpath, "filename": self.filename, "line_count_restriction": self.line_count_restriction},
        )
