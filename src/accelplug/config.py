"""User defaults for a run (accelerator, devices, strategy, precision, ...), read once at the edge.

A value is looked up in this order, first hit wins: an explicit argument (a Trainer or CLI option),
an ``ACCELPLUG_<KEY>`` environment variable, the TOML config file, the built-in default. The file
lives in the user config directory that ``platformdirs`` gives (``ACCELPLUG_CONFIG_FILE`` points
elsewhere) and holds flat ``key = value`` lines, as written by ``accelplug config``.

Everything is validated here, by pydantic, and every mistake becomes a
``MisconfigurationException`` that says where the bad value came from (argument, which environment
variable, or which file and line), so nothing downstream re-checks and nothing is silently ignored.
``ACCELPLUG_ACCELERATOR`` is the same variable ``selection.select`` honours for ``accelerator="auto"``,
so the two can never disagree.

A missing file in the user config directory means "no saved defaults"; a file named by
``ACCELPLUG_CONFIG_FILE`` that does not exist is an error (a typo in the path must not silently drop
the settings), except for ``accelplug config``, which creates it. ``ACCELPLUG_*`` variables that
accelplug does not read are reported once per process by :func:`load_settings` (a ``UserWarning``,
on rank 0 only when several processes run), so a typo such as ``ACCELPLUG_DEVICE`` is not ignored.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .environments.base import MAX_PROCESSES
from .envvars import config_path
from .errors import MisconfigurationException, did_you_mean
from .hardware.devices import ACCEPTED_DEVICES_FORMS
from .precision.names import normalize_precision

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "CONFIG_FILE_ENV",
    "ENV_PREFIX",
    "FIELDS",
    "ConfigFile",
    "Origin",
    "Settings",
    "config_file_in_effect",
    "config_path",
    "explain_settings",
    "load_settings",
    "read_config_file",
    "validate_values",
    "write_config_file",
]

ENV_PREFIX = "ACCELPLUG_"
CONFIG_FILE_ENV = "ACCELPLUG_CONFIG_FILE"
# Same shape as registry keys (accelerator.NAME_PATTERN); repeated so reading a config never imports torch.
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_INDICES = re.compile(r"^\d+(\s*,\s*\d+)*\s*,?$")


class Settings(BaseSettings):
    """The effective defaults. Build it with :func:`load_settings`, which explains bad values."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", frozen=True, env_ignore_empty=True, validate_default=True
    )

    accelerator: str = Field("auto", description="'auto', 'gpu' or a registered accelerator name")
    devices: str = Field("auto", description="'auto', a count such as '2', '-1' (all) or indices such as '0,2'")
    strategy: str = Field("auto", description="'auto', 'single_device', 'ddp' or a registered strategy")
    precision: str = Field("32-true", description="'32-true', 'bf16-mixed', '16-mixed' or '64-true'")
    mps_fallback: bool = Field(False, description="let ops missing on MPS run on the CPU (PYTORCH_ENABLE_MPS_FALLBACK)")
    num_nodes: int = Field(1, ge=1, le=MAX_PROCESSES, description="machines taking part in one run")

    @field_validator("accelerator", "strategy", mode="before")
    @classmethod
    def _name(cls, value: object) -> object:
        if not isinstance(value, str):
            return value  # pydantic reports the wrong type
        name = value.strip().lower()
        if name not in ("auto", "gpu") and not _NAME.match(name):
            raise ValueError("expected 'auto' or a lowercase name such as 'cpu', 'cuda', 'mps' or 'ddp'")
        return name

    @field_validator("devices", mode="before")
    @classmethod
    def _devices(cls, value: object) -> object:
        from .hardware.devices import (  # the one tokenizer selection and launch use
            InvalidDevicesError,
            tokenize_devices,
        )

        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, (str, list)):
            raise ValueError(f"expected a string or int. Accepted forms: {ACCEPTED_DEVICES_FORMS}")
        try:
            return tokenize_devices(value).as_text()
        except InvalidDevicesError as exc:
            raise ValueError(f"{exc.why}. Accepted forms: {ACCEPTED_DEVICES_FORMS}") from None

    @field_validator("precision", mode="before")
    @classmethod
    def _precision(cls, value: object) -> object:
        try:
            return normalize_precision(value)
        except MisconfigurationException as exc:
            raise ValueError(str(exc)) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Argument > environment > config file > default (no .env files, no secret directories)."""
        return init_settings, env_settings, _TomlFileSource(settings_cls, read_config_file(config_path()))


FIELDS: tuple[str, ...] = tuple(Settings.model_fields)


class _GivenOnly(Settings):
    """Validates exactly the values passed, ignoring environment and file (used before writing a file)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


# ---- the config file ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConfigFile:
    """A parsed config file: its values and the line each key sits on (for error messages)."""

    path: Path
    exists: bool
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"config file {self.path}, line {line}" if line else f"config file {self.path}"


def config_file_in_effect() -> ConfigFile:
    """The parsed config file; a file named by ``ACCELPLUG_CONFIG_FILE`` must exist (the default one need not)."""
    path = config_path()
    config = read_config_file(path)
    if not config.exists and os.environ.get(CONFIG_FILE_ENV, "").strip():
        raise MisconfigurationException(
            f"{CONFIG_FILE_ENV}={os.environ[CONFIG_FILE_ENV]!r} names a config file that does not exist ({path}). "
            f"Create it with `accelplug config --default`, fix the path, or unset {CONFIG_FILE_ENV} to use "
            "the user config directory's file."
        )
    return config


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"""^\s*(["']?){re.escape(key)}\1\s*=""")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None


def _check_path(path: Path) -> None:
    """A NUL byte cannot be in a file name (the OS would answer with a bare ``ValueError`` from deep inside)."""
    if "\x00" in str(path):
        raise MisconfigurationException(
            f"config file path {str(path)!r} contains a NUL byte, which no file name can hold; give the path of a "
            "TOML file."
        )


def read_config_file(path: Path) -> ConfigFile:
    """Parse ``path``; a missing file is empty, a malformed one or an unknown key is an error."""
    _check_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ConfigFile(path, exists=False)
    except (OSError, UnicodeDecodeError) as exc:
        raise MisconfigurationException(f"config file {path} cannot be read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MisconfigurationException(
            f"config file {path} is not valid TOML: {exc}. Fix that line, or rewrite the file with "
            "`accelplug config --default`."
        ) from None
    lines: dict[str, int] = {}
    for key, value in data.items():
        line = _line_of(text, key)
        where = f"config file {path}, line {line}" if line else f"config file {path}"
        if isinstance(value, dict):
            raise MisconfigurationException(
                f"{where}: [{key}] is a table, but accelplug reads plain `key = value` lines only. "
                f"Known keys: {', '.join(FIELDS)}."
            )
        if key not in FIELDS:
            raise MisconfigurationException(
                f"{where}: unknown key {key!r}. Known keys: {', '.join(FIELDS)}.{did_you_mean(key, FIELDS)}"
            )
        if line:
            lines[key] = line
    return ConfigFile(path, exists=True, values=data, lines=lines)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def write_config_file(path: Path, values: Mapping[str, object]) -> Path:
    """Write flat ``key = value`` TOML (the keys are few and scalar, so no TOML writer is needed)."""
    _check_path(path)
    valid = validate_values(values)
    body = ["# accelplug defaults, written by `accelplug config`; `accelplug config show` explains them."]
    body += [f"{key} = {_toml_value(valid[key])}" for key in FIELDS if key in values]
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("\n".join(body) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        where = f" (from {CONFIG_FILE_ENV})" if os.environ.get(CONFIG_FILE_ENV, "").strip() else ""
        raise MisconfigurationException(
            f"cannot write the config file {path}{where}: {_why_unwritable(path, exc)}. Choose a writable path "
            f"with {CONFIG_FILE_ENV}=/path/to/config.toml."
        ) from None
    return path


def _why_unwritable(path: Path, exc: OSError) -> str:
    """The cause in words: a parent that is a file (``/dev/null/x``) says more than "File exists"."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a folder"
            break
    if path.is_dir():
        return "that path is a folder"
    return str(exc.strerror or exc)


class _TomlFileSource(PydanticBaseSettingsSource):
    """The config file as a pydantic-settings source (the lowest-priority one before defaults)."""

    def __init__(self, settings_cls: type[BaseSettings], config: ConfigFile) -> None:
        super().__init__(settings_cls)
        self.config_file = config

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.config_file.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.config_file.values)


# ---- loading and explaining ------------------------------------------------------------------------
@dataclass(frozen=True)
class Origin:
    """Where a setting's value came from."""

    kind: Literal["argument", "environment", "file", "default"]
    detail: str = ""

    def __str__(self) -> str:
        if self.kind == "environment":
            return f"environment variable {self.detail}"
        if self.kind == "file":
            return self.detail
        return "explicit argument" if self.kind == "argument" else "built-in default"


def _env_name(key: str) -> str | None:
    """The environment variable that sets ``key`` (names are case-insensitive, like pydantic-settings')."""
    wanted = (ENV_PREFIX + key).lower()
    for name, value in os.environ.items():
        if name.lower() == wanted and value.strip() != "":
            return name
    return None


def _origins(given: dict[str, object], config: ConfigFile) -> dict[str, Origin]:
    origins: dict[str, Origin] = {}
    for key in FIELDS:
        env = _env_name(key)
        if key in given:
            origins[key] = Origin("argument")
        elif env is not None:
            origins[key] = Origin("environment", f"{env}={os.environ[env]!r}")
        elif key in config.values:
            origins[key] = Origin("file", config.where(key))
        else:
            origins[key] = Origin("default")
    return origins


def _given(overrides: Mapping[str, object]) -> dict[str, object]:
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = [k for k in given if k not in FIELDS]
    if unknown:
        hint = did_you_mean(unknown[0], FIELDS)
        raise MisconfigurationException(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}.{hint}")
    return given


def _explain(exc: ValidationError, given: dict[str, object], config: ConfigFile) -> MisconfigurationException:
    origins = _origins(given, config)
    problems = []
    for error in exc.errors():
        key = str(error["loc"][0]) if error["loc"] else "settings"
        message = str(error["msg"]).removeprefix("Value error, ")
        origin = origins.get(key)
        source = f" (from {origin})" if origin else ""
        problems.append(f"{key}={error.get('input')!r}{source} is invalid: {message}")
    return MisconfigurationException("; ".join(problems))


def validate_values(values: Mapping[str, object]) -> dict[str, object]:
    """Check ``values`` alone (no environment, no file); the canonical form of every setting."""
    given = _given(values)
    try:
        return _GivenOnly(**given).model_dump()  # type: ignore[arg-type]  # values are validated by pydantic
    except ValidationError as exc:
        raise _explain(exc, given, ConfigFile(config_path(), exists=False)) from None


def _warn_unknown_variables() -> None:
    """Warn about ``ACCELPLUG_*`` typos once per process, and only on rank 0 of a launched job."""
    from .envvars import unreported_unknown_variables

    if os.environ.get("RANK", "0").strip() not in ("", "0"):
        return
    for line in unreported_unknown_variables():
        warnings.warn(line, UserWarning, stacklevel=3)


def load_settings(**overrides: object) -> Settings:
    """The effective settings; ``overrides`` are explicit arguments (``None`` means "not given").

    ``load_settings(devices="2")`` beats ``ACCELPLUG_DEVICES``, which beats the config file.
    """
    _warn_unknown_variables()
    given = _given(overrides)
    config = config_file_in_effect()
    try:
        return Settings(**given)  # type: ignore[arg-type]  # values are validated by pydantic
    except ValidationError as exc:
        raise _explain(exc, given, config) from None


def explain_settings(**overrides: object) -> tuple[Settings, dict[str, Origin], ConfigFile]:
    """The effective settings, where each value came from, and the config file consulted."""
    settings = load_settings(**overrides)
    config = config_file_in_effect()
    return settings, _origins(_given(overrides), config), config
