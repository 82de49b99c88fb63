"""The base image on every Ray node: present, loaded from the driver's tarball, or asked for on
a node's first item. Tiny throwaway images (one file, `docker import`) keep it quick; both
test nodes share this machine's engine, which the per-host lock makes load only once."""
import io
import tarfile
import uuid

import pytest

from tests.workbench.executors import ray_work
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401
from tests.workbench.executors.ray_work import Item

pytestmark = [pytest.mark.slow, pytest.mark.docker]
ray = pytest.importorskip("ray")

from workbench.executors import ray_nodes  # noqa: E402
from workbench.executors.ray_connect import connect  # noqa: E402
from workbench.executors.ray_executor import RayExecutor  # noqa: E402
from workbench.executors.ray_nodes import ImageUnavailable, NeedsImage, NodeImage  # noqa: E402
from workbench.sandbox.engine import connect as docker_connect  # noqa: E402


@pytest.fixture
def tiny_images():
    """make() -> a new one-file image's tag; all removed afterwards."""
    client, tags = docker_connect(), []

    def make() -> str:
        tag = f"workbench-test/ray-image:{uuid.uuid4().hex[:10]}"
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            data = tag.encode()
            info = tarfile.TarInfo("hello")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        repo, _, t = tag.partition(":")
        client.api.import_image_from_data(buf.getvalue(), repository=repo, tag=t)
        tags.append(tag)
        return tag

    yield make
    for tag in tags:
        try:
            client.images.remove(tag, force=True)
        except Exception:   # already gone
            pass


def _remove(tag: str) -> None:
    docker_connect().images.remove(tag, force=True)


def test_present_on_every_node_ships_nothing(ray_cluster, tiny_images):
    connect(ray_cluster.address)
    need = NodeImage(tiny_images())
    assert ray_nodes.ensure_on_nodes(need) == {n: "present" for n in ray_cluster.node_ids()}
    assert not need.shipped


def test_a_missing_image_is_loaded_from_the_drivers_tarball_once(ray_cluster, tiny_images):
    connect(ray_cluster.address)
    tag = tiny_images()
    need = NodeImage(tag)
    ray_nodes.ship(need)            # saved while the driver's engine has it ...
    _remove(tag)                    # ... then gone from the engine every node uses
    statuses = ray_nodes.ensure_on_nodes(need)
    assert set(statuses) == set(ray_cluster.node_ids())
    # one load under the per-host lock; the other node then finds it on the shared engine
    assert sorted(statuses.values()) == ["loaded", "present"]
    assert ray_nodes.has_image(docker_connect(), tag)


def _first_items(tag: str, shipped: NodeImage):
    return (ray_nodes.ensure_here(NodeImage(tag)), ray_nodes.ensure_here(shipped), ray_nodes.ensure_here(shipped))


def test_a_node_without_it_asks_for_it_on_its_first_item_then_checks_no_more(ray_cluster, tiny_images):
    connect(ray_cluster.address)
    tag = tiny_images()
    shipped = NodeImage(tag)
    ray_nodes.ship(shipped)
    _remove(tag)
    asked, loaded, again = ray.get(ray.remote(_first_items).options(num_cpus=0).remote(tag, shipped))
    assert isinstance(asked, NeedsImage) and asked.image == tag and asked.node_id in ray_cluster.node_ids()
    assert (loaded, again) == ("loaded", "present")


def test_the_executor_reports_each_node_and_fails_items_clearly_when_no_one_has_the_image(ray_cluster, tiny_images):
    tag = tiny_images()
    report = RayExecutor(ray_cluster.address, base_image=tag).run([Item(0)], ray_work.tenfold, commit=lambda i, o: None)
    assert report.nodes == {n: "present" for n in ray_cluster.node_ids()} and report.done == 1

    gone = f"workbench-test/ray-image:never-built-{uuid.uuid4().hex[:6]}"
    errors = {}
    report = RayExecutor(ray_cluster.address, base_image=gone).run(
        [Item(1)], ray_work.tenfold, commit=lambda i, o: None, on_error=lambda i, e: errors.update({i.key: e}))
    assert set(report.nodes) == set(ray_cluster.node_ids())
    assert all(s.startswith(f"failed: {gone} is missing on a Ray node and on the driver's engine too")
               for s in report.nodes.values())
    assert report.failed == 1 and isinstance(errors["k1"], ImageUnavailable)
    assert "workbench images bootstrap" in str(errors["k1"])
