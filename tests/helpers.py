"""Helpers shared by tests: write skill packages on the fly."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path


def write_skill(root: Path, rel: str, *, name: str | None = None, description: str = "Does a thing.",
                steps: list[str] | None = None, extra_front: str = "", body: str | None = None) -> Path:
    """Write one skill package under root/rel and return its folder."""
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    name = name or Path(rel).name
    steps = steps or ["List the files with `ls -la /data`.", "Count lines with `wc -l /data/*.txt`."]
    if body is None:
        body = "# {0}\n\n## Steps\n{1}\n".format(
            name, "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
    front = f"---\nname: {name}\ndescription: {description}\n{extra_front}---\n"
    (folder / "SKILL.md").write_text(front + textwrap.dedent(body), encoding="utf-8")
    return folder


def cli(*args, env=None, timeout=180):
    """Run `workbench` as a user would, without any LLM endpoint from the environment."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("WORKBENCH_LLM") and k not in ("OPENAI_API_KEY", "WORKBENCH_HOME")}
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True,
                          env={**clean, **(env or {})}, timeout=timeout)


SUM_SENTENCE = "Write the sum of the numbers in /app/numbers.txt to /app/sum.txt."


def sum_bundle(solve: str = "python3 -c \"print(sum(int(x) for x in open('/app/numbers.txt')))\" > /app/sum.txt",
               *, numbers: str = "1\n2\n3\n", dockerfile_extra: str = "", agent_timeout: float = 30,
               verifier_timeout: float = 30, name: str = "workbench/sum-numbers", extra_files: dict | None = None):
    """A small, valid task bundle (sum of numbers) whose solution can be swapped for a hostile one."""
    from pipeline.synth.test_sh import TEST_SH
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.bundle import TaskBundle
    from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render
    expected = sum(int(x) for x in numbers.split())
    files = {
        "instruction.md": f"# Sum the numbers\n\n1. {SUM_SENTENCE}\n",
        "task.toml": render(TaskToml(name=name, metadata=TaskMetadata(category="text-processing"),
                                     agent_timeout_sec=agent_timeout, verifier_timeout_sec=verifier_timeout)),
        "environment/Dockerfile": f"FROM {base_image_name()}\nSTOPSIGNAL SIGKILL\nWORKDIR /app\nCOPY app/ /app/\n"
                                  + dockerfile_extra,
        "environment/app/numbers.txt": numbers,
        "solution/solve.sh": "#!/bin/bash\nset -e\n" + solve + "\n",
        "tests/test.sh": TEST_SH,
        "tests/test_outputs.py": (f'def test_sum():\n    """{SUM_SENTENCE}"""\n'
                                  f'    assert open("/app/sum.txt").read().strip() == "{expected}"\n'),
    }
    files.update(extra_files or {})
    return TaskBundle(files)


def scripted_scenario_pair(body: dict) -> dict:
    """A replay-server reply like a model's: a scenario pair naming the skill of the prompt
    (the server's default schema instance echoes field names, which is rightly refused)."""
    name = re.search(r"Skill: (\S+)", json.dumps(body["messages"])).group(1)

    def sc(role: str) -> dict:
        return {"goal": f"{role} goal of {name}", "context": "a Linux shell", "capability": "bash and coreutils",
                "state": f"{role} state of {name}", "io_tool": "files in /data",
                "canonical": f"{name} {role}condition state"}
    return {"pre": sc("pre"), "post": sc("post")}


def judged(checks) -> dict:
    """The verdict keywords `store.save_verification` takes, worked out by the one rule
    (pipeline.verify.failures), for tests that store checks they made themselves."""
    from pipeline.verify import failures
    return {"verdict": failures.verdict(checks), "failed_check": failures.first_failed(checks)}
