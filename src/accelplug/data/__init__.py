"""Data handling in one place, below the Trainer: where a stage's data comes from and how it reaches the device.

- :mod:`.sources`: which loaders a stage uses (passed, the datamodule's, the module's) and refusing
  what cannot be trained on;
- :mod:`.loaders`: this process's view of a loader (sharded under DDP, ``pin_memory`` left as given), rebuilt
  with every setting of the user's kept;
- :mod:`.batches`: moving a batch to the device (in the run's precision) and its size.

Nothing here imports the Trainer, so a custom loop (``accelplug.fabric``) uses the same functions.
"""
