import pytest

from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

from workbench.executors import ray_connect  # noqa: E402


def _shipped_packages() -> list[str]:
    import os
    import sys
    return sorted(name for p in sys.path if "runtime_resources" in p
                  for name in ("workbench", "pipeline", "analysis") if os.path.isdir(os.path.join(p, name)))


def test_workers_import_the_shipped_working_tree(ray_cluster):
    ray_connect.connect(ray_cluster.address)
    # py_modules unpack under the node's runtime_resources and are on the worker's path. (On this
    # one machine the driver's own sys.path, which Ray also gives workers, finds the checkout first.)
    shipped = ray.get(ray.remote(_shipped_packages).options(num_cpus=0).remote())
    assert shipped == ["analysis", "pipeline", "workbench"]


def test_connecting_again_keeps_the_connection_and_another_address_is_probed_first(ray_cluster):
    first = ray_connect.connect(ray_cluster.address)
    assert ray_connect.connect(ray_cluster.address) == first
    assert ray_connect.connect("auto") == first       # attached already: stays
    with pytest.raises(ray_connect.RayUnreachable, match="no Ray cluster answers at '127.0.0.1:1'"):
        ray_connect.connect("127.0.0.1:1")
    assert ray_connect.connected_address() == first   # the failed address did not cost the working one


def test_a_ray_client_address_without_ray_client_says_what_to_install():
    from ray._private.utils import get_ray_client_dependency_error
    if get_ray_client_dependency_error() is None:
        pytest.skip("Ray Client is installed here")
    with pytest.raises(ray_connect.RayUnreachable, match=r"needs `pip install 'ray\[client\]'`"):
        ray_connect.probe("ray://127.0.0.1:10001")
