"""Checking that a model can be served (Lightning's experimental ``lightning.pytorch.serve``).

A module that also subclasses :class:`ServableModule` says how a request reaches it: the example payload
(``configure_payload``), how the request's fields become tensors and the outputs text again
(``configure_serialization``), the step that answers (``serve_step``) and, optionally, the answer expected
(``configure_response``). :class:`ServableModuleValidator`, a callback, checks all of it when training starts:
it serves a copy of the module with FastAPI (uvicorn) in a separate process, sends the payload, and compares the
answer; a model that cannot be served stops the fit with a ``MisconfigurationException`` (unless
``exit_on_failure=False``). FastAPI and uvicorn are needed only by the validator.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import torch

from ..distributed.rank_zero import is_rank_zero
from ..errors import MisconfigurationException
from ..overrides import default_method, overrides
from .base import Callback

__all__ = ["ServableModule", "ServableModuleValidator"]

_log = logging.getLogger(__name__)
_OPTIONAL = ("fastapi", "uvicorn")


class ServableModule(ABC, torch.nn.Module):
    """What a module that can be served declares (mix it into a LightningModule)."""

    @abstractmethod
    def configure_payload(self) -> dict[str, Any]:
        """An example request: a dict with a ``"body"`` of named inputs."""

    @abstractmethod
    def configure_serialization(self) -> tuple[dict[str, Callable[..., Any]], dict[str, Callable[..., Any]]]:
        """Per input name, how its request value becomes a tensor; per output name, how a tensor becomes text."""

    @abstractmethod
    def serve_step(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> dict[str, torch.Tensor]:
        """The answer to one request, as named tensors."""

    @default_method
    def configure_response(self) -> dict[str, Any] | None:
        """The answer the example request should get (None: any successful answer)."""
        return None


class _Response:
    """What the served model answered: the HTTP status and the JSON body."""

    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code = status_code
        self._body = body

    def json(self) -> Any:
        return json.loads(self._body)


def _request(url: str, payload: Any = None) -> _Response:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return _Response(answer.status, answer.read())
    except urllib.error.HTTPError as error:
        return _Response(error.code, error.read())


def _serve(module: ServableModule, host: str, port: int) -> None:
    """The server process: ``/ping`` says it is up, ``/serve`` answers a request through ``serve_step``."""
    from fastapi import Body, FastAPI
    from uvicorn import run

    app = FastAPI()
    deserializers, serializers = module.configure_serialization()
    module.eval()

    @app.get("/ping")
    def ping() -> bool:
        return True

    @app.post("/serve")
    async def serve(payload: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008 - FastAPI's idiom
        body = payload["body"]
        for key, deserialize in deserializers.items():
            body[key] = deserialize(body[key])
        with torch.no_grad():
            output = module.serve_step(**body)
        if not isinstance(output, dict):
            raise TypeError(f"Please, return your outputs as a dictionary. Found {output}")
        return {key: serializers[key](value) if key in serializers else value for key, value in output.items()}

    run(app, host=host, port=port, log_level="error")


class ServableModuleValidator(Callback):
    """When training starts (on the global-zero process), serve the module and check its answer to
    ``configure_payload()``. ``server``: only ``"fastapi"``; ``optimization``: none yet (as in Lightning)."""

    def __init__(
        self,
        optimization: str | None = None,
        server: str = "fastapi",
        host: str = "127.0.0.1",
        port: int = 8080,
        timeout: int = 20,
        exit_on_failure: bool = True,
    ) -> None:
        import importlib.util

        for package in _OPTIONAL:
            if importlib.util.find_spec(package) is None:
                raise ModuleNotFoundError(
                    f"ServableModuleValidator serves the model with {' and '.join(_OPTIONAL)}; {package!r} is not "
                    f"installed: pip install {' '.join(_OPTIONAL)}"
                )
        if optimization is not None:
            raise NotImplementedError(f"The optimization {optimization} is currently not supported.")
        if server != "fastapi":
            raise NotImplementedError("Only the fastapi server is currently supported.")
        self.optimization = optimization
        self.server = server
        self.host = host
        self.port = port
        self.timeout = timeout
        self.exit_on_failure = exit_on_failure
        self.resp: _Response | None = None

    @property
    def successful(self) -> bool | None:
        """Whether the served model answered (None before a check ran)."""
        return self.resp.status_code == 200 if self.resp is not None else None

    def state_dict(self) -> dict[str, Any]:
        return {"successful": self.successful, "optimization": self.optimization, "server": self.server}

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if not is_rank_zero():
            return
        _check_servable(trainer, pl_module)
        process = multiprocessing.Process(target=_serve, args=(pl_module, self.host, self.port))
        process.start()
        base = f"http://{self.host}:{self.port}"
        try:
            self._wait_until_up(base, process)
            payload = pl_module.configure_payload()
            if "body" not in payload:
                raise MisconfigurationException(f'Your provided payload {payload} should have a field named "body".')
            self.resp = _request(f"{base}/serve", payload)
        finally:
            process.kill()
            process.join()
        self._check_answer(pl_module)

    def _wait_until_up(self, base: str, process: multiprocessing.Process) -> None:
        started = time.monotonic()
        while True:
            with contextlib.suppress(urllib.error.URLError, ConnectionError, OSError):
                if _request(f"{base}/ping").status_code == 200:
                    return
            if time.monotonic() - started > self.timeout:
                raise RuntimeError(f"The server didn't start within {self.timeout} seconds.")
            time.sleep(0.1)

    def _check_answer(self, pl_module: Any) -> None:
        assert self.resp is not None
        expected = pl_module.configure_response()
        if overrides(pl_module, "configure_response") and self.resp.json() != expected:
            raise RuntimeError(f"The expected response {expected} doesn't match the generated one {self.resp.json()}.")
        if self.exit_on_failure and not self.successful:
            raise MisconfigurationException("The model isn't servable. Investigate the traceback and try again.")
        if self.successful:
            _log.info(f"Your model is servable and the received payload was {self.resp.json()}.")


def _check_servable(trainer: Any, pl_module: Any) -> None:
    """A sharded strategy's module cannot be copied to a server; the module must declare how it is served."""
    strategy = type(getattr(trainer, "strategy", None)).__name__
    if strategy in ("FSDPStrategy", "DeepSpeedStrategy"):
        raise RuntimeError(
            f"The current strategy {strategy} used by the trainer isn't supported for sanity serving yet."
        )
    if not isinstance(pl_module, ServableModule):
        raise TypeError(f"The provided model should be subclass of {ServableModule.__qualname__}.")
    for method in ("configure_payload", "configure_serialization", "serve_step"):
        if not overrides(pl_module, method) or getattr(getattr(pl_module, method), "__isabstractmethod__", False):
            raise NotImplementedError(f"The `{method}` method needs to be overridden.")
