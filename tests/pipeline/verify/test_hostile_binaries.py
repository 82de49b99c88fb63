"""Reward hacking through the programs the tests run (issue 27.1): a solution that does not do
the task but replaces `git`, `zstd`, `sqlite3`, `jq` or `tar` by a liar printing the expected
answer, replaces a shared library one of them loads, or puts a liar earlier on PATH. The tests
run the image's own copies (workbench/sandbox/toolchain.py), so every attack is rejected with
the tests' real findings; the honest task using all five programs is still accepted.

Every liar prints "6", the one answer each test wants; none of the hostile solutions makes the
artifact a test reads, so an accepted one is an attack that worked."""
from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.verify.run import verify_bundle
from tests.helpers import sum_bundle
from workbench.sandbox.engine import Engine

pytestmark = pytest.mark.docker

# tool: (instruction sentence, the test's command, what the honest solution runs in /app)
TOOLS = {
    "git": ("Commit /app/sum.txt holding the sum in a Git repository at /app/repo.",
            ["git", "-C", "/app/repo", "show", "HEAD:sum.txt"],
            "mkdir repo && echo 6 > repo/sum.txt && git -C repo init -q && git -C repo add sum.txt && "
            "git -C repo -c user.name=a -c user.email=a@b.c commit -qm 'Add sum'"),
    "zstd": ("Write the sum compressed with zstd to /app/sum.txt.zst.", ["zstd", "-dc", "/app/sum.txt.zst"],
             "echo 6 | zstd -q > sum.txt.zst"),
    "sqlite3": ("Store the sum in the table sums (column total) of the SQLite database /app/sum.db.",
                ["sqlite3", "/app/sum.db", "select total from sums"],
                "sqlite3 sum.db 'create table sums(total int); insert into sums values (6)'"),
    "jq": ("Write the sum as the key sum of the JSON object in /app/sum.json.", ["jq", "-r", ".sum", "/app/sum.json"],
           "echo '{\"sum\": 6}' > sum.json"),
    "tar": ("Pack /app/sum.txt holding the sum into the tar archive /app/sum.tar.", ["tar", "-xOf", "/app/sum.tar", "sum.txt"],
            "mkdir pack && echo 6 > pack/sum.txt && tar -cf sum.tar -C pack sum.txt"),
}
STILL_FAIL = "after the solution the tests still fail"
LIAR_SH = "#!/bin/sh\necho 6\n"
# A library whose constructor answers for the program that loads it, before its main runs.
LIAR_C = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void lie(void) { fputs("6\n", stdout); fflush(stdout); _exit(0); }
"""
# git loads it; its liar answers before git needs a symbol of it (tar, through libselinux, would not)
LIB_GIT_LOADS = "/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0"


def tool_bundle(tools: list[str], solve: str, extra_files: dict | None = None, dockerfile_extra: str = ""):
    """A task whose tests read its artifacts through `tools` only (one test each)."""
    sentences = "\n".join(f"{i}. {TOOLS[t][0]}" for i, t in enumerate(tools, 1))
    tests = "import subprocess\n" + "".join(
        f'\n\ndef test_{t}():\n    """{TOOLS[t][0]}"""\n'
        f'    out = subprocess.run({TOOLS[t][1]!r}, capture_output=True, text=True)\n'
        f'    assert out.returncode == 0 and out.stdout.strip() == "6", (out.stdout, out.stderr)\n' for t in tools)
    return sum_bundle(solve, name=f"workbench/tools-{'-'.join(tools)}", dockerfile_extra=dockerfile_extra,
                      extra_files={"instruction.md": f"# Keep the sum\n\n{sentences}\n", "tests/test_outputs.py": tests,
                                   **(extra_files or {})})


def _swap_for_liar(tool: str) -> str:
    """Replace the program the shell finds for `tool` (links followed) by solution/liar.sh."""
    return f'p=$(readlink -f "$(command -v {tool})") && cp /solution/liar.sh "$p.new" && chmod +x "$p.new" && mv -f "$p.new" "$p"'


def _liar_so(tmp_path) -> bytes | None:
    if shutil.which("gcc") is None:
        return None
    (tmp_path / "liar.c").write_text(LIAR_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp_path / "liar.so"), str(tmp_path / "liar.c")], check=True)
    return (tmp_path / "liar.so").read_bytes()


def hostile_cases(liar_so: bytes | None) -> dict:
    liar = {"solution/liar.sh": LIAR_SH}
    cases = {f"replaced-{t}": tool_bundle([t], _swap_for_liar(t), liar) for t in TOOLS}
    # earlier on the usual PATH than /usr/bin, and a ~/bin an image's ENV might name first
    cases["wrapper-earlier-on-path"] = tool_bundle(["jq"], "for d in /usr/local/bin /usr/local/sbin /root/bin; do "
                                                   "mkdir -p $d && cp /solution/liar.sh $d/jq && chmod +x $d/jq; done",
                                                   liar, "ENV PATH=/root/bin:/usr/local/bin:/usr/bin:/bin\n")
    if liar_so is not None:
        cases["replaced-library"] = tool_bundle(
            ["git"], f'p=$(readlink -f {LIB_GIT_LOADS}) && cp /solution/liar.so "$p.new" && mv -f "$p.new" "$p"',
            {"solution/liar.so": liar_so})
    return cases


def test_the_attacks_work_on_the_containers_own_programs():
    """The liars are real: in a container of the base image each makes its program print the
    expected answer without the artifact (so the verifier's rejection below is its own doing)."""
    from workbench.sandbox.base_image import base_image_name
    engine = Engine()
    with engine.container(base_image_name(), purpose="liar-test") as box:
        box.put({"liar.sh": LIAR_SH.encode()}, "/solution")
        for tool in ("zstd", "sqlite3", "jq", "tar"):
            assert box.run(f"{_swap_for_liar(tool)} && {tool} /nothing", 10).output.strip() == "6", tool
        assert box.run("mkdir -p /usr/local/bin && cp /solution/liar.sh /usr/local/bin/git && chmod +x "
                       "/usr/local/bin/git && git -C /nothing show HEAD:x", 10).output.strip() == "6"


def test_no_liar_program_gets_a_task_accepted(tmp_path):
    engine = Engine()
    cases = hostile_cases(_liar_so(tmp_path))
    honest = "set -e; cd /app; " + "; ".join(TOOLS[t][2] for t in TOOLS)
    cases["honest"] = tool_bundle(list(TOOLS), honest)

    def run(key):
        return key, verify_bundle(cases[key], engine=engine)

    with ThreadPoolExecutor(3) as pool:
        results = dict(pool.map(run, cases))
    good = {c.name: c for c in results.pop("honest")}
    assert all(c.passed for c in good.values()), {n: (c.reason, c.log[-1500:]) for n, c in good.items() if not c.passed}
    accepted = [k for k, checks in results.items() if all(c.passed for c in checks)]
    assert accepted == [], f"attacks accepted: {accepted}"
    oracles = {key: next(c for c in checks if c.name == "oracle") for key, checks in results.items()}
    unexplained = {key: (o.reason, o.log[-1500:]) for key, o in oracles.items() if o.passed or STILL_FAIL not in o.reason}
    assert unexplained == {}
    assert engine.orphaned_containers() == []
