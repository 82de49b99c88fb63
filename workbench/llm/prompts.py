"""Prompt templates: one file per stage under `workbench/prompts/`, versioned by content.

A template's version is the hash of its text and is part of the cache key, so editing one
stage's template invalidates that stage's cached answers and no other.
A file holds `# system` and `# user` sections; `$name` placeholders are filled on render.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_SECTION = re.compile(r"^# (system|user)\s*$", re.M)


@dataclass(frozen=True)
class PromptTemplate:
    stage: str
    system: str
    user: str
    version: str

    def render(self, **values: str) -> list[dict]:
        return [{"role": "system", "content": Template(self.system).substitute(values)},
                {"role": "user", "content": Template(self.user).substitute(values)}]


def load_template(stage: str, directory: Path = PROMPTS_DIR) -> PromptTemplate:
    path = directory / f"{stage}.md"
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"}:
        raise ValueError(f"{path}: needs a '# system' and a '# user' section")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]
    return PromptTemplate(stage, sections["system"], sections["user"], version)
