"""``accelplug.plugins``: what Lightning's ``plugins=`` argument takes, at Lightning's import paths.

``accelplug.plugins.environments`` holds the cluster environments (Lightning's
``lightning.pytorch.plugins.environments``).
"""
