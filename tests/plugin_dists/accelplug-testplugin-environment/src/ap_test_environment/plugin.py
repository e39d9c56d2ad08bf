"""The registration line."""

from __future__ import annotations

from accelplug import hookimpl
from accelplug.environments import ClusterEnvironment

from .fakesched import FakeSchedEnvironment


@hookimpl
def register_cluster_environments() -> list[type[ClusterEnvironment]]:
    return [FakeSchedEnvironment]
