"""The example accelerator against accelplug's conformance suite."""

from accelplug_example import ExampleAccelerator

from accelplug.testing import AcceleratorConformance


class TestExampleAccelerator(AcceleratorConformance):
    accelerator_class = ExampleAccelerator
    plugin_module = "accelplug_example.plugin"
    entry_point_name = "example"
