"""Cluster environments whose detect() misbehaves: one raises (a scheduler client that fails), one never
returns (a scheduler query that hangs). Both rank above every built-in, so they are asked first."""

import time

from accelplug import hookimpl
from accelplug.environments import SLURMEnvironment


class RaisingDetect(SLURMEnvironment):
    name = "raisingdetect"
    description = "detect() raises"
    detect_priority = 1000

    @staticmethod
    def detect():
        raise RuntimeError("cannot reach the scheduler daemon")


class HangingDetect(SLURMEnvironment):
    name = "hangingdetect"
    description = "detect() never returns"
    detect_priority = 900

    @staticmethod
    def detect():
        time.sleep(600)
        return True


@hookimpl
def register_cluster_environments():
    return [RaisingDetect, HangingDetect]
