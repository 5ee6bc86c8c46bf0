"""Runs in object storage: one place turns a runs location — a local path, or an ``s3://``,
``gs://`` or ``az://`` URL — into a folder the readers can read.

A bucket prefix is mirrored into the cache folder (``$RAGTRIAGE_CACHE_DIR/remote/<scheme>/<bucket>/``),
object by object: a listing gives each object's ETag (and version, where the bucket keeps them), and
only objects new or changed since the last listing are downloaded (in parallel). A mirrored file's
mtime encodes its object's ETag, so the parse cache — keyed on path, mtime and size — reads a
rewritten object again and never serves the old one. Objects gone from the listing leave the mirror,
so a run removed from the bucket leaves the dashboard. A run's test set outside the prefix (its
manifest's relative path) is fetched too. Run files stay read-only: nothing is ever written to the
bucket.

Why obstore: one small, maintained library (Rust's ``object_store``, as polars uses) for S3, GCS and
Azure alike, with fast listings and parallel reads, and credentials from each cloud's standard
environment (``AWS_*``/``AWS_ENDPOINT_URL``, web identity, instance metadata; ``GOOGLE_*``;
``AZURE_*``). fsspec would need one package per cloud (s3fs, gcsfs, adlfs) with their own pins.
Credentials are never printed: every message goes through :func:`evalcore.errors.redact`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from evalcore.cache import cache_dir
from evalcore.errors import Problem, SetupError, redact

SCHEMES = ("s3://", "gs://", "az://", "abfs://", "abfss://", "azure://")


# The bundled sample runs, beside the package in a checkout (the README's first command opens them).
SAMPLE_RUNS = Path(__file__).resolve().parents[2] / "sample_runs"


def runs_location(given: str | None = None) -> str:
    """Where the runs are, for the dashboard and every CLI verb alike: ``given`` (``--runs``), else
    ``$RAGTRIAGE_RUNS``, else the bundled sample runs — a folder or a bucket URL."""
    loc = given or os.environ.get("RAGTRIAGE_RUNS") or str(SAMPLE_RUNS)
    return loc if is_remote(loc) else str(Path(loc).resolve())


def is_remote(location: str | Path) -> bool:
    """Whether ``location`` is an object-storage URL rather than a local path."""
    return isinstance(location, str) and location.startswith(SCHEMES)


def split(url: str) -> tuple[str, str, str]:
    """``s3://bucket/a/b`` -> ``("s3", "bucket", "a/b")``."""
    scheme, _, rest = url.partition("://")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        msg = f"{redact(url)}: a bucket URL names its bucket (s3://BUCKET/prefix)"
        raise SetupError(msg)
    return scheme, bucket, prefix.strip("/")


@dataclass
class Located:
    """A runs location and the local folder that holds its files now."""

    location: str  # as the user wrote it (for messages)
    root: Path  # the folder to read
    problems: list[Problem] = field(default_factory=list)  # objects listed, then gone
    downloaded: int = 0  # objects fetched by this sync (0: the mirror was up to date)
    listed: int = 0

    def display(self, text: str) -> str:
        """``text`` with the mirror's paths written as the bucket's URLs."""
        if not is_remote(self.location):
            return text
        return text.replace(str(self.root), self.location.rstrip("/"))


_STORES: dict[str, Any] = {}
_SYNCED: dict[str, tuple[float, Located]] = {}
_LOCK = threading.Lock()


def _store(scheme: str, bucket: str) -> Any:
    """An obstore client for a bucket (one per process), credentials from the environment."""
    key = f"{scheme}://{bucket}"
    with _LOCK:
        if key not in _STORES:
            try:
                from obstore.store import from_url
            except ImportError as exc:  # pragma: no cover - a dependency
                msg = "runs in object storage need obstore: pip install obstore"
                raise SetupError(msg) from exc
            endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
            options = {"allow_http": True} if endpoint.startswith("http://") else None
            config: dict[str, str] = {}
            if scheme == "s3" and endpoint:
                config["endpoint"] = endpoint
            _STORES[key] = from_url(key, config=config or None, client_options=options)  # type: ignore[arg-type]
        return _STORES[key]


def mirror_root(scheme: str, bucket: str) -> Path:
    """Where a bucket is mirrored; a bucket of an S3-compatible server (``AWS_ENDPOINT_URL``) apart
    from the same name on AWS."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    host = (
        scheme
        if not (scheme == "s3" and endpoint)
        else f"s3-{hashlib.sha256(endpoint.encode()).hexdigest()[:10]}"
    )
    return cache_dir() / "remote" / host / bucket


def _mtime_ns(meta: dict[str, Any]) -> int:
    """The mirrored file's mtime: the object's time, its nanoseconds taken from the ETag/version, so a
    rewrite within the same second (S3 keeps seconds) still changes the parse cache's key."""
    tag = f"{meta.get('e_tag') or ''}|{meta.get('version') or ''}"
    lm = meta.get("last_modified")
    seconds = int(lm.timestamp()) if lm is not None else 0
    return seconds * 1_000_000_000 + int(hashlib.sha256(tag.encode()).hexdigest()[:12], 16) % 1_000_000_000


_STATUS = re.compile(r"(?i)\b(?:status|code|http)\b\W{0,3}(?:code\W{0,3})?(401|403|404)\b")


def _why(exc: BaseException, url: str) -> str:
    """A listing or read error in words, naming the URL (never a credential). The service's error code
    decides first; a bare number is never read as a status (request ids hold digits: a "401" inside
    one once turned a missing bucket into a credentials message)."""
    text = str(exc)
    name = type(exc).__name__
    status = _STATUS.search(text)
    code = status.group(1) if status else ""
    if "NoSuchBucket" in text:
        return f"{redact(url)}: no such bucket (check its name, and AWS_ENDPOINT_URL for an S3-compatible server)"
    if "PermissionDenied" in name or "AccessDenied" in text or code == "403":
        return (
            f"access to {redact(url)} was refused (403): the credentials in the environment (AWS_ACCESS_KEY_ID, "
            "GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*) may not read this bucket"
        )
    if "Unauthenticated" in name or "Unauthorized" in text or code == "401":
        return f"{redact(url)}: the storage service did not accept the credentials in the environment (401)"
    first = " ".join(text.split())[:240]
    return f"could not read {redact(url)}: {redact(first)}"


def _listing(store: Any, prefix: str, url: str) -> dict[str, dict[str, Any]]:
    import obstore

    out: dict[str, dict[str, Any]] = {}
    try:
        for batch in obstore.list(store, prefix=prefix + "/" if prefix else None, chunk_size=1000):
            for meta in batch:
                path = str(meta["path"])
                if any(part.startswith(".") for part in PurePosixPath(path).parts):
                    continue
                out[path] = dict(meta)
    except Exception as exc:
        raise SetupError(_why(exc, url)) from exc
    return out


def _download(store: Any, key: str, meta: dict[str, Any], dest: Path) -> None:
    import obstore

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        got = obstore.get(store, key)
        with tmp.open("wb") as fh:
            for chunk in got.stream(min_chunk_size=8 << 20):
                fh.write(chunk)
        mtime = _mtime_ns(meta)
        os.utime(tmp, ns=(mtime, mtime))
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _current(path: Path, meta: dict[str, Any]) -> bool:
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    return st.st_size == int(meta["size"]) and st.st_mtime_ns == _mtime_ns(meta)


def _testset_keys(bucket_root: Path, listed: dict[str, dict[str, Any]]) -> Iterator[str]:
    """Test sets that runs of the prefix name by a relative path outside it (keys of the bucket)."""
    for key in listed:
        if not key.endswith("run.json"):
            continue
        try:
            manifest = json.loads((bucket_root / key).read_text(encoding="utf-8"))
            ts = manifest.get("test_set") or manifest.get("testset") or {}
            rel = ts.get("path") if isinstance(ts, dict) else ts
        except (OSError, ValueError, AttributeError):
            continue  # the reader names what is wrong with the manifest
        if not isinstance(rel, str) or not rel:
            continue
        target = os.path.normpath(str(PurePosixPath(key).parent / rel))
        if not target.startswith("..") and target not in listed:
            yield target


def resolve(location: str | Path, *, max_age: float = 0.0) -> Located:
    """The local folder to read for ``location``: the path itself, or the bucket prefix mirrored
    (synced again unless it was synced less than ``max_age`` seconds ago). :class:`SetupError` names
    the URL and why when the bucket cannot be listed."""
    if not is_remote(location):
        return Located(str(location), Path(location))
    url = str(location)
    with _LOCK:
        hit = _SYNCED.get(url)
    if hit is not None and time.monotonic() - hit[0] < max_age:
        return hit[1]
    scheme, bucket, prefix = split(url)
    store = _store(scheme, bucket)
    bucket_root = mirror_root(scheme, bucket)
    root = bucket_root / prefix if prefix else bucket_root
    listed = _listing(store, prefix, url)
    if not listed and prefix:  # one object (a test set, a results file), not a prefix
        try:
            import obstore

            meta = dict(obstore.head(store, prefix))
        except Exception:
            meta = None
        if meta is not None:
            found = Located(url, root, listed=1)
            if not _current(root, meta):
                try:
                    _download(store, prefix, meta, root)
                except Exception as exc:
                    raise SetupError(_why(exc, url)) from exc
                found.downloaded = 1
            with _LOCK:
                _SYNCED[url] = (time.monotonic(), found)
            return found
    found = Located(url, root, listed=len(listed))
    todo = [(k, m) for k, m in listed.items() if not _current(bucket_root / k, m)]

    def fetch(item: tuple[str, dict[str, Any]]) -> None:
        key, meta = item
        try:
            _download(store, key, meta, bucket_root / key)
        except FileNotFoundError:  # listed, then deleted before it could be read
            (bucket_root / key).unlink(missing_ok=True)
            found.problems.append(
                Problem(
                    f"{scheme}://{bucket}/{key}",
                    "was listed, then deleted before it could be read; it is left out",
                    hint="load the page again (or run the command again) once the bucket settles",
                    severity="warning",
                )
            )
        except Exception as exc:
            raise SetupError(_why(exc, f"{scheme}://{bucket}/{key}")) from exc

    if todo:
        with ThreadPoolExecutor(min(16, len(todo))) as pool:
            list(pool.map(fetch, todo))
    found.downloaded = len(todo)
    # The runs' test sets named outside the prefix (../testset.jsonl of a run URL).
    outside = sorted(set(_testset_keys(bucket_root, listed)))
    for key in outside:
        try:
            import obstore

            meta = dict(obstore.head(store, key))
        except Exception:
            continue  # the reader says the test set is missing
        if not _current(bucket_root / key, meta):
            fetch((key, meta))
            found.downloaded += 1
    # Objects no longer listed leave the mirror (a run removed from the bucket leaves the folder).
    if root.is_dir():
        keep = {str(bucket_root / k) for k in listed} | {str(bucket_root / k) for k in outside}
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                p = os.path.join(dirpath, name)
                if p not in keep and not name.startswith("."):
                    Path(p).unlink(missing_ok=True)
    else:
        root.mkdir(parents=True, exist_ok=True)
    with _LOCK:
        _SYNCED[url] = (time.monotonic(), found)
    return found
