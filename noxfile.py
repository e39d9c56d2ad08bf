"""Developer sessions: ``nox -s tests lint typecheck docs`` (the defaults), and ``nox -s xla``, ``nox -s library``.

Each session builds its own virtual environment. torch is pinned through ``constraints.txt`` so that a
machine without a GPU installs the CPU build rather than several GB of CUDA libraries; the ``xla``
session is the exception (see its docstring), which is why it is not among the defaults.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "docs"]
nox.options.reuse_existing_virtualenvs = True

CONSTRAINTS = ("-c", "constraints.txt")


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", "-n", "auto", "--dist", "loadfile", *session.posargs)


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


#: The torch_xla release the ``xla`` session tests, and the torch it was built for (the same release).
TORCH_XLA = "2.9.0"
XLA_TORCH = "2.9.0"


@nox.session(python="3.11")
def xla(session: nox.Session) -> None:
    """plugins/accelplug-xla's tests on XLA's CPU device (PJRT_DEVICE=CPU), in an environment of their own.

    torch_xla needs the exact torch it was built for; PyPI has that torch only as a CUDA build, several
    GB, so this environment is not constrained by constraints.txt. docs/plugins/xla.md has the times.
    """
    session.install(f"torch=={XLA_TORCH}", f"torch_xla=={TORCH_XLA}", "-e", ".", "-e", "plugins/accelplug-xla[test]")
    session.chdir("plugins/accelplug-xla")
    session.run("python", "-m", "pytest", "-q", "-rs", *session.posargs, env={"PJRT_DEVICE": "CPU"})


#: The library built on Lightning that the ``library`` session trains through accelplug's Lightning redirect.
LIBRARY = "pytorch-forecasting==1.8.0"


@nox.session(python="3.11")
def library(session: nox.Session) -> None:
    """A real library built on Lightning (pytorch-forecasting) on accelplug, against its results under Lightning.

    Its own environment: the library pins ``pandas<3.1``, below what the main environment may resolve.
    """
    session.install(*CONSTRAINTS, "-e", ".", "lightning==2.6.6", LIBRARY, "pytest>=8")
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests_library", *session.posargs)
