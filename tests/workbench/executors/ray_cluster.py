"""A real local Ray cluster for tests: a head and a second node, each its own raylet process.

`ray_cluster` (session-scoped) starts it once; import it where a test needs Ray:

    from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401

Each node offers 1 CPU and 1 `docker` slot (both share this machine's Docker engine) and a
small object store, since memory here is shared. GCS health checks are fast, so a killed
node is declared dead within ~3 s and its items are retried on the head. Torn down at the
end of the session, also on failure (and Ray's reaper kills it if pytest itself dies).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest

NODE_ARGS = dict(num_cpus=1, resources={"docker": 1}, object_store_memory=100 * 1024 * 1024)
HEAD_ARGS = dict(NODE_ARGS, include_dashboard=False, _system_config={
    "health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
    "health_check_timeout_ms": 500, "health_check_failure_threshold": 4,
})


@dataclass
class LocalRayCluster:
    cluster: object                       # ray.cluster_utils.Cluster
    second: object = None                 # the second node (ray._private.node.Node)
    killed: list = field(default_factory=list)

    @property
    def address(self) -> str:
        return self.cluster.address

    def node_ids(self) -> list[str]:
        import ray
        return [n["NodeID"] for n in ray.nodes() if n["Alive"]]

    def second_node_id(self) -> str:
        return self.second.node_id

    def kill_second_node(self) -> None:
        """SIGKILL the second node's raylet, as a machine failing would (no graceful exit)."""
        self.second.kill_raylet()
        self.killed.append(self.second)

    def wait_dead(self, node_id: str, timeout_s: float = 30.0) -> None:
        import ray
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes()):
                return
            time.sleep(0.2)
        raise TimeoutError(f"node {node_id} still alive after {timeout_s} s")

    def restore_second_node(self) -> None:
        """A fresh second node in place of a killed one, so later tests see two again."""
        for node in self.killed:
            try:
                self.cluster.remove_node(node, allow_graceful=False)
            except Exception:     # its other processes may be gone already
                self.cluster.worker_nodes.discard(node)
        self.killed.clear()
        self.second = self.cluster.add_node(**NODE_ARGS)
        self.cluster.wait_for_nodes()


_running: list[LocalRayCluster] = []   # one per session, though each importing module makes its own fixture


def _start() -> LocalRayCluster:
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args=HEAD_ARGS)
    try:
        local = LocalRayCluster(cluster, cluster.add_node(**NODE_ARGS))
        cluster.wait_for_nodes()
    except BaseException:
        cluster.shutdown()
        raise
    return local


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    owner = not _running
    if owner:
        _running.append(_start())
    try:
        yield _running[0]
    finally:
        if owner:
            ray.shutdown()
            _running.pop().cluster.shutdown()
