"""Connecting this process (the driver) to a Ray cluster, with the code its workers import.

`ray.init` is called with `log_to_driver=False` (workers' output stays in the cluster's
logs, not in a stage's console) and the `workbench` namespace. The job's runtime env ships
the working tree's packages (`py_modules`), so a worker imports the driver's `workbench` /
`pipeline` / `analysis` code even on a node with an older checkout; their third-party
dependencies must already be in the node's Python (the same venv). ray.init hangs for
minutes on an address where nothing listens, so a host:port is probed first.
"""
from __future__ import annotations

import socket
from pathlib import Path

NAMESPACE = "workbench"
PACKAGES = ("workbench", "pipeline", "analysis")     # what a worker may import of ours
EXCLUDES = ["__pycache__", "*.pyc"]
PROBE_TIMEOUT_S = 5.0
START_HINT = ("start one with `ray start --head --resources '{\"docker\": N}'` "
              "(and `ray start --address HEAD:PORT --resources '{\"docker\": N}'` on each node)")


class RayUnreachable(ValueError):
    """No Ray cluster answers at the address given; the message names it."""


def code_runtime_env() -> dict:
    """The runtime env that ships this working tree's packages to every worker."""
    import importlib
    modules = []
    for name in PACKAGES:
        try:
            modules.append(str(Path(importlib.import_module(name).__file__).parent))
        except ImportError:   # a package this install does not have: nothing to ship
            continue
    return {"py_modules": modules, "excludes": EXCLUDES}


def _host_port(address: str) -> tuple[str, int] | None:
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host or "127.0.0.1", int(port)


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """RayUnreachable unless something accepts a TCP connection at the address's host:port
    (and, for ray://, this install has Ray Client)."""
    if address.startswith("ray://"):
        from ray._private.utils import get_ray_client_dependency_error
        if get_ray_client_dependency_error() is not None:
            raise RayUnreachable(f"Ray address {address!r} is a Ray Client address, which needs "
                                 "`pip install 'ray[client]'`; or give the cluster's GCS host:port instead")
    hp = _host_port(address)
    if hp is None:
        raise RayUnreachable(f"Ray address {address!r} is not `auto`, `ray://host:port` or `host:port`")
    try:
        socket.create_connection(hp, timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnreachable(f"no Ray cluster answers at {address!r} ({exc.strerror or exc}); {START_HINT}") from None


# (address asked for, what it attached to) of this process's last connect: a ray:// address has
# no GCS address to compare with, and a cluster joined by someone else's ray.init is not it.
_asked: list[tuple[str, str]] = []


def connected_address() -> str | None:
    import ray
    if not ray.is_initialized():
        return None
    try:
        return ray.get_runtime_context().gcs_address
    except Exception:      # a Ray Client connection has no GCS address here
        return "ray-client"


def connect(address: str | None, *, local_docker: int = 1, ship_code: bool = True) -> str:
    """Attach this process to the cluster at `address`; return the GCS address it is on.

    `auto`: the cluster RAY_ADDRESS or the latest `ray start` on this machine names. Empty /
    None: that one if there is one, else a fresh local Ray with `local_docker` slots of the
    `docker` resource. Already attached elsewhere: detach first (one cluster per process)."""
    import ray
    explicit = bool(address) and address != "auto"
    current = connected_address()
    if current is not None:
        if not explicit or (address, current) in _asked or _same(address, current):
            return current
        probe(address)           # before leaving a cluster that works for one that may not
        ray.shutdown()
    kwargs = dict(ignore_reinit_error=True, log_to_driver=False, namespace=NAMESPACE,
                  runtime_env=code_runtime_env() if ship_code else None)
    if explicit:
        probe(address)
        try:
            ray.init(address=address, **kwargs)
        except Exception as exc:      # Ray raises ConnectionError, RuntimeError, grpc errors
            raise RayUnreachable(f"could not attach to the Ray cluster at {address!r} "
                                 f"({type(exc).__name__}: {_first_line(exc)}); {START_HINT}") from None
        _asked[:] = [(address, connected_address())]
        return _asked[0][1]
    _asked.clear()
    try:
        ray.init(address="auto", **kwargs)
    except ConnectionError:
        if address == "auto":
            raise RayUnreachable(f"--ray-address auto found no running Ray cluster (RAY_ADDRESS unset and "
                                 f"no `ray start` on this machine); {START_HINT}") from None
        ray.init(resources={"docker": local_docker}, include_dashboard=False, **kwargs)
    return connected_address()


def _same(address: str, current: str) -> bool:
    a, b = _host_port(address), _host_port(current)
    if a is None or b is None:
        return False
    local = {"127.0.0.1", "localhost"}
    return a[1] == b[1] and (a[0] == b[0] or a[0] in local or b[0] in local)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
