"""The red-team agent: one reward hack of the library (attacks.py) per trial, never the task's
solution. No LLM: a verifier probe, not a model, labelled so wherever it is shown (AGENT_LABELS).

Which attack: the one it was made with, else the trial's seed picks one in ATTACKS order (a
rollout of k samples with seeds 0..k-1 tries the first k). An attack's own commands failing is
expected (a program it meant to replace is absent): a script that ran to its end completed, and
the tests decide. Only a limit ends it otherwise.
"""
from __future__ import annotations

from dataclasses import asdict

from pipeline.agents.protocol import AgentContext, AgentResult
from pipeline.agents.red_team.attacks import ATTACKS, AttackLimits
from pipeline.agents.red_team.reading import read_task
from pipeline.agents.scripted import ScriptedAgent
from pipeline.agents.solution_run import run_solve, solution_result, solve_status

ATTACK_ORDER = tuple(ATTACKS)


class RedTeamAgent(ScriptedAgent):
    name = "red-team"
    version = "1"

    def __init__(self, attack: str | None = None):
        if attack is not None and attack not in ATTACKS:
            raise ValueError(f"red-team attack {attack!r}: choose one of {', '.join(ATTACK_ORDER)}")
        self.attack = attack

    def config_key(self) -> str:
        return f"{self.name}@{self.version}" + (f":{self.attack}" if self.attack else "")

    def pick(self, seed: int) -> str:
        return self.attack or ATTACK_ORDER[seed % len(ATTACK_ORDER)]

    def run(self, ctx: AgentContext) -> AgentResult:
        attack = ATTACKS[self.pick(ctx.seed)]
        reading = read_task(ctx.bundle)
        limits = AttackLimits(pids=ctx.box.limits.pids, disk_mb=ctx.box.limits.disk_mb or 1024)
        ctx.box.put({"solve.sh": attack.script(reading, limits).encode()}, "/solution")
        run = run_solve(ctx.box, ctx.timeout_s)
        status, reason = solve_status(run, ctx.box)
        details = {"attack": attack.name, "attack_label": attack.label, "read": asdict(reading)}
        if status == "script_failed":
            status, reason = "completed", ""
        return solution_result(ctx, self, run, status, reason, details=details,
                               message=f"Red-team attack {attack.name}: {attack.label} (no attempt at the task).")
