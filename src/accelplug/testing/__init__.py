"""A conformance suite for accelerator plugins, run with a few lines of pytest.

A plugin author subclasses :class:`AcceleratorConformance` in a test module and names the class
under test; pytest then collects every check as a test of that class::

    from accelplug.testing import AcceleratorConformance
    from my_pkg import MyAccelerator


    class TestMyAccelerator(AcceleratorConformance):
        accelerator_class = MyAccelerator
        plugin_module = "my_pkg.plugin"  # optional: check the hook returns the class
        entry_point_name = "mydevice"  # optional: check the installed entry point registers it

The checks are the public contract every accelerator promises (``docs/plugins/testing.md`` lists
them). Checks that need the device itself skip, with the accelerator's own reason, on a machine
that does not have it. This module needs pytest, which is not a runtime dependency of accelplug.
"""

from __future__ import annotations

from .cases import DevicesCase, invalid_devices_arguments, valid_devices_cases
from .conformance import AcceleratorConformance

__all__ = ["AcceleratorConformance", "DevicesCase", "invalid_devices_arguments", "valid_devices_cases"]
