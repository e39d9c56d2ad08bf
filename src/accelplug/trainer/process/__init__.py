"""What a run does to its process: signals turned into a checkpointed stop (:mod:`.interrupts`), Slurm's requeue
(:mod:`.requeue`), ``ddp_notebook``'s forked fit (:mod:`.forking`), and process-wide settings: seed, determinism,
the MPS fallback (:mod:`.environment`). Re-launching a plain ``python script.py`` as one process per device is
:mod:`accelplug.launcher`."""
