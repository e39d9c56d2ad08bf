"""Reading back what each tracker recorded, through the tracker's own files and client.

- W&B offline: the run folder's ``run-<id>.wandb`` is a log of W&B's own protobuf ``Record`` messages
  (wandb's proto module parses them) in LevelDB's log framing: a 7-byte file header, then 32 KiB blocks
  of chunks, each with a 7-byte header (checksum, length, kind: full, first, middle, last).
- Comet offline: the ``.zip`` archive ``OfflineExperiment.end()`` writes holds ``messages.json``, one
  JSON message per line, and the uploaded files.
- MLflow: the tracking server, through ``MlflowClient``.
"""

from __future__ import annotations

import json
import struct
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_WANDB_FILE_HEADER = 7
_WANDB_BLOCK = 32768
_WANDB_CHUNK_HEADER = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def _wandb_records(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    records: list[bytes] = []
    pos, pending = _WANDB_FILE_HEADER, b""
    while pos + _WANDB_CHUNK_HEADER <= len(data):
        left_in_block = _WANDB_BLOCK - pos % _WANDB_BLOCK
        if left_in_block < _WANDB_CHUNK_HEADER:
            pos += left_in_block  # block trailer: padding
            continue
        _checksum, length, kind = struct.unpack("<IHB", data[pos : pos + _WANDB_CHUNK_HEADER])
        pos += _WANDB_CHUNK_HEADER
        chunk = data[pos : pos + length]
        pos += length
        if kind == _FULL:
            records.append(chunk)
        elif kind == _FIRST:
            pending = chunk
        elif kind == _MIDDLE:
            pending += chunk
        elif kind == _LAST:
            records.append(pending + chunk)
        elif kind == 0 and length == 0:
            pos += left_in_block - _WANDB_CHUNK_HEADER  # zero padding up to the block end
    return records


@dataclass
class WandbArtifact:
    name: str
    type: str
    metadata: dict[str, Any]
    aliases: list[str]
    files: dict[str, str]  # name in the artifact -> local file it was staged from


@dataclass
class WandbRun:
    run_id: str
    project: str
    config: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    metric_axes: dict[str, str] = field(default_factory=dict)
    artifacts: list[WandbArtifact] = field(default_factory=list)
    exit_code: int | None = None


def read_wandb_run(run_dir: Path, wait_s: float = 60.0) -> WandbRun:
    """Everything a finished W&B offline run recorded: config, history rows, artifacts, exit code.

    ``run.finish()`` returns before W&B's service process has written the whole file, so this waits
    (up to ``wait_s``) for the exit record that closes a finished run.
    """
    deadline = time.monotonic() + wait_s
    while True:
        run = _parse_wandb_run(run_dir)
        if run is not None and run.exit_code is not None:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"{run_dir} has no exit record after {wait_s:.0f} s: the run did not finish")
        time.sleep(0.1)


def _parse_wandb_run(run_dir: Path) -> WandbRun | None:
    from wandb.proto import wandb_internal_pb2

    (run_file,) = run_dir.glob("run-*.wandb")
    run: WandbRun | None = None
    for raw in _wandb_records(run_file):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run = WandbRun(run_id=record.run.run_id, project=record.run.project)
        if run is None:
            continue  # the header record comes before the run record; a file being written may end early
        if kind == "config":
            for item in record.config.update:
                key = item.key or "/".join(item.nested_key)
                if key != "_wandb":
                    run.config[key] = json.loads(item.value_json)
        elif kind == "history":
            row = {(item.key or "/".join(item.nested_key)): json.loads(item.value_json) for item in record.history.item}
            run.history.append({k: v for k, v in row.items() if k not in ("_timestamp", "_runtime", "_step")})
        elif kind == "metric":
            if record.metric.step_metric:
                run.metric_axes[record.metric.glob_name or record.metric.name] = record.metric.step_metric
        elif kind == "artifact":
            art = record.artifact
            run.artifacts.append(
                WandbArtifact(
                    name=art.name,
                    type=art.type,
                    metadata=json.loads(art.metadata) if art.metadata else {},
                    aliases=sorted(art.aliases),  # W&B does not keep their order
                    files={entry.path: entry.local_path for entry in art.manifest.contents},
                )
            )
        elif kind == "exit":
            run.exit_code = record.exit.exit_code
    return run


def wandb_run_dir(wandb_dir: Path, run_id: str) -> Path:
    (found,) = (wandb_dir / "wandb").glob(f"offline-run-*-{run_id}")
    return found


@dataclass
class CometArchive:
    params: dict[str, Any] = field(default_factory=dict)
    metrics: list[tuple[str, Any, int | None, int | None]] = field(default_factory=list)  # name, value, step, epoch
    others: dict[str, Any] = field(default_factory=dict)
    graph: str | None = None
    models: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    experiment: dict[str, Any] = field(default_factory=dict)


def read_comet_archive(archive: Path) -> CometArchive:
    """What a Comet offline archive holds: manual parameters, user metrics, others, graph, model files."""
    found = CometArchive()
    with zipfile.ZipFile(archive) as bundle:
        found.experiment = json.loads(bundle.read("experiment.json"))
        for line in bundle.read("messages.json").decode().splitlines():
            message = json.loads(line)
            kind, payload = message["type"], message["payload"]
            if kind == "parameter_msg":
                param = payload.get("param") or payload["params"]  # "params" for list values
                if param["source"] == "manual":
                    found.params[param["paramName"]] = param["paramValue"]
            elif kind == "metric_msg":
                metric = payload["metric"]
                if not metric["metricName"].startswith("sys.") and metric["metricName"] != "process duration":
                    found.metrics.append((metric["metricName"], metric["metricValue"], metric["step"], metric["epoch"]))
            elif kind == "log_other":
                found.others[payload["key"]] = payload["value"]
            elif kind == "graph":
                found.graph = payload["graph"]
            elif kind == "file_upload" and payload.get("upload_type") == "model-element":
                params = payload["additional_params"]
                found.models.append(
                    {"name": params["groupingName"], "file": params["fileName"], "metadata": payload["metadata"]}
                )
                found.files[params["fileName"]] = bundle.read(payload["file_path"])
    return found


def comet_archives(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.zip"))
