"""Test plugin: a precision and a strategy added through the hooks."""
