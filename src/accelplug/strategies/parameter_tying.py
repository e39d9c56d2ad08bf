"""Tied weights (one ``Parameter`` object under several names), found and restored.

Moving a module to some devices (XLA) or sharding it replaces parameter objects and so unties them; a
strategy records the groups first (``find_shared_parameters``) and ties them again afterwards.
"""

from __future__ import annotations

import torch

__all__ = ["find_shared_parameters", "set_shared_parameters"]


def find_shared_parameters(module: torch.nn.Module) -> list[list[str]]:
    """Each group of names under which one parameter object is registered (groups of one are left out),
    in registration order."""
    names: dict[int, list[str]] = {}
    for prefix, submodule in module.named_modules(remove_duplicate=False):
        for name, parameter in submodule._parameters.items():
            if parameter is not None:
                names.setdefault(id(parameter), []).append(f"{prefix}.{name}" if prefix else name)
    return [group for group in names.values() if len(group) > 1]


def set_shared_parameters(module: torch.nn.Module, shared_params: list[list[str]]) -> torch.nn.Module:
    """Tie each group again: every name after the first is set to the first name's parameter."""
    for group in shared_params:
        first = module.get_parameter(group[0])
        for path in group[1:]:
            owner_path, _, attribute = path.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            setattr(owner, attribute, first)
    return module
