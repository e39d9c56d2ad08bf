"""``python -m accelplug``: the same CLI as the ``accelplug`` console script."""

from accelplug.cli import main

main()
