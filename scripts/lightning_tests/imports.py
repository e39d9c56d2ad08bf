"""Which of the Lightning names that Lightning's tests import accelplug lacks, read from the test files with ``ast``.

    python scripts/lightning_tests/imports.py [--tests DIR] [paths...]   # paths relative to DIR, default: all

For every ``import lightning...`` / ``from lightning... import NAME`` (also ``pytorch_lightning``,
``lightning_fabric``) in the given test files, this imports the module with the redirect on and looks the name
up; it prints one line per missing module or name with the files that import it, private names (a leading
underscore anywhere in the path) apart from public ones. Nothing of the tests runs.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import DEFAULT_TESTS_DIR, LIGHTNING_ROOTS, is_private  # noqa: E402


def imported_names(path: Path) -> list[tuple[str, str | None]]:
    """``(module, name)`` pairs of the Lightning imports in one file (``name`` None for ``import module``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in LIGHTNING_ROOTS:
                found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.split(".")[0] in LIGHTNING_ROOTS]
    return found


def check(module: str, name: str | None) -> str | None:
    """Why ``from module import name`` fails under the redirect, or None when it works."""
    try:
        imported = importlib.import_module(module)
    except ImportError as error:
        return f"module missing ({error})"
    if name is None or hasattr(imported, name):
        return None
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return "name missing"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=Path, default=DEFAULT_TESTS_DIR, help="the folder holding tests_pytorch")
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    parser.add_argument("paths", nargs="*", default=["tests_pytorch", "tests_fabric"])
    args = parser.parse_args()

    from accelplug.interop import use_accelplug_for_lightning

    use_accelplug_for_lightning()
    files = sorted(
        {
            f
            for p in args.paths
            for f in ((args.tests / p).rglob("*.py") if (args.tests / p).is_dir() else [args.tests / p])
        }
    )
    users: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for file in files:
        for pair in imported_names(file):
            users[pair].add(str(file.relative_to(args.tests)))
    missing = []
    for (module, name), where in sorted(users.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        why = check(module, name)
        if why is not None:
            full = module if name is None else f"{module}.{name}"
            missing.append({"name": full, "private": is_private(full), "why": why, "files": sorted(where)})
    if args.json:
        print(json.dumps(missing, indent=1))
        return 0
    for private in (False, True):
        rows = [m for m in missing if m["private"] is private]
        print(f"## {'private' if private else 'public'} names missing: {len(rows)}")
        for row in sorted(rows, key=lambda r: (-len(r["files"]), r["name"])):
            print(f"{row['name']}  [{len(row['files'])} files] {row['why'] if row['why'] != 'name missing' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
