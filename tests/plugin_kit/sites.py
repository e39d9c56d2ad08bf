"""Folders of real pip-installed distributions ("sites"), built once per test session and shared by its workers.

A site is what ``pip install --target SITE`` leaves: each distribution's package and its ``.dist-info`` with
``entry_points.txt``. A child process with the site on its ``PYTHONPATH`` finds the plugins through their
entry points exactly as after a ``pip install``; nothing imports a plugin by path.

Letting pip build each source tree itself costs two fresh build-backend processes per distribution (metadata,
then the wheel) and pip's resolver around them: about 4.5 s of CPU for the ten misbehaving distributions. Here
the same build backend each ``pyproject.toml`` names is called by one process for every tree (PEP 517's
``build_wheel``, the hook pip calls), on a copy of the tree so that no build leaves anything in the checkout,
and pip then installs those wheels with ``--no-index --no-deps``: about 1.5 s of CPU in all (measured with
``time`` on the 2-core development machine). Nothing in the site differs from pip's own build but the
``direct_url.json`` that records where pip found the distribution.

Each named site is built once per session under a folder every pytest-xdist worker of the session shares
(:func:`session_folder`), the first worker to ask building it under a :class:`filelock.FileLock` while the
other waits; the workers only read it afterwards. Where a test needs a file beside a site, it writes it in a
folder of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from filelock import FileLock

#: Run as ``python -c BUILD OUT SOURCE...``: each source tree's own PEP 517 backend builds its wheel into OUT
#: (a backend may print its progress on stdout: the wheels are found in OUT).
BUILD = r"""
import importlib, os, sys, tomllib
out, sources = sys.argv[1], sys.argv[2:]
for source in sources:
    with open(os.path.join(source, "pyproject.toml"), "rb") as file:
        system = tomllib.load(file)["build-system"]
    assert "backend-path" not in system, f"{source}: an in-tree build backend is not supported here"
    module, _, attribute = system["build-backend"].partition(":")
    backend = importlib.import_module(module)
    for name in filter(None, attribute.split(".")):
        backend = getattr(backend, name)
    os.chdir(source)
    backend.build_wheel(out)
"""

_IGNORED = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".pytest_cache")


def session_folder(basetemp: Path) -> Path:
    """A folder shared by every worker of this test session and by no other session.

    Under pytest-xdist each worker's ``basetemp`` is a ``popen-gwN`` folder inside the session's own folder, so
    its parent is shared by the workers; without xdist that parent holds every earlier session's folder too, so
    the session's own ``basetemp`` is used instead.
    """
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def build_wheels(sources: Sequence[Path], wheels: Path) -> list[Path]:
    """Wheels of ``sources`` (source trees with a ``pyproject.toml``), built by their own backends into ``wheels``.

    ``wheels`` must be new or empty: the wheels are the files the builds leave there.
    """
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="accelplug-wheel-sources-") as scratch:
        copies = [shutil.copytree(source, Path(scratch) / source.name, ignore=_IGNORED) for source in sources]
        result = subprocess.run(
            [sys.executable, "-c", BUILD, str(wheels), *map(str, copies)],
            capture_output=True,
            text=True,
            timeout=600,
        )
    built = sorted(wheels.glob("*.whl"))
    if result.returncode != 0 or len(built) != len(sources):
        raise RuntimeError(
            f"building the wheels of {[s.name for s in sources]} failed (built {[w.name for w in built]}):\n"
            f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
    return built


def pip_install(wheels: Sequence[Path], target: Path) -> None:
    """``pip install --target TARGET`` the given wheel files, with no index and no dependencies."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--disable-pip-version-check",
         "--target", str(target), *map(str, wheels)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"pip install of {[w.name for w in wheels]} failed:\n{result.stdout}\n{result.stderr}")


def install_site(target: Path, sources: Sequence[Path]) -> Path:
    """pip-install ``sources`` into ``target`` (new), building their wheels beside it first."""
    with tempfile.TemporaryDirectory(prefix="accelplug-wheels-") as wheels:
        pip_install(build_wheels(sources, Path(wheels)), target)
    return target


def shared_site(basetemp: Path, name: str, sources: Sequence[Path]) -> Path:
    """The session's site ``name`` holding ``sources`` pip-installed: built by the first worker that asks.

    The site is built in a folder aside and renamed once complete, so a site that exists is whole (a build that
    failed or was stopped leaves no site, and the next worker to ask builds it again).
    """
    root = session_folder(basetemp) / "accelplug-sites"
    root.mkdir(exist_ok=True)
    site = root / name
    with FileLock(str(root / f"{name}.lock")):
        if not site.exists():
            building = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
            wheels = build_wheels(sources, building / "wheels")
            pip_install(wheels, building / "site")
            (building / "site").rename(site)
            shutil.rmtree(building)
    return site
