"""``self.log`` inside the Trainer: the router a module logs through (:mod:`.self_log`) and where values wait,
on the device, until a logging step reads them back (:mod:`.collector`). Where they go afterwards is
:mod:`accelplug.loggers`; the one read-back is :mod:`accelplug.trainer.loops._readback`."""
