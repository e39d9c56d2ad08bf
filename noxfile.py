"""Developer sessions: ``nox -s tests lint typecheck docs``.

Each session builds its own virtual environment. torch is pinned through ``constraints.txt`` so that a
machine without a GPU installs the CPU build rather than several GB of CUDA libraries.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "docs"]
nox.options.reuse_existing_virtualenvs = True

CONSTRAINTS = ("-c", "constraints.txt")


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "-e", ".[test]", "mypy>=1.10")
    session.run("mypy")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", env={"NO_MKDOCS_2_WARNING": "1"})
