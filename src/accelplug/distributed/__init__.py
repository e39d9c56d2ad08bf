"""Processes of one run: starting them on this machine, which one is rank zero, gathering tensors, what they share.

:mod:`.local_processes` starts one process per device here (``ddp_spawn``/``ddp_fork``, Fabric's ``launch``);
:mod:`.rank_zero` holds ``rank_zero_only`` and its companions (the one rank every framework in the process
reads), :mod:`.collectives` gathers tensors from every process (``LightningModule.all_gather`` and Fabric),
:mod:`.shared_filesystem` tells whether a folder is the same folder on every node.
"""
