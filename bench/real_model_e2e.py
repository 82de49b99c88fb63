"""A few real calls through the workbench's LLM client against any OpenAI-compatible endpoint
(issue 26): what a small local model does with the answer budget, the idle cut, the
repetition stop and the up-front context check.

    .venv/bin/python bench/real_model_e2e.py --base-url http://127.0.0.1:8788/v1 --model qwen-coder-0.5b

Calls: scenario inference on `--skills` real SKILL.md files of the dev corpus (the stage's own
prompt and schema), one prompt that invites a loop (the repetition stop), one prompt larger
than the server's window (refused before it is sent). One JSON line per call: wall time,
tokens, tokens a second, how it ended; the last line sums them up (RESULT ...).
Nothing here is a test: a small model's low yield is a finding, not a failure.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.llm.call_log import CallLog, CallRecord  # noqa: E402
from workbench.llm.client import LLMCallError, LLMClient  # noqa: E402
from workbench.llm.prompts import load_template  # noqa: E402
from workbench.llm.settings import LLMSettings  # noqa: E402
from workbench.models import ScenarioPair  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "dev"
LOOP_PROMPT = ("Write the sentence 'The task runs the command and checks the output file.' on its own line, "
               "again and again, 400 times. Write nothing else.")


class KeptLog(CallLog):
    """The call log's rows, kept in memory (no workspace needed)."""

    def __init__(self):
        super().__init__(None)
        self.records: list[CallRecord] = []

    def add(self, record: CallRecord) -> None:
        self.records.append(record)


def skill_fields(path: Path) -> dict:
    text = path.read_text(errors="replace")
    head, body = {}, text
    if text.startswith("---"):
        _, front, body = (text.split("---", 2) + ["", ""])[:3]
        for line in front.splitlines():
            if ":" in line and not line.startswith(" "):
                k, v = line.split(":", 1)
                head[k.strip()] = v.strip().strip("'\"")
    steps = [ln.strip("-*0123456789. ") for ln in body.splitlines() if ln.strip()[:2] in ("- ", "* ", "1.", "2.", "3.")]
    return {"name": head.get("name", path.parent.name), "category": head.get("category", "(none)"),
            "description": head.get("description", "")[:600], "inputs": "(none listed)", "outputs": "(none listed)",
            "bins": "(none listed)", "steps": "\n".join(f"{i}. {s}" for i, s in enumerate(steps[:12], 1)) or "(none listed)"}


async def timed(client: LLMClient, name: str, **kw) -> dict:
    t0 = time.monotonic()
    try:
        res = await client.complete(**kw)
        out = {"call": name, "ended": "ok" if res.finish_reason != "length" else "length",
               "valid": res.parsed is not None if kw.get("schema") else None,
               "prompt_tokens": res.prompt_tokens, "completion_tokens": res.completion_tokens}
    except LLMCallError as exc:
        out = {"call": name, "ended": exc.error_class, "valid": False, "why": str(exc)[:300]}
    out["item"], out["wall_s"] = kw["item"], round(time.monotonic() - t0, 1)
    return out


async def run(args) -> list[dict]:
    settings = LLMSettings(base_url=args.base_url, model=args.model, api_key=args.api_key, concurrency=args.concurrency,
                           idle_timeout_s=args.idle_timeout, first_token_timeout_s=args.first_token_timeout,
                           max_retries=1, answer_budgets={"bench_loop": args.loop_budget})
    log = KeptLog()
    client = LLMClient(settings, log=log)
    tpl = load_template("scenario_inference")
    skills = sorted(CORPUS.glob("*/skills/*/SKILL.md"))[: args.skills]
    jobs = [timed(client, f"scenario_inference:{p.parent.name}", stage="scenario_inference", item=p.parent.name,
                  messages=tpl.render(**skill_fields(p)), schema=ScenarioPair, template_version=tpl.version)
            for p in skills]
    jobs.append(timed(client, "loop", stage="bench_loop", item="loop", messages=[{"role": "user", "content": LOOP_PROMPT}]))
    try:
        results = list(await asyncio.gather(*jobs))
        window = client._window.tokens if client._window else None
        if window:  # a prompt of about twice the window: refused here, never sent
            big = [{"role": "user", "content": "Summarise: " + "lorem ipsum dolor " * (window // 2)}]
            results.append(await timed(client, "oversize", stage="bench_oversize", item="big", messages=big))
    finally:
        await client.aclose()
    for r in results:  # what the call log stored for the call's last attempt
        rec = next((x for x in reversed(log.records) if x.item == r["item"]), None)
        if rec is not None:
            r["logged"] = {"error_class": rec.error_class, "completion_tokens": rec.completion_tokens,
                           "prompt_tokens": rec.prompt_tokens, "latency_s": round(rec.latency_ms / 1000, 1)}
        ct = r.get("completion_tokens") or (rec.completion_tokens if rec else 0)
        r["tokens_per_s"] = round(ct / r["wall_s"], 2) if r["wall_s"] and ct else None
    results.append({"window": client._window.__dict__ if client._window else None, "rows_logged": len(log.records)})
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--api-key", default="not-needed")
    p.add_argument("--skills", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--idle-timeout", type=float, default=120.0)
    p.add_argument("--first-token-timeout", type=float, default=900.0)
    p.add_argument("--loop-budget", type=int, default=1500)
    args = p.parse_args(argv)
    t0 = time.monotonic()
    results = asyncio.run(run(args))
    for r in results:
        print(json.dumps(r), flush=True)
    calls = [r for r in results if "call" in r]
    ended = {}
    for r in calls:
        ended[r["ended"]] = ended.get(r["ended"], 0) + 1
    print(f"RESULT calls={len(calls)} wall_s={time.monotonic() - t0:.0f} ended={json.dumps(ended)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
