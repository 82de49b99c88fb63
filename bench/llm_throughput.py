"""LLM layer throughput and per-call overhead against the local replay server.

The server runs in its own process, as a real endpoint would, so that it does not share
the client's interpreter lock.

1. Throughput: N requests through this client at concurrency 64 vs N sequential calls of
   the raw `openai` client, the server answering after 50 ms. Target ratio >= 30x.
2. Overhead: the same sequential calls (server latency 0) through this layer — cache
   lookup and insert, budget, call-log row — and through the raw async client, at
   concurrency 1. Target <= 2 ms per call.
Last line: RESULT speedup=<ratio> overhead_ms=<ms>
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai  # noqa: E402

from workbench.llm.batch import map_bounded  # noqa: E402
from workbench.llm.runtime import open_client  # noqa: E402
from workbench.llm.settings import LLMSettings  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402


@contextlib.contextmanager
def replay_process(latency: float):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "workbench.llm.replay_server", "--port", str(port),
                             "--latency", str(latency)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/v1/models", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        yield base + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def max_in_flight(base_url: str) -> int:
    import json
    stats = json.loads(urllib.request.urlopen(base_url.replace("/v1", "") + "/_stats?bodies=0").read())
    return stats["max_in_flight"]


def msg(tag: str, i: int) -> list[dict]:
    return [{"role": "user", "content": f"{tag} request number {i}"}]


def raw_sequential(base_url: str, n: int, tag: str) -> float:
    client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0)
    t0 = time.perf_counter()
    for i in range(n):
        client.chat.completions.create(model="bench", messages=msg(tag, i))
    return time.perf_counter() - t0


def layer_client(ws: Workspace, base_url: str, concurrency: int):
    return open_client(ws, LLMSettings(base_url=base_url, model="bench", api_key="bench", concurrency=concurrency))


def layer_concurrent(ws: Workspace, base_url: str, n: int, tag: str, concurrency: int) -> float:
    client = layer_client(ws, base_url, concurrency)

    async def job(i):
        return await client.complete(stage="bench", item=str(i), messages=msg(tag, i))

    async def run():
        try:
            return await map_bounded(range(n), job, concurrency=concurrency)
        finally:
            await client.aclose()

    t0 = time.perf_counter()
    outcome = asyncio.run(run())
    elapsed = time.perf_counter() - t0
    client.log.flush()
    assert len(outcome.results) == n and not outcome.failures, outcome.failures[:3]
    return elapsed


async def _seq(fn, n):
    t0 = time.perf_counter()
    for i in range(n):
        await fn(i)
    return time.perf_counter() - t0


def overhead_round(ws: Workspace, base_url: str, n: int, tag: str) -> tuple[float, float]:
    raw = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    client = layer_client(ws, base_url, 1)

    async def run_both():
        await raw.chat.completions.create(model="bench", messages=msg("warm", 0))  # open the connection
        await client.complete(stage="bench", item="w", messages=msg(tag + "warm", 0))
        t_raw = await _seq(lambda i: raw.chat.completions.create(model="bench", messages=msg(tag + "raw", i)), n)
        t_layer = await _seq(lambda i: client.complete(stage="bench", item=str(i), messages=msg(tag + "layer", i)), n)
        await raw.close()
        await client.aclose()
        return t_raw, t_layer

    t_raw, t_layer = asyncio.run(run_both())
    client.log.flush()
    return t_raw / n * 1000, t_layer / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--baseline-requests", type=int, default=None,
                    help="sequential baseline size (default: --requests)")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--overhead-calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3, help="throughput rounds (the median is reported)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 200 requests, one round, 30 calls per overhead round")
    args = ap.parse_args()
    if args.quick:
        args.requests, args.overhead_calls, args.rounds = 200, 30, 1
    base_n = args.baseline_requests or args.requests
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.open(Path(tmp) / "ws")
        with replay_process(args.latency) as base_url:
            layer_concurrent(ws, base_url, min(256, args.requests), "warm", args.concurrency)  # imports, pools, cache file
            runs = [args.requests / layer_concurrent(ws, base_url, args.requests, f"tp{k}", args.concurrency)
                    for k in range(args.rounds)]
            layer_rps = statistics.median(runs)
            print(f"layer, concurrency {args.concurrency}: {args.requests} requests, "
                  f"{', '.join(f'{r:.0f}' for r in runs)} req/s over {args.rounds} rounds, median {layer_rps:.0f} "
                  f"(server max in flight {max_in_flight(base_url)})")
            t_raw = raw_sequential(base_url, base_n, "seq")
            raw_rps = base_n / t_raw
            print(f"raw openai client, sequential: {base_n} requests in {t_raw:.2f} s = {raw_rps:.1f} req/s")
        with replay_process(0.0) as fast_url:
            rounds = [overhead_round(ws, fast_url, args.overhead_calls, f"r{k}") for k in range(5)]
        raw_ms = statistics.median(r for r, _ in rounds)
        layer_ms = statistics.median(lay for _, lay in rounds)
        print(f"per call at concurrency 1 (median of 5 rounds of {args.overhead_calls}): "
              f"raw {raw_ms:.2f} ms, layer {layer_ms:.2f} ms")
    speedup = layer_rps / raw_rps
    overhead = layer_ms - raw_ms
    print(f"speedup {speedup:.1f}x (target >= 30x); overhead {overhead:.2f} ms/call (target <= 2 ms)")
    print(f"RESULT speedup={speedup:.1f} overhead_ms={overhead:.2f}")


if __name__ == "__main__":
    main()
