"""Test plugin for accelplug's own tests."""
