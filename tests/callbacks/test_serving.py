"""``ServableModuleValidator`` (Lightning's ``lightning.pytorch.serve``): at the start of training, the module is
served over HTTP in another process and must answer its own example request."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import torch

pytest.importorskip("fastapi", reason="the validator serves the model with FastAPI")
pytest.importorskip("uvicorn", reason="the validator serves the model with uvicorn")

from accelplug import Trainer
from accelplug.demos.boring_classes import BoringModel
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.serve import ServableModule, ServableModuleValidator


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServableBoring(BoringModel, ServableModule):
    """Answers ``{"body": {"x": [...]}}`` with the sum of its layer's output."""

    def configure_payload(self) -> dict[str, Any]:
        return {"body": {"x": [0.0] * 32}}

    def configure_serialization(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"x": lambda values: torch.tensor(values)}, {"output": lambda tensor: float(tensor)}

    def serve_step(self, x: torch.Tensor) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return {"output": self.layer(x).sum()}

    def configure_response(self) -> dict[str, Any]:
        return {"output": float(self.layer.bias.detach().sum())}  # zero input: the answer is the bias's sum


def _trainer(tmp_path: Path, validator: ServableModuleValidator) -> Trainer:
    return Trainer(
        default_root_dir=tmp_path,
        max_steps=1,
        limit_val_batches=0,
        callbacks=[validator],
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        enable_checkpointing=False,
    )


def test_a_servable_module_answers_its_example_request_before_training(tmp_path: Path) -> None:
    validator = ServableModuleValidator(port=_free_port(), timeout=60)
    _trainer(tmp_path, validator).fit(ServableBoring())
    assert validator.successful is True
    assert validator.state_dict() == {"successful": True, "optimization": None, "server": "fastapi"}


def test_a_module_that_is_not_servable_stops_the_fit(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="should be subclass of ServableModule"):
        _trainer(tmp_path, ServableModuleValidator(port=_free_port())).fit(BoringModel())


def test_a_payload_without_a_body_is_refused(tmp_path: Path) -> None:
    class NoBody(ServableBoring):
        def configure_payload(self) -> dict[str, Any]:
            return {"x": [0.0] * 32}

    with pytest.raises(MisconfigurationException, match='should have a field named "body"'):
        _trainer(tmp_path, ServableModuleValidator(port=_free_port(), timeout=60)).fit(NoBody())


def test_only_fastapi_without_optimization_is_offered() -> None:
    with pytest.raises(NotImplementedError, match="optimization"):
        ServableModuleValidator(optimization="trace")
    with pytest.raises(NotImplementedError, match="fastapi"):
        ServableModuleValidator(server="ml_server")
    assert ServableModuleValidator().successful is None
