"""The last bytes of a console artifact, without downloading all of it where MLflow allows.

A console log of a long run is often gigabytes; mlaudit reads at most its last
``max_bytes`` (``loader.CONSOLE_MAX_BYTES``, 50 MiB). Three ways, first that applies:

* ``local``: the artifact store is a local folder (``file:`` or a path): the file is opened
  where it is and read from ``size - max_bytes``;
* ``range``: the artifacts are served by the tracking server (``mlflow-artifacts:/`` or
  ``http(s)://``): one ``GET`` with ``Range: bytes=-<max_bytes>`` through MLflow's own
  ``http_request`` (its credentials, TLS settings, timeouts); the server's ``send_file``
  answers 206 with the tail. A server that ignores ``Range`` (200) is streamed and only the
  last ``max_bytes`` are kept, so memory stays bounded either way;
* ``download``: any other store (S3, GCS, Azure... through MLflow's artifact repositories,
  which have no partial download): the whole file, then its tail.

:func:`read_tail` returns ``(bytes, how)``; ``how`` names the way used.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse


def _local_root(artifact_uri: str) -> Path | None:
    if artifact_uri.startswith("file:"):
        return Path(unquote(urlparse(artifact_uri).path))
    if "://" not in artifact_uri and ":" not in artifact_uri.split("/")[0]:
        return Path(artifact_uri)
    return None


def _tail_of_file(path: Path, max_bytes: int) -> bytes:
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            fh.seek(size - max_bytes)
        return fh.read(max_bytes)


def _http_creds(artifact_uri: str, tracking_uri: str):
    """The ``MlflowHostCreds`` of the HTTP(S) artifact root ``artifact_uri`` resolves to (as
    MLflow's HttpArtifactRepository builds them), or None: not served over HTTP, or MLflow
    has no credentials helper (then the artifact is downloaded)."""
    from mlflow.store.artifact.mlflow_artifacts_repo import MlflowArtifactsRepository

    from mlaudit_core.sdk_private import mlflow_host_creds

    if artifact_uri.startswith("mlflow-artifacts:"):
        artifact_uri = MlflowArtifactsRepository.resolve_uri(artifact_uri, tracking_uri)
    if not artifact_uri.startswith(("http://", "https://")):
        return None
    return mlflow_host_creds(artifact_uri)


def _range_get(creds, path: str, max_bytes: int) -> bytes:
    from mlflow.utils.rest_utils import augmented_raise_for_status, http_request

    resp = http_request(
        creds,
        posixpath.join("/", path),
        "GET",
        stream=True,
        extra_headers={"Range": f"bytes=-{max_bytes}"},
    )
    augmented_raise_for_status(resp)
    buf = bytearray()
    for chunk in resp.iter_content(chunk_size=1 << 20):
        buf += chunk
        if len(buf) > 2 * max_bytes:  # a 200 with the whole file: keep the tail only
            del buf[: len(buf) - max_bytes]
    return bytes(buf[-max_bytes:])


def read_tail(client, run_id: str, path: str, max_bytes: int) -> tuple[bytes, str]:
    """The last ``max_bytes`` of artifact ``path`` of run ``run_id`` and how they were read
    (``"local"``, ``"range"`` or ``"download"``).

    Raises:
        Exception: whatever MLflow raises when the artifact cannot be read at all.
    """
    artifact_uri = client.get_run(run_id).info.artifact_uri
    root = _local_root(artifact_uri)
    if root is not None and (root / path).is_file():
        return _tail_of_file(root / path, max_bytes), "local"
    try:
        creds = _http_creds(artifact_uri, client.tracking_uri)
    except Exception:  # noqa: BLE001 - an MLflow without these classes: plain download below
        creds = None
    if creds is not None:
        return _range_get(creds, path, max_bytes), "range"
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(client.download_artifacts(run_id, path, tmp))
        return _tail_of_file(local, max_bytes), "download"
