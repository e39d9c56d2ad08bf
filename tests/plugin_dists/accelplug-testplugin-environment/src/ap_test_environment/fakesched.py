"""A scheduler that starts every process itself and names its place in FAKESCHED_* variables."""

from __future__ import annotations

import os

from accelplug.environments import ClusterEnvironment


class FakeSchedEnvironment(ClusterEnvironment):
    name = "fakesched"
    description = "fakesched: processes started by a test scheduler (FAKESCHED_SIZE, FAKESCHED_RANK)"
    detect_priority = 350  # above Slurm (it may run inside a Slurm job), below torchrun

    @property
    def creates_processes_externally(self) -> bool:
        return True

    @property
    def main_address(self) -> str:
        return os.environ.get("FAKESCHED_HEAD", "127.0.0.1")

    @property
    def main_port(self) -> int:
        return 24000

    @staticmethod
    def detect() -> bool:
        return "FAKESCHED_SIZE" in os.environ

    def world_size(self) -> int:
        return int(os.environ["FAKESCHED_SIZE"])

    def global_rank(self) -> int:
        return int(os.environ["FAKESCHED_RANK"])

    def local_rank(self) -> int:
        return self.global_rank()

    def node_rank(self) -> int:
        return 0
