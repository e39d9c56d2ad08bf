"""Processes of one run: which one is rank zero, gathering tensors from all of them, what they share.

:mod:`.rank_zero` holds ``rank_zero_only`` and its companions (the one rank every framework in the process
reads), :mod:`.collectives` gathers tensors from every process (``LightningModule.all_gather`` and Fabric),
:mod:`.shared_filesystem` tells whether a folder is the same folder on every node.
"""
