"""Which modules a snippet imports on top of another, and through which chain of imports each one came.

``python -X importtime`` says how long each import took but not who asked for it once the import happens
inside a function (it prints those at the top level). This script runs the ``--after`` code first (by
default ``import torch``), then puts a finder first on ``sys.meta_path`` that records, for every module
looked up, the Python frames that were running: the module or function and line
that wrote each ``import``. It then runs the snippet and prints, for each module that joined
``sys.modules``, the chain of the lookup that loaded it, outermost first:

    python scripts/import_chain.py "import accelplug; accelplug.Trainer()"
    python scripts/import_chain.py --json "from accelplug import Trainer"   # {module: [frame, ...]}
    python scripts/import_chain.py --only packaging "import accelplug; accelplug.Trainer()"

``tests/foundation/test_start_up_imports.py`` runs it to name the module that joined the start-up path
and the line that brought it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from types import FrameType, ModuleType

#: Frames of the import machinery itself, which say nothing about who asked.
_MACHINERY = ("<frozen importlib", __file__)


def _frame_label(frame: FrameType) -> str:
    module = frame.f_globals.get("__name__", "?")
    function = frame.f_code.co_name
    where = f"{module}:{frame.f_lineno}"
    return where if function == "<module>" else f"{where} ({function})"


def _chain(frame: FrameType | None) -> list[str]:
    """The frames that led here, outermost first, the import machinery's own left out."""
    labels: list[str] = []
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_MACHINERY):
            labels.append(_frame_label(frame))
        frame = frame.f_back
    return labels[::-1]


class ChainRecorder:
    """A meta path finder that finds nothing: it notes the chain of each lookup of a name and lets the finders after
    it do the work (a finder by protocol: ``find_spec``). A loaded module is not looked up again, so the last lookup
    of a name that loaded is the import that loaded it; earlier ones only asked (``importlib.util.find_spec``) or
    failed (``try: import x``)."""

    def __init__(self) -> None:
        self.chains: dict[str, list[str]] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        self.chains[fullname] = _chain(sys._getframe(1))
        return None


def trace(code: str, after: str) -> dict[str, list[str]]:
    """Run ``after``, then ``code`` under the recorder: each module ``code`` added, with its chain."""
    with contextlib.redirect_stdout(sys.stderr):  # what the code prints stays out of this script's output
        exec(compile(after, "<after>", "exec"), {"__name__": "__main__"})
        before = set(sys.modules)
        recorder = ChainRecorder()
        sys.meta_path.insert(0, recorder)
        try:
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__main__"})
        finally:
            sys.meta_path.remove(recorder)
    joined = sorted(set(sys.modules) - before)
    unseen = ["(loaded without a lookup: a built-in, or set in sys.modules by another module)"]
    return {name: recorder.chains.get(name, unseen) for name in joined}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("code", help="the snippet whose imports are traced")
    parser.add_argument("--after", default="import torch", help="code run first, untraced (default: import torch)")
    parser.add_argument("--only", action="append", default=[], help="show these top-level packages only")
    parser.add_argument("--json", action="store_true", help="print {module: chain} as JSON")
    args = parser.parse_args(argv)
    chains = trace(args.code, args.after)
    if args.only:
        chains = {m: c for m, c in chains.items() if m.partition(".")[0] in args.only}
    if args.json:
        print(json.dumps(chains))
        return
    for module, chain in chains.items():
        print(f"{module}\n    " + "\n    -> ".join(chain))


if __name__ == "__main__":
    main()
