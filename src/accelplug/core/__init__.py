"""The LightningModule family: what a user's script subclasses or passes in.

:mod:`.module` is ``LightningModule``; the hooks it inherits are :mod:`.hooks`, the step and loader methods
it has as defaults :mod:`.steps`, loading it back from a checkpoint and exporting it :mod:`.saving`;
:mod:`.datamodule` is ``LightningDataModule`` and :mod:`.from_datasets` its ``from_datasets`` helper;
:mod:`.types` the aliases hooks are annotated with. The Trainer sits above and reaches a module only through
the protocols :mod:`.module` declares.
"""
