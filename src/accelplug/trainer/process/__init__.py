"""What a run does to its process: signals turned into a checkpointed stop (:mod:`.interrupts`), the re-launch
as one process per device (:mod:`.relaunch`), and process-wide settings: seed, determinism, the MPS
fallback (:mod:`.environment`)."""
