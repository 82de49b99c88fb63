"""Which paths get which scripted fault, for the scripted replay server of
`pipeline.synth.llm.scripted` when the path ids are not known in advance.

`workbench synth` samples its own paths when it starts (a new sample batch), so the replay
command (`workbench replay-synthesis`) and the demo build, which start their server first,
cannot name the paths up front. `LatestBatchFaults` gives a list of faults, in order, to the
first paths of the workspace's latest sample batch that the recipes can serve (a path they
cannot serve gets no task whatever its fault, so a fault put there would be lost), looked up
when one of that batch's paths is first asked about. Same batch, same assignment.

A test double for trying the pipeline and for CI, like the scripted replies themselves.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from pipeline.synth.llm.scripted import FAULTS
from workbench.llm.settings import CONFIG_FILE, Price, read_config
from workbench.store import graph as graph_store
from workbench.workspace import Workspace

# One fault per repair route of issue 13 (environment, solution, tests twice, instruction, the
# judge) and one that exhausts its repairs; the bad-output faults follow with `all`. Most telling
# first: a batch with fewer servable paths keeps the routes.
ROUTE_FAULTS: tuple[str, ...] = ("broken_dockerfile", "crashing_solution", "test_bug", "passes_untouched",
                                 "leaking_instruction", "judge_flags", "exhaust")
ALL_FAULTS: tuple[str, ...] = ROUTE_FAULTS + tuple(f for f in FAULTS if f not in ROUTE_FAULTS)
FAULT_SETS = {"none": (), "routes": ROUTE_FAULTS, "all": ALL_FAULTS}

# The model name the replay server answers as, and a made-up price for it, so that costs and
# --budget-usd can be tried without a real endpoint. Named so nobody takes it for a real model.
REPLAY_MODEL = "scripted-replay"
DEMO_REPLAY_MODEL = "scripted-replay (demo price)"
DEMO_PRICE = Price(input_per_mtok=0.50, output_per_mtok=1.50)


class FaultSpecError(ValueError):
    """A --faults value or file that cannot be used; the message says what and where."""


def _check_names(names: Sequence[str], where: str) -> None:
    for i, name in enumerate(names):
        if name not in FAULTS:
            raise FaultSpecError(f"{where}[{i}]: unknown fault {name!r}; known: {', '.join(FAULTS)}")


def read_fault_spec(spec: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """(faults for the first servable paths in order, faults for named path ids) of a --faults
    value: none | routes | all | a JSON file holding a list of fault names (given in order) or
    an object {path_id: fault}."""
    if spec in FAULT_SETS:
        return FAULT_SETS[spec], {}
    path = Path(spec)
    if not path.is_file():
        raise FaultSpecError(f"--faults {spec!r}: not one of {', '.join(FAULT_SETS)} and no such file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FaultSpecError(f"{path}: not a JSON file ({exc})") from None
    if isinstance(data, list) and all(isinstance(x, str) for x in data):
        _check_names(data, str(path))
        return tuple(data), {}
    if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
        for pid, name in data.items():
            if name not in FAULTS:
                raise FaultSpecError(f"{path}: path {pid!r}: unknown fault {name!r}; known: {', '.join(FAULTS)}")
        return (), dict(data)
    raise FaultSpecError(f"{path}: expected a list of fault names or an object {{path_id: fault}}, "
                         f"got {type(data).__name__}")


class LatestBatchFaults(Mapping[str, str]):
    """path id -> fault: `order` given to the first servable paths of the latest sample batch
    (checked again when a path nobody has asked about comes up: a synth run samples a new
    batch), plus `fixed` faults by path id. `on_assign(batch_id, {path_id: fault})` is called
    once per batch that gets faults. Thread-safe: the scripted replies run in worker threads."""

    def __init__(self, ws: Workspace, order: Sequence[str], servable: Callable[[str], bool], *,
                 fixed: Mapping[str, str] | None = None,
                 on_assign: Callable[[str, dict[str, str]], None] | None = None):
        _check_names(order, "faults")
        _check_names(list((fixed or {}).values()), "faults")
        self.ws, self.order, self.servable, self.on_assign = ws, tuple(order), servable, on_assign
        self._known: dict[str, str] = dict(fixed or {})
        self._clean: set[str] = set()           # asked about and given none: never looked up again
        self._batches: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def assignment(self, batch_id: str) -> dict[str, str]:
        """The faults of one batch (its first servable paths, in sampling order)."""
        out: dict[str, str] = {}
        if not self.order:
            return out
        for pid in graph_store.batch_path_ids(self.ws.db, batch_id):
            if self.servable(pid):
                out[pid] = self.order[len(out)]
                if len(out) == len(self.order):
                    break
        return out

    def latest_batch(self) -> str | None:
        frame = graph_store.sample_batches(self.ws.db)
        return None if frame.empty else str(frame["batch_id"].iloc[0])

    def assign_latest(self) -> dict[str, str]:
        """Faults for the latest batch (once per batch); returns its assignment."""
        batch = self.latest_batch()
        if batch is None or not self.order:
            return {}
        with self._lock:
            if batch in self._batches:
                return dict(self._batches[batch])
        given = self.assignment(batch)
        with self._lock:
            if batch in self._batches:      # another thread got there first
                return dict(self._batches[batch])
            self._batches[batch] = given
            for pid, fault in given.items():
                self._known.setdefault(pid, fault)
        if self.on_assign is not None:
            self.on_assign(batch, given)
        return given

    def __getitem__(self, path_id: str) -> str:
        with self._lock:
            if path_id in self._known:
                return self._known[path_id]
            if path_id in self._clean:
                raise KeyError(path_id)
        self.assign_latest()
        with self._lock:
            if path_id in self._known:
                return self._known[path_id]
            self._clean.add(path_id)
        raise KeyError(path_id)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._known))

    def __len__(self) -> int:
        with self._lock:
            return len(self._known)


def scripted_replies(ws: Workspace, order: Sequence[str] = (), *, fixed: Mapping[str, str] | None = None,
                     seed: int = 0, on_assign: Callable[[str, dict[str, str]], None] | None = None):
    """The scripted replies of a workspace's paths with `order` faults on the first servable
    paths of its latest sample batch: (ScriptedSynthesis, its LatestBatchFaults)."""
    from pipeline.synth.llm.scripted import ScriptedSynthesis, ScriptedTask
    scripted = ScriptedSynthesis(ws, seed=seed)
    faults = LatestBatchFaults(ws, order, lambda pid: isinstance(scripted.task(pid), ScriptedTask),
                               fixed=fixed, on_assign=on_assign)
    scripted.faults = faults        # looked up per request (scripted.answer: self.faults.get(path_id))
    return scripted, faults


def write_demo_price(workspace_root: Path, model: str = REPLAY_MODEL, price: Price = DEMO_PRICE) -> Path:
    """Give the replay model a made-up price in the workspace's config.json (llm.prices), so that
    a synth run against the replay server has costs and --budget-usd can be tried. Keeps every
    other setting."""
    config = read_config(workspace_root)
    llm = dict(config.get("llm", {}))
    llm["prices"] = {**dict(llm.get("prices") or {}), model: price.model_dump()}
    config["llm"] = llm
    path = Path(workspace_root) / CONFIG_FILE
    tmp = path.with_name(f".{CONFIG_FILE}.tmp")
    tmp.write_text(json.dumps(config, indent=2))
    tmp.chmod(0o600)            # as save_settings: the file may hold the sealed key
    tmp.replace(path)
    return path
