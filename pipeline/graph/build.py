"""`workbench graph build`: embeddings → dedup → bridges → projection, incrementally.

What is recomputed: embeddings only for texts not in the cache; dedup only when the
scenario texts, the user's edits, the threshold or the embedder changed; a bridge verdict
only for candidates whose two texts are new; the projection only after a new dedup.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from pipeline.graph import bridges as bridge_mod
from pipeline.graph.constraints import from_edits
from pipeline.graph.dedup import ConstraintError, cluster_scenarios, identical_groups, medoids
from pipeline.graph.projection import project
from workbench.embeddings import get_embedder
from workbench.embeddings.cache import EmbeddingCache, embed_cached
from workbench.llm.batch import map_bounded
from workbench.llm.client import LLMClient
from workbench.llm.prompts import load_template
from workbench.store import graph as store
from workbench.workspace import Workspace

Progress = Callable[[str, int, int], None]
BRIDGE_STAGE = "bridge_verification"


@dataclass
class BuildOptions:
    embedder: str = "minilm"
    threshold: float = 0.88          # cosine similarity for two scenarios to be one node
    knn_k: int = 16
    bridge_k: int = 5
    bridge_threshold: float = 0.6
    seed: int = 7
    force: bool = False


@dataclass
class BuildReport:
    build_id: str
    scenarios: int = 0
    embedded: int = 0
    clusters: int = 0
    dedup_reused: bool = False
    candidates: int = 0
    verified: int = 0
    verdicts_reused: int = 0
    bridge_provider: str = "offline"
    texts_hash: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _inputs_hash(rows: pd.DataFrame, edits: list[dict], opts: BuildOptions, embedder_id: str) -> str:
    h = hashlib.sha256()
    for sid, text in zip(rows["scenario_id"], rows["text"]):
        h.update(f"{sid}\0{text}\n".encode())
    h.update(json.dumps([[e["edit_id"], e["kind"], e["payload"]] for e in edits], sort_keys=True).encode())
    h.update(f"{opts.threshold}|{opts.knn_k}|{embedder_id}".encode())
    return h.hexdigest()[:20]


def build_graph(ws: Workspace, opts: BuildOptions | None = None, *, llm: LLMClient | None = None,
                on_progress: Progress | None = None) -> BuildReport:
    opts = opts or BuildOptions()
    report = BuildReport(build_id=uuid.uuid4().hex[:12])
    started = datetime.now()
    say = on_progress or (lambda stage, done, total: None)
    rows = store.scenario_rows(ws.db)
    report.scenarios = len(rows)
    if rows.empty:
        raise ValueError("no accepted skill has scenarios yet: run `workbench scenarios infer` first")

    t0 = time.perf_counter()
    embedder = get_embedder(opts.embedder, **_embedder_kwargs(ws, opts.embedder))
    cache = EmbeddingCache(ws.cache_dir / "embeddings.sqlite")
    texts = rows["text"].tolist()
    before = cache.count(embedder.model_id)
    vectors = embed_cached(embedder, texts, cache, on_progress=lambda d, t: say("embedding", d, t))
    report.embedded = cache.count(embedder.model_id) - before
    report.timings["embed_s"] = time.perf_counter() - t0

    edits = store.active_edits(ws.db)
    inputs_hash = _inputs_hash(rows, edits, opts, embedder.model_id)
    last = store.last_build(ws.db)
    index_of = {sid: i for i, sid in enumerate(rows["scenario_id"])}
    constraints = from_edits(edits, index_of)
    t0 = time.perf_counter()
    if not opts.force and last and last["inputs_hash"] == inputs_hash:
        members = store.members_table(ws.db).set_index("scenario_id").reindex(rows["scenario_id"])
        labels = members["cluster_id"].to_numpy(dtype=np.int64)
        report.dedup_reused = True
    else:
        say("dedup", 0, 1)
        labels = _dedup(vectors, rows["text"].tolist(), opts, constraints)
        _store_clusters(ws, rows, vectors, labels, constraints.renames, report.build_id)
        say("dedup", 1, 1)
    report.clusters = int(labels.max()) + 1 if len(labels) else 0
    report.timings["dedup_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    _build_bridges(ws, rows, vectors, labels, opts, llm, report, say)
    report.timings["bridges_s"] = time.perf_counter() - t0

    texts_hash = hashlib.sha256("\n".join(f"{a}\0{b}" for a, b in zip(rows["scenario_id"], rows["text"]))
                                .encode()).hexdigest()[:20]
    report.texts_hash = texts_hash
    # The map depends on the texts only: edits (merges, renames) keep the stored projection.
    if (last or {}).get("stats", {}).get("texts_hash") != texts_hash or opts.force:
        t0 = time.perf_counter()
        say("projection", 0, 1)
        xy, topic = project(vectors, seed=opts.seed)
        store.save_projection(ws.db, pd.DataFrame({"scenario_id": rows["scenario_id"], "x": xy[:, 0],
                                                   "y": xy[:, 1], "topic": topic,
                                                   "build_id": report.build_id}))
        say("projection", 1, 1)
        report.timings["projection_s"] = time.perf_counter() - t0
    store.record_build(ws.db, report.build_id, started, embedder.model_id, opts.threshold, inputs_hash,
                       report.as_dict())
    return report


def _dedup(vectors, texts, opts: BuildOptions, constraints) -> np.ndarray:
    """Dedup with copies of one text as one node (see identical_groups); should the user's
    merges chain two sides of a split through such a group, their edits alone decide."""
    cannot = constraints.cannot_link_all(len(texts))
    must = [list(g) for g in constraints.must_link] + identical_groups(texts, cannot)
    try:
        return cluster_scenarios(vectors, threshold=opts.threshold, k=opts.knn_k, must_link=must, cannot_link=cannot)
    except ConstraintError:
        return cluster_scenarios(vectors, threshold=opts.threshold, k=opts.knn_k,
                                 must_link=constraints.must_link, cannot_link=cannot)


def _embedder_kwargs(ws: Workspace, name: str) -> dict:
    """An OpenAI-compatible embedder uses the workspace's endpoint and key."""
    if name != "openai":
        return {}
    from workbench.llm.settings import load_settings
    settings = load_settings(ws.root)
    if not settings.online:
        raise ValueError("--embedder openai needs an LLM endpoint (WORKBENCH_LLM_BASE_URL or Settings)")
    return {"base_url": settings.base_url,
            "api_key": settings.api_key.get_secret_value() if settings.api_key else "not-needed"}


def _store_clusters(ws, rows, vectors, labels, renames, build_id) -> None:
    med = medoids(vectors, labels)
    renamed_by_cluster = {int(labels[i]): text for i, text in renames.items()}
    sizes = np.bincount(labels)
    clusters = pd.DataFrame({
        "cluster_id": np.arange(len(med), dtype=np.int32),
        "anchor": rows["scenario_id"].to_numpy()[med],
        "canonical": [renamed_by_cluster.get(c, rows["text"].iloc[m]) for c, m in enumerate(med)],
        "size": sizes.astype(np.int32),
        "renamed": [c in renamed_by_cluster for c in range(len(med))],
        "build_id": build_id})
    members = pd.DataFrame({"scenario_id": rows["scenario_id"], "skill_id": rows["skill_id"],
                            "role": rows["role"], "cluster_id": labels.astype(np.int32), "text": rows["text"]})
    store.save_clusters(ws.db, members, clusters)


def _build_bridges(ws, rows, vectors, labels, opts, llm, report, say) -> None:
    skill_codes, _ = pd.factorize(rows["skill_id"])
    cands = bridge_mod.find_candidates(vectors, rows["role"].to_numpy(), skill_codes, labels,
                                       k=opts.bridge_k, threshold=opts.bridge_threshold)
    report.candidates = len(cands)
    known = store.bridge_verdicts(ws.db)
    texts = rows["text"].tolist()
    full = (rows["text"] + " | " + rows["state"].fillna("") + " | " + rows["io_tool"].fillna("")).tolist()
    sids = rows["scenario_id"].tolist()
    provider, model = ("offline", bridge_mod.OFFLINE_MODEL) if llm is None else (llm.provider, llm.settings.model)
    report.bridge_provider = provider
    out, todo = [], []
    for c in cands:
        th = bridge_mod.texts_hash(texts[c.post], texts[c.pre])
        prior = known.get((sids[c.post], sids[c.pre]))
        if prior and prior["texts_hash"] == th and prior["provider"] == provider:
            out.append((c, prior["verdict"] == "verified", prior["reason"], th))
            report.verdicts_reused += 1
        else:
            todo.append((c, th))
    if llm is None:
        for n, (c, th) in enumerate(todo, 1):
            ok, reason = bridge_mod.verify_offline(full[c.post], full[c.pre], c.similarity)
            out.append((c, ok, reason, th))
            if n % 200 == 0:
                say("bridges", n, len(todo))
    else:
        out.extend(_verify_with_llm(llm, todo, full, rows, say))
    now = datetime.now()
    frame = pd.DataFrame([{
        "post_scenario": sids[c.post], "pre_scenario": sids[c.pre], "from_skill": rows["skill_id"].iloc[c.post],
        "to_skill": rows["skill_id"].iloc[c.pre], "similarity": c.similarity,
        "verdict": "verified" if ok else "rejected", "reason": reason, "provider": provider, "model": model,
        "texts_hash": th, "created_at": now} for c, ok, reason, th in out])
    store.save_bridges(ws.db, frame)
    report.verified = sum(1 for _, ok, _, _ in out if ok)


def _verify_with_llm(llm, todo, full, rows, say):
    template = load_template(BRIDGE_STAGE)
    results = []

    async def one(item):
        c, th = item
        messages = template.render(first_skill=rows["skill_name"].iloc[c.post], post=full[c.post],
                                   second_skill=rows["skill_name"].iloc[c.pre], pre=full[c.pre])
        res = await llm.complete(stage=BRIDGE_STAGE, item=f"{rows['scenario_id'].iloc[c.post]}>"
                                 f"{rows['scenario_id'].iloc[c.pre]}", messages=messages,
                                 schema=bridge_mod.BridgeVerdict, params={"temperature": 0},
                                 template_version=template.version)
        return res.parsed

    def on_result(item, verdict, reason):
        c, th = item
        if verdict is not None:
            results.append((c, verdict.valid, verdict.reason, th))
        say("bridges", len(results), len(todo))

    async def run():
        try:
            return await map_bounded(todo, one, concurrency=llm.settings.concurrency, on_result=on_result)
        finally:
            await llm.aclose()

    outcome = asyncio.run(run())
    if llm.log is not None:
        llm.log.flush()
    if outcome.stopped:  # budget spent: unverified candidates are left out, kept for the next build
        say("bridges", len(results), len(todo))
    return results
