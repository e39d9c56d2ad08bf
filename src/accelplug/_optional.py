"""``lightning.pytorch.utilities.imports``' flags: which optional packages and versions this environment has.

Lightning keeps these names private, yet published projects import them to decide whether to use an optional
package (Lightning's own autoencoder example: ``if _TORCHVISION_AVAILABLE: import torchvision``), so a project
moved to accelplug must find them at the same path with the same meaning. They are built from
``lightning_utilities`` (a dependency of accelplug as of Lightning): a ``RequirementCache`` checks its
requirement when first asked and is truthy when it is met, and ``str()`` of one that is not met says what to
install. Nothing here imports the optional packages themselves.
"""

from __future__ import annotations

import functools
import operator
import sys
import warnings

from lightning_utilities.core.imports import RequirementCache, compare_version, package_available

__all__: list[str] = []  # private names, as in Lightning: reached by explicit import only

_PYTHON_GREATER_EQUAL_3_11_0 = sys.version_info[:2] >= (3, 11)
_TORCH_GREATER_EQUAL_2_6 = compare_version("torch", operator.ge, "2.6.0")
_TORCH_GREATER_EQUAL_2_8 = compare_version("torch", operator.ge, "2.8.0")
_TORCH_EQUAL_2_8 = RequirementCache("torch>=2.8.0,<2.9.0")
_TORCH_EQUAL_2_9 = RequirementCache("torch>=2.9.0,<2.10.0")
_TORCHMETRICS_GREATER_EQUAL_0_8_0 = RequirementCache("torchmetrics>=0.8.0")
_TORCHMETRICS_GREATER_EQUAL_0_9_1 = RequirementCache("torchmetrics>=0.9.1")
_TORCHMETRICS_GREATER_EQUAL_0_11 = RequirementCache("torchmetrics>=0.11.0")  # the metrics' ``task=`` API
_TORCHMETRICS_GREATER_EQUAL_1_0_0 = RequirementCache("torchmetrics>=1.0.0")
_OMEGACONF_AVAILABLE = package_available("omegaconf")
_TORCHVISION_AVAILABLE = RequirementCache("torchvision")
_RICH_AVAILABLE = RequirementCache("rich>=10.2.2")


@functools.lru_cache(maxsize=128)
def _try_import_module(module_name: str) -> bool:
    """Whether ``module_name`` imports; a package that is installed but breaks on import is a warning, not a crash."""
    try:
        __import__(module_name)
    except (ImportError, AttributeError) as err:  # AttributeError: a package importing a name its peer lost
        warnings.warn(f"Importing {module_name} failed, so it is treated as not installed:\n{err}", stacklevel=2)
        return False
    return True
