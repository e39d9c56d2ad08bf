"""A plugin whose module cannot be imported."""

import accelplug_dependency_that_does_not_exist  # noqa: F401
