"""Helpers shared by tests: write skill packages on the fly."""
from __future__ import annotations

import os
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
