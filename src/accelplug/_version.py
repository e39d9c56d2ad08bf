"""accelplug's version, in one place: the package metadata (hatch reads it from here at build time), ``__version__``
and the registry's report of the built-in plugin. The registry used to ask the installed metadata, a search of
``sys.path`` on every start-up."""

__version__ = "0.1.0"
