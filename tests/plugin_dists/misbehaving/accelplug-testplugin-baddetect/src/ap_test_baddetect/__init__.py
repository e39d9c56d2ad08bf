"""Test plugin for accelplug's own tests (misbehaving on purpose)."""
