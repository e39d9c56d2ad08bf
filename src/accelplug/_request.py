"""The pydantic model that checks the shape of the user's selection arguments.

Kept in its own module and imported only when a selection is made, so that ``import accelplug`` and
``get_registry()`` do not pay for importing pydantic.
"""

from __future__ import annotations

from typing import Union

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr

from .accelerator import Accelerator


class SelectionRequest(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, arbitrary_types_allowed=True)

    accelerator: Union[StrictStr, Accelerator, type[Accelerator]]  # noqa: UP007 - pydantic union order
    devices: Union[StrictInt, StrictStr, list[StrictInt], tuple[StrictInt, ...]]  # noqa: UP007
    strategy: StrictStr
    precision: Union[StrictInt, StrictStr]  # noqa: UP007
