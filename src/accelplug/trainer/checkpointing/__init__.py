"""Checkpoints: the file format and reading it back (:mod:`.format`), writing it safely (:mod:`.io`), what a
run puts in and takes out (:mod:`.contents`), and which file a call resumes from (:mod:`.auto_resume`)."""
