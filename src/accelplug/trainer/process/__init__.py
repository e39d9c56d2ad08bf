"""What a run does to its process: signals turned into a checkpointed stop (:mod:`.interrupts`), Slurm's requeue
(:mod:`.requeue`), a call run in one new process per device with ``ddp_spawn``/``ddp_fork``/``ddp_notebook``
(:mod:`.spawning`), and process-wide settings: seed, determinism, the MPS fallback (:mod:`.environment`).
Re-launching a plain ``python script.py`` as one process per device is :mod:`accelplug.launcher`."""
