"""The ``slurm_cluster`` fixture: one real Slurm cluster for the whole session, started once and stopped at the end.

Where Slurm cannot be installed or started the tests that use it skip with the reason, unless
``TESTS_SLURM=require`` (then they fail: use it where Slurm must run, as in CI as root).
``TESTS_SLURM=off`` skips them without installing anything. The time installation and start-up took
is printed in pytest's summary, so a CI log shows what the cluster costs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .slurm_cluster import MODE_ENV, Installation, SlurmCluster, SlurmUnavailable, ensure_installed, mode, start_cluster

_timings: list[str] = []


def _unavailable(reason: str) -> None:
    if mode() == "require":
        pytest.fail(f"{MODE_ENV}=require, but Slurm cannot run here: {reason}", pytrace=False)
    pytest.skip(f"Slurm cannot run here: {reason}")


@pytest.fixture(scope="session")
def slurm_installation() -> Installation:
    """Slurm and MUNGE installed (by ``scripts/slurm/install.sh`` when missing and this is root with apt-get)."""
    try:
        installation = ensure_installed()
    except SlurmUnavailable as exc:
        _unavailable(str(exc))
        raise  # pragma: no cover - skip() and fail() raise
    if installation.installed_now:
        _timings.append(f"slurm: installed by scripts/slurm/install.sh in {installation.seconds:.1f} s")
    return installation


def _start() -> SlurmCluster:
    try:
        cluster = start_cluster()
    except SlurmUnavailable as exc:
        _unavailable(str(exc))
        raise  # pragma: no cover
    _timings.append(
        f"slurm: one-node cluster started (munged, slurmctld, slurmd, node idle) in {cluster.start_seconds:.2f} s"
    )
    return cluster


@pytest.fixture(scope="session")
def slurm_cluster(slurm_installation: Installation) -> Iterator[SlurmCluster]:
    """A running one-node cluster shared by the session; stopped (and checked to leave nothing) at its end."""
    cluster = _start()
    yield cluster
    cluster.stop()


@pytest.fixture
def fresh_slurm_cluster(slurm_installation: Installation) -> Iterator[SlurmCluster]:
    """A cluster of the test's own (to test starting and stopping); stopped after the test if it did not."""
    cluster = _start()
    yield cluster
    cluster.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _timings:
        terminalreporter.write_line(line)
