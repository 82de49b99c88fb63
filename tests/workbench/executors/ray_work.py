"""Work items and functions the Ray tests send to workers.

Workers cannot import the tests package, so this module is pickled by value (cloudpickle)."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import cloudpickle

cloudpickle.register_pickle_by_value(sys.modules[__name__])


@dataclass(frozen=True)
class Item:
    n: int
    log_dir: str = ""          # where each try leaves a line (workers share this machine's disk)
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"k{self.n}"


def node_id() -> str:
    import ray
    return ray.get_runtime_context().get_node_id()


def record_try(item: Item) -> None:
    if item.log_dir:
        with open(os.path.join(item.log_dir, f"{item.key}.tries"), "a") as f:
            f.write(f"{node_id()} {os.getpid()}\n")


def tries(log_dir: str, key: str) -> list[str]:
    """Node ids of every try of `key`, in order."""
    try:
        with open(os.path.join(log_dir, f"{key}.tries")) as f:
            return [line.split()[0] for line in f if line.strip()]
    except FileNotFoundError:
        return []


def tenfold(item: Item) -> tuple[int, str]:
    record_try(item)
    time.sleep(item.seconds)
    return item.n * 10, node_id()


def big(item: Item) -> bytes:
    """An outcome larger than Ray inlines (100 KB): it travels through the object store."""
    return bytes([item.n]) * (2 * 1024 * 1024)


def boom_on_two(item: Item) -> int:
    record_try(item)
    if item.n == 2:
        raise RuntimeError("boom")
    return item.n


def engine_answers(engine, item: Item) -> tuple[bool, bool]:
    """Run with an Engine pickled from the driver: is it this worker's own, and does it answer?"""
    from workbench.sandbox.engine import node_engine
    return engine is node_engine(), engine.client.ping()
