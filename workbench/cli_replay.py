"""`workbench replay-synthesis`: the scripted replay server of the LLM synthesis stages, served
until Ctrl-C, so `workbench synth --provider llm` can be tried (and tested) without an API key.

A test double: the replies are the offline recipes' tasks in the shape of the LLM stages
(pipeline/synth/llm/scripted.py), broken on purpose where a fault is asked for."""
from __future__ import annotations

import argparse
import shlex
import signal
import threading

from rich.text import Text

from workbench.console import err

DESCRIPTION = (
    "Serve scripted replies of the LLM synthesis stages (planner, environment, instruction, solution, tests, "
    "repairs, judge) and of SETA-Evol's evolve_task on a local OpenAI-compatible endpoint until Ctrl-C, and "
    "print the environment that points `workbench synth --provider llm` in another shell at it. A TEST DOUBLE for trying the pipeline and for CI: "
    "the replies are the offline recipes' tasks, with faults on purpose so the repair routes show; it is not a "
    "model and makes no task the recipes could not.")


def _say(line: str = "") -> None:
    print(line, flush=True)      # a parent process reads these lines as they come


def _describe(batch: str, given: dict[str, str]) -> None:
    if not given:
        _say(f"faults: sample batch {batch} has no path the recipes can serve; no faults given")
        return
    _say(f"faults for sample batch {batch} (its first paths the recipes can serve):")
    for pid, fault in given.items():
        _say(f"  {pid}  {fault}")


def cmd_replay_synthesis(args) -> int:
    from pipeline.synth.llm.scripted_faults import (
        REPLAY_MODEL, FaultSpecError, read_fault_spec, scripted_replies, write_demo_price)
    from pipeline.evolve.llm_scripted import ScriptedEvolution
    from workbench.llm.replay_server import ReplayServer, Script
    from workbench.workspace import Workspace
    if args.latency < 0:
        err.print(f"[red]--latency must be 0 or more seconds, got {args.latency}[/red]")
        return 2
    try:
        order, fixed = read_fault_spec(args.faults)
    except FaultSpecError as exc:
        err.print(Text(str(exc), style="red"), soft_wrap=True)    # as text: "[1]" in it is no markup
        return 2
    ws = Workspace.open(args.workspace)
    scripted, faults = scripted_replies(ws, order, fixed=fixed, seed=args.seed, on_assign=_describe)
    if args.demo_price:
        where = write_demo_price(ws.root, REPLAY_MODEL)
        _say(f"gave model {REPLAY_MODEL} a made-up demo price in {where} (llm.prices) so costs and --budget-usd show")
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        # the evolve_task double first: the synthesis rule answers every request
        rules = [ScriptedEvolution(ws, seed=args.seed).rule(), scripted.rule()]
        with ReplayServer(Script(rules), latency_s=args.latency, host=args.host, port=args.port) as srv:
            _say(f"scripted replay server (a test double, not a model) for workspace {ws.root} on {srv.base_url}")
            _say("in another shell:")
            _say(f"  export WORKBENCH_LLM_BASE_URL={srv.base_url}")
            _say(f"  export WORKBENCH_LLM_MODEL={REPLAY_MODEL}")
            if "never_ends" in (*order, *fixed.values()):   # else it runs for the task's whole agent timeout
                from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
                _say(f"  export {SOLVE_TIMEOUT_ENV}=30   # the never_ends fault: cut its solve.sh after 30 s")
            _say(f"  workbench --workspace {shlex.quote(str(ws.root))} synth --provider llm --paths 10")
            _say("(`workbench evolve` on the LLM-built tasks is answered too: scripted variants, "
                 "pipeline/evolve/llm_scripted.py)")
            if fixed:
                _say("faults by path id:")
                for pid, fault in fixed.items():
                    _say(f"  {pid}  {fault}")
            if order:
                _say(f"faults in order ({', '.join(order)}) go to the first paths the recipes can serve of the "
                     "latest sample batch; a synth run started now samples its own batch, whose faults are "
                     "printed when its first path is asked for")
                faults.assign_latest()
            else:
                _say("no faults: every reply is the correct artifact")
            _say("Ctrl-C stops the server")
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass
            calls = srv.stats.chat_requests
    finally:
        signal.signal(signal.SIGTERM, previous)
    _say(f"stopped after {calls} chat request(s)")
    return 0


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("replay-synthesis", parents=[common], description=DESCRIPTION,
                       help="a test double: scripted LLM synthesis replies on a local endpoint, to try "
                            "`synth --provider llm` without a key")
    s.add_argument("--faults", default="routes",
                   help="routes (default): one fault per repair route (a broken Dockerfile, a crashing solution, "
                        "a test bug, tests that pass untouched, a leaking instruction, a judge's flag) and one that "
                        "exhausts its repairs, on the first paths of the latest sample batch; all: every scripted "
                        "fault (also registry pulls, invalid JSON, bad imports, a missing file, a solve.sh that never "
                        "ends); none; or a JSON file with a list of fault names (given to the first paths in that "
                        "order) or an object {path_id: fault}. The names are printed at start")
    s.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port, printed)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--latency", type=float, default=0.0,
                   help="seconds each reply waits, like a real model (default 0)")
    s.add_argument("--seed", type=int, default=0,
                   help="seed of the offline tasks the replies are made from (default 0)")
    s.add_argument("--demo-price", action="store_true",
                   help="give the replay model a made-up price in the workspace's config.json (llm.prices), "
                        "so costs are not zero and --budget-usd can be tried")
    s.set_defaults(func=cmd_replay_synthesis)
