import socket
import subprocess
import sys

import pytest

from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401
from workbench.executors.factory import make_executor
from workbench.executors.local import LocalExecutor


def _run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_local_is_the_default_and_never_imports_ray():
    out = _run_python("import sys\nfrom workbench.executors.factory import make_executor\n"
                      "e = make_executor(concurrency=3)\nprint(type(e).__name__, e.concurrency, 'ray' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["LocalExecutor", "3", "False"]


def test_unknown_kind_and_an_address_without_ray_are_refused():
    with pytest.raises(ValueError, match=r"--executor 'spark' is unknown: choose one of local, ray"):
        make_executor("spark", concurrency=1)
    with pytest.raises(ValueError, match="only for --executor ray"):
        make_executor("local", concurrency=1, ray_address="127.0.0.1:6379")
    assert isinstance(make_executor("local", concurrency=2), LocalExecutor)


def test_ray_missing_names_the_extra_to_install():
    # sys.modules["ray"] = None makes `import ray` raise ImportError, as on an install without the extra.
    out = _run_python("import sys\nsys.modules['ray'] = None\nfrom workbench.executors.factory import make_executor\n"
                      "try:\n    make_executor('ray', concurrency=1)\nexcept ValueError as e:\n    print(e)")
    assert out.returncode == 0, out.stderr
    assert "pip install -e .[ray]" in out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_an_unreachable_cluster_is_named_quickly():
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_free_port()}"
    with pytest.raises(ValueError, match=rf"no Ray cluster answers at '{address}'.*ray start --head"):
        make_executor("ray", concurrency=1, ray_address=address)
    with pytest.raises(ValueError, match="not `auto`, `ray://host:port` or `host:port`"):
        make_executor("ray", concurrency=1, ray_address="somewhere")


@pytest.mark.slow
def test_ray_on_the_test_cluster(ray_cluster):
    from workbench.executors.ray_executor import RayExecutor
    ex = make_executor("ray", concurrency=0, ray_address=ray_cluster.address)
    assert isinstance(ex, RayExecutor)
    assert ex.slots() == 2          # the cluster's docker slots: one per node
    assert make_executor("ray", concurrency=5, ray_address=ray_cluster.address).slots() == 5
