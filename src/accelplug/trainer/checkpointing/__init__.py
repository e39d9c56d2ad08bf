"""Trainer checkpoints: the format and reading it back (:mod:`.format`), what a run puts in and takes out
(:mod:`.contents`), ``save_checkpoint`` (:mod:`.saving`), which file a call resumes from (:mod:`.auto_resume`);
the file itself is written safely by :mod:`accelplug.checkpoint.file`."""
