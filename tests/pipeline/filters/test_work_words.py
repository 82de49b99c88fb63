"""workflow.not_terminal counts its words word by word: the same words and counts as its two
patterns' finditer / findall give, phrases, file names and case folding included."""
from __future__ import annotations

import random

from pipeline.filters import workflow

CASES = ["Run the exit code check on files.py and x.json, EXIT CODE, exit  code, a.pyc codes.md",
         "marketing Sales brandING ſcripts İnstall exit\ncode a.b.py x.py.md json.json .py py. data dataset",
         "", "   ", "exit code.py", "code.py", "readme.md.txt", "copy-writing copywriters"]


def _check(text: str) -> None:
    human, terminal = workflow.work_words(text)
    assert human == [m.group(0).lower() for m in workflow._HUMAN_WORK.finditer(text)], text
    assert terminal == len(workflow._TERMINAL_WORK.findall(text)), text


def test_work_words_equal_the_patterns_on_cases():
    for text in CASES:
        _check(text)


def test_work_words_equal_the_patterns_on_random_text():
    rng = random.Random(3)
    vocab = ["exit", "EXIT", "code", "Code", "codes", "files", "x", "py", "json", "js", ".", " ", "  ", "-", "_",
             "exit code", "file.py", "a.b.py", "ſcript", "İnstall", "run", "running", "marketing", "ad", "ads",
             "\n", "é", "data", "dataset", "json5", "sales", "Ideas", "...", "md", "txt"]
    for _ in range(20000):
        _check("".join(rng.choice(vocab) for _ in range(rng.randint(1, 14))))
