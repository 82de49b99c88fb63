"""Each Ray node's Docker engine gets the base image once, before a batch or on first use.

Task Dockerfiles start FROM the base image, and a node's engine may never have built it
(`workbench images bootstrap` takes minutes). Before a batch the driver sends one small task
to every alive node offering the `docker` resource (pinned there by node affinity) that
looks for the image. Only when some node lacks it does the driver `docker save` its own copy
(gzip, once per batch) into the object store; each such node `docker load`s it under a
per-host file lock, so workers sharing one engine load it once (the others then find it
present). A node that joins later checks on its first item, once per worker process, and
asks the driver for the tarball by returning `NeedsImage` (see ray_executor).
"""
from __future__ import annotations

import fcntl
import gzip
import hashlib
import logging
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("workbench.executors.ray")

PRESENT, LOADED = "present", "loaded"          # else "failed: <reason>"
DOCKER_RESOURCE = "docker"


class ImageUnavailable(RuntimeError):
    """The base image is missing on a node and could not be loaded there."""


@dataclass
class NodeImage:
    """What a batch's items need to find on their node's engine: `image`, shippable as `tarball`."""
    image: str
    tarball: list = field(default_factory=list)    # [ObjectRef] once saved; a list so Ray does not resolve it as an argument

    @property
    def shipped(self) -> bool:
        return bool(self.tarball)


@dataclass(frozen=True)
class NeedsImage:
    """A worker's answer instead of an outcome: its node lacks the image and none was shipped."""
    node_id: str
    image: str


# ------------------------------------------------------------------ on a node (worker side)
_ensured: set[str] = set()     # images this worker process has seen on its engine


def _client():
    from workbench.sandbox.engine import connect
    return connect()


def _lock_path(image: str) -> Path:
    return Path(tempfile.gettempdir()) / f"workbench-image-{hashlib.sha256(image.encode()).hexdigest()[:16]}.lock"


def has_image(client, image: str) -> bool:
    import docker.errors
    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False


def load_image(image: str, tarball: bytes) -> str:
    """Load `tarball` into this host's engine unless `image` is there by the time the lock is ours."""
    client = _client()
    with open(_lock_path(image), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # another worker on this host may be loading it right now
        try:
            if has_image(client, image):
                return PRESENT
            try:
                client.images.load(gzip.decompress(tarball))
            except Exception as exc:         # docker.errors.APIError, a corrupt tarball
                raise ImageUnavailable(f"docker load of {image} failed: {exc}") from None
            if not has_image(client, image):
                raise ImageUnavailable(f"docker load did not bring {image} (the tarball holds another image)")
            return LOADED
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_here(need: NodeImage) -> str | NeedsImage:
    """On a worker before its item: PRESENT / LOADED, or NeedsImage when it must be shipped.
    Checked once per worker process (a docker call per item would add up)."""
    if need.image in _ensured:
        return PRESENT
    if has_image(_client(), need.image):
        _ensured.add(need.image)
        return PRESENT
    if not need.shipped:
        import ray
        return NeedsImage(ray.get_runtime_context().get_node_id(), need.image)
    import ray
    status = load_image(need.image, ray.get(need.tarball[0]))
    _ensured.add(need.image)
    return status


def _check(image: str) -> bool:
    return has_image(_client(), image)


def _load(image: str, tarball_holder: list) -> str:
    import ray
    return load_image(image, ray.get(tarball_holder[0]))


# ------------------------------------------------------------------ driver side
def docker_nodes() -> list[str]:
    """Ids of the alive nodes that offer the docker resource."""
    import ray
    return [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(DOCKER_RESOURCE, 0) > 0]


def save_tarball(image: str) -> bytes:
    """`docker save` of the driver's copy of `image`, gzipped (docker load takes it as is)."""
    import docker.errors
    client = _client()
    try:
        chunks = client.images.get(image).save(named=True)
    except docker.errors.ImageNotFound:
        raise ImageUnavailable(f"{image} is missing on a Ray node and on the driver's engine too: build it "
                               "where the driver runs (`workbench images bootstrap`) to ship it") from None
    return gzip.compress(b"".join(chunks), compresslevel=1)


def ship(need: NodeImage) -> None:
    """Put the tarball into the object store once; later calls keep the first."""
    if not need.shipped:
        import ray
        t0 = time.monotonic()
        data = save_tarball(need.image)
        need.tarball = [ray.put(data)]
        log.info("shipped %s to the object store (%.1f MB, %.1f s)", need.image, len(data) / 1e6, time.monotonic() - t0)


def ensure_on_nodes(need: NodeImage, timeout_s: float = 600.0) -> dict[str, str]:
    """Make sure every alive docker node has `need.image` (shipping it if some node lacks it
    and it is not shipped yet): node id -> PRESENT / LOADED / "failed: …"."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    def on(node_id: str, fn):
        return ray.remote(fn).options(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))

    image, statuses = need.image, {}
    nodes = docker_nodes()
    checks = {n: on(n, _check).remote(image) for n in nodes}
    missing = []
    for node_id, ref in checks.items():
        try:
            if ray.get(ref, timeout=timeout_s):
                statuses[node_id] = PRESENT
            else:
                missing.append(node_id)
        except Exception as exc:     # the node died, its engine does not answer
            statuses[node_id] = f"failed: {_reason(exc)}"
    if missing:
        try:
            ship(need)
        except ImageUnavailable as exc:
            statuses.update({n: f"failed: {exc}" for n in missing})
            missing = []
        loads = {n: on(n, _load).remote(image, need.tarball) for n in missing}
        for node_id, ref in loads.items():
            try:
                statuses[node_id] = ray.get(ref, timeout=timeout_s)
            except Exception as exc:
                statuses[node_id] = f"failed: {_reason(exc)}"
    for node_id, status in statuses.items():
        log.info("base image %s on node %s: %s", image, node_id[:12], status)
    return statuses


def _reason(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"
