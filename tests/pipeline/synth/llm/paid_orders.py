"""A tiny scripted LLM for one two-step path (jq filter, then an awk report): the replay-server
Rule callable answers each synthesis stage like a model would, with faults to inject per stage.

Used by the planner, constructor and synthesizer tests (helper E's scripted.py covers the
demo paths and every route; this one stays small enough to read in one go)."""
from __future__ import annotations

import json
import re
from collections import Counter

from pipeline.judge import task_judge
from pipeline.synth.compose import PathStep
from pipeline.synth.protocol import BridgeView, PathContext, ScenarioView, StepContext
from pipeline.synth.skill_fit import SkillParts

JQ_BODY = "# jq-filter\n\nKeep the records you need with `jq 'map(select(.status == \"paid\"))' orders.json`.\n"
AWK_BODY = "# awk-report\n\nSum a column per key with `awk -F, '{t[$1]+=$2} END {for (k in t) print k\",\"t[k]}'`.\n"


def scenario(role: str, what: str) -> ScenarioView:
    return ScenarioView(goal=f"{role} {what}", context="a Linux shell", capability="jq and awk",
                        state=f"{what} {role}", io_tool="files in /app", canonical=f"A {what} is in the working directory.")


PATH = PathContext("path-paid-1", (
    StepContext(PathStep("sk-jq", "jq-filter", "data-processing", "Filters JSON records with jq.", "c1", "c2",
                         SkillParts(tools=("jq",), consumes=("json-document",), produces=("json-document",),
                                    steps=("Read the JSON array.", "Keep the matching records."), body=JQ_BODY)),
                inputs=("json-document",), outputs=("json-document",), bins=("jq",),
                pre=scenario("pre", "JSON document"), post=scenario("post", "filtered JSON document"),
                bridge=BridgeView("jq-filter", "awk-report", "verified", 0.81, "the report reads the filtered JSON")),
    StepContext(PathStep("sk-awk", "awk-report", "text-processing", "Sums columns per key with awk.", "c2", "c3",
                         SkillParts(tools=("awk", "sort"), consumes=("json-document",), produces=("csv-table",),
                                    body=AWK_BODY)),
                inputs=("json-document",), outputs=("csv-table",), bins=("awk",),
                pre=scenario("pre", "filtered JSON document"), post=scenario("post", "CSV table")),
))

ORDERS = [{"id": 1, "customer": "alice", "amount": 20, "status": "paid"},
          {"id": 2, "customer": "bob", "amount": 99, "status": "refunded"},
          {"id": 3, "customer": "bob", "amount": 7, "status": "paid"},
          {"id": 4, "customer": "alice", "amount": 15, "status": "paid"},
          {"id": 5, "customer": "carol", "amount": 3, "status": "pending"}]
PAID = 'Write the orders whose status is "paid" to /app/out/paid.json as a JSON array, in their original order.'
TOTALS = ("Write one line per customer with paid orders to /app/out/totals.csv as customer,total, "
          "sorted by customer name.")

PLAN = {"goal": "Report how much each customer paid, from the shop's order export.",
        "subgoals": [{"step": 1, "skill": "jq-filter", "description": "Keep the paid orders with jq.",
                      "tools": ["jq"], "success_conditions": ["/app/out/paid.json holds orders 1, 3 and 4"]},
                     {"step": 2, "skill": "awk-report", "description": "Sum the paid amounts per customer with awk.",
                      "tools": ["awk", "sort"], "success_conditions": ["/app/out/totals.csv is alice,35 then bob,7"]}],
        "handoffs": [{"from_step": 1, "to_step": 2, "path": "/app/out/paid.json", "format": "json",
                      "schema": "array of {id, customer, amount, status}"}],
        "initial_files": ["/app/orders.json"], "services": []}
MANIFEST = {"image": "base", "files": [{"path": "/app/orders.json", "content": json.dumps(ORDERS, indent=1) + "\n"}],
            "setup_commands": [], "env": {}}
INSTRUCTION = {"title": "Paid order totals",
               "text": "# Paid order totals\n\nThe shop's order export is `/app/orders.json`. Use jq and awk.\n\n"
                       f"1. {PAID}\n2. {TOTALS}\n"}
SOLVE = """#!/bin/bash
set -euo pipefail
cd /app
export LC_ALL=C
mkdir -p out
# step 1: keep the paid orders
jq '[.[] | select(.status == "paid")]' orders.json > out/paid.json
# step 2: total per customer
jq -r '.[] | "\\(.customer),\\(.amount)"' out/paid.json | awk -F, '{t[$1]+=$2} END {for (c in t) print c "," t[c]}' | sort > out/totals.csv
"""
TESTS = f'''import json
from pathlib import Path


def test_paid_orders():
    """{PAID}"""
    data = json.loads(Path("/app/out/paid.json").read_text())
    assert [o["id"] for o in data] == [1, 3, 4]


def test_totals():
    """{TOTALS}"""
    assert Path("/app/out/totals.csv").read_text().split() == ["alice,35", "bob,7"]
'''


def judgement() -> dict:
    ok = {"passed": True, "evidence": "test_totals", "note": "Holds."}
    return {c.name: dict(ok) for c in task_judge.CRITERIA}


GOOD = {"synth_plan": PLAN, "synth_environment": MANIFEST, "synth_instruction": INSTRUCTION,
        "synth_solution": {"solve_sh": SOLVE}, "synth_tests": {"test_py": TESTS, "weights": {}},
        "synth_repair_environment": MANIFEST, "synth_repair_solution": {"solve_sh": SOLVE},
        "synth_repair_tests": {"test_py": TESTS, "weights": {}}, "synth_repair_instruction": INSTRUCTION,
        "task_judge": judgement()}
_STAGE = re.compile(r"Stage: ([a-z_]+)\.")


class PaidOrders:
    """`rule()` answers every stage; `faults[stage]` replaces the first n replies of a stage
    (a list: one reply per call, then the good one). `calls` counts requests per stage."""

    def __init__(self, faults: dict[str, list] | None = None):
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.calls: Counter[str] = Counter()
        self.bodies: list[dict] = []

    def reply(self, body: dict):
        system = body["messages"][0]["content"]
        stage = _STAGE.search(system).group(1)
        self.calls[stage] += 1
        self.bodies.append(body)
        pending = self.faults.get(stage)
        if pending:
            reply = pending.pop(0)
            return reply(body) if callable(reply) else reply
        return GOOD[stage]

    def rule(self):
        from workbench.llm.replay_server import Rule
        return Rule(match=None, reply=self.reply)
