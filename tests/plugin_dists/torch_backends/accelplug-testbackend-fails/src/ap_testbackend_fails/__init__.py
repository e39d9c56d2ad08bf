"""A device backend whose autoload hook fails, as one built for another torch or missing its driver does."""


def autoload() -> None:
    """Called by ``import torch`` for every entry point in group ``torch.backends``."""
    raise OSError("libfakedevice.so.3: cannot open shared object file: No such file or directory")
