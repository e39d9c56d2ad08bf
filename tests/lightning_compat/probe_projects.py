"""Runs the real projects of test_real_projects.py and prints, per project, how each run ended.

    .venv/bin/python tests/lightning_compat/probe_projects.py            # Lightning and accelplug
    .venv/bin/python tests/lightning_compat/probe_projects.py --flat     # + accelplug with flat imports

The first table is what the suite checks: Lightning unchanged, and accelplug with Lightning's import paths
swapped (``lightning.pytorch.callbacks`` -> ``accelplug.pytorch.callbacks``). While those paths do not exist
every project stops at its first import, which says little; ``--flat`` adds a run that imports every name from
the top-level ``accelplug`` package instead (what docs/migrating-from-lightning.md tells users to write today),
so the next failure behind the import paths shows. It is the command behind the figures in the issue-19 notes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository: tests.warm_python

import test_real_projects as runner

_ANY_LIGHTNING_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)(?P<kw>from|import)[ \t]+(?:pytorch_lightning|lightning)(?:\.\w+)*(?=[\s,])", re.M
)


def flat(source: str) -> str:
    """Every lightning import taken from the top-level ``accelplug`` package."""
    return _ANY_LIGHTNING_IMPORT.sub(lambda m: f"{m['indent']}{m['kw']} accelplug", source)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flat", action="store_true", help="also run accelplug with every import from accelplug")
    parser.add_argument("names", nargs="*", help="only these projects")
    options = parser.parse_args()
    modes = ["lightning", "accelplug", *(["flat"] if options.flat else [])]
    base = Path(tempfile.mkdtemp(prefix="accelplug-projects-"))
    finished = dict.fromkeys(modes, 0)
    projects = [p for p in runner.PROJECTS if not options.names or p.name in options.names]
    python = runner.project_python()
    for project in projects:
        for mode in modes:
            started = time.perf_counter()
            if mode == "flat":
                swap, runner.to_accelplug = runner.to_accelplug, flat
                try:
                    run = runner.run_project(project, "accelplug", base / project.name / mode, python)
                finally:
                    runner.to_accelplug = swap
            else:
                run = runner.run_project(project, mode, base / project.name / mode, python)
            seconds = time.perf_counter() - started
            finished[mode] += run.returncode == 0
            ending = "ran through" if run.returncode == 0 else run.first_failure
            print(f"{project.name:26} {mode:9} {seconds:6.1f}s  {ending}", flush=True)
    python.close()
    print(" ".join(f"{mode}: {count} of {len(projects)} ran through;" for mode, count in finished.items()))
    print(f"runs kept under {base}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
