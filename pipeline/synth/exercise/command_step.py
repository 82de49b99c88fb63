"""A command-exercise step: a command SKILL.md documents for the tool the skill is about, filled in with
the task's own input files and run as documented.

The reference solution is the documented pipeline with its file arguments pointing at the task's inputs
and its result at the step's output. The instruction states the goal in the skill's words (what the
command achieves, on which files, where the result goes), never the command line. The tests check the
inputs are the ones the task gave (checksums), run the same command line on them again (the sealed test
phase runs the image's programs from its pristine copy) and compare its result with the agent's file.
So a hand-written look-alike fails, and so does the same tool run with another filter or other input.
"""
from __future__ import annotations

import hashlib
import re
import shlex

from ..fidelity_rubric import QUOTE_CHARS, RubricScore, quotes_exist
from ..recipes.base import Artifact, Check, Fragment, StepContext
from ..skill_fit import StepFidelity
from .command_inputs import realize, related
from .command_line import Word
from .command_plan import CommandOption, CommandPlan
from .package import SKILLS_ROOT
from .step import _words

RECIPE_NAME = "command-exercise"
OUT_MARK = "@@OUT@@"   # where the test puts its own output path in the command line
_COMPRESSED = {"zstd": "zst", "xz": "xz", "bzip2": "bz2", "gzip": "gz"}


def _safe(name: str, fallback: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.rsplit("/", 1)[-1]).strip("._") or fallback


def _output_name(plan: CommandOption) -> str:
    out = plan.call.output
    if out is not None:
        return _safe(out.text, "result.txt")
    progs = plan.call.programs
    last = progs[-1] if progs else plan.tool
    if last in _COMPRESSED:
        return f"result.{_COMPRESSED[last]}"
    raw = {"-r", "-j", "--raw-output", "--join-output"} & {w.text for w in plan.call.words}
    return f"{plan.tool}-result.{'json' if last == 'jq' and not raw else 'txt'}"


def build_command_exercise(ctx: StepContext, cplan: CommandPlan) -> tuple[Fragment, CommandOption]:
    """The step's fragment, for one of the plan's documented commands (drawn), and that command."""
    slug = cplan.package.slug
    plan = ctx.rng.choice(cplan.options) if len(cplan.options) > 1 else cplan.first
    out_dir = ctx.claim(f"/app/out/{slug}")
    out = f"{out_dir}/{_output_name(plan)}"
    inputs: list[tuple[str, str]] = []           # (path in the container, sha256)
    given: list[str] = []                        # what the instruction names
    parts: list[str] = []                        # the filled command line, OUT_MARK for the output
    drawn: dict[tuple, bytes] = {}
    sources = iter(plan.sources)
    for w in plan.call.words:
        if w.kind in ("input", "stdin", "glob"):
            src = next(sources)
            files = _files_for(ctx, slug, plan, w, src, drawn)
            for path, data in files:
                ctx.add_input(path, data)
                inputs.append((path, hashlib.sha256(data).hexdigest()))
            if w.kind == "glob":
                folder = files[0][0].rsplit("/", 1)[0]
                pattern = w.text.rsplit("/", 1)[-1]
                parts.append(f"{shlex.quote(folder)}/{pattern}")
                given.append(f"the files `{folder}/{pattern}`")
            else:
                parts.append(("< " if w.kind == "stdin" else "") + shlex.quote(files[0][0]))
                given.append(f"`{files[0][0]}`")
        elif w.kind == "output":
            parts.append(OUT_MARK)
        elif w.kind == "stdout":
            parts.append(f"> {OUT_MARK}")
        else:
            parts.append(w.text)
    if plan.call.output is None:
        parts.append(f"> {OUT_MARK}")
    template = " ".join(parts)
    line = template.replace(OUT_MARK, shlex.quote(out))
    # grep finding nothing, diff finding differences: exit 1 is the command's answer, not a failure;
    # a pipeline is judged by its last command, as the documented line would be in a shell.
    solve = f"mkdir -p {shlex.quote(out_dir)}\nset +o pipefail\n{line} || [ $? -eq 1 ]\nset -o pipefail\n"

    skill = _words(cplan.skill_name)
    what = f" for “{plan.purpose}”" if plan.purpose else ""
    on = ", ".join(given[:-1]) + (" and " if len(given) > 1 else "") + given[-1]
    verb = "writes" if plan.call.output is not None and plan.call.output.kind == "output" else "prints"
    sentence = (f"Write `{out}` with what the {skill} skill's documented `{plan.tool}` command{what} {verb} "
                f"when run on {on}.")
    keep = f"Leave the input {'file' if len(inputs) == 1 else 'files'} " \
           f"{', '.join(f'`{p}`' for p, _ in inputs)} exactly as given."
    intro = (f"The **{skill}** skill is installed read-only at `{SKILLS_ROOT}/{slug}`; its `SKILL.md` documents "
             f"the `{plan.tool}` command to use here.")
    checks = [Check(sentence, [("skill_result", _result_test(out, inputs, template))]),
              Check(keep, [("inputs_kept", _inputs_test(inputs))])]
    output = Artifact("lines", out, fmt="txt", flavor="skill-output", exact=False, label=plan.tool[:20])
    return Fragment(f"Apply the {skill} skill", intro, checks, solve, output), plan


def _files_for(ctx: StepContext, slug: str, plan: CommandOption, w: Word, src, drawn: dict
               ) -> list[tuple[str, bytes]]:
    """The task's file(s) for one input slot: a glob gets two; a second slot fed from the same source
    gets a variation of the first one's file (so `comm`, `diff`, `join` compare related files)."""
    base = _safe(w.text, f"input.{w.ext or 'txt'}")
    key = (src.kind, src.ref, src.data)
    if w.kind == "glob":
        folder = ctx.claim(f"/app/input/{slug}/{_safe(w.text.rsplit('/', 2)[-2], 'files') if '/' in w.text else 'files'}")
        out = []
        for n in (1, 2):
            data = realize(ctx.rng, src, plan.call, w)
            out.append((f"{folder}/{base.replace('*', f'{n:03d}')}", data))
        return out
    earlier = drawn.get(key)
    if earlier is not None:
        data = related(ctx.rng, src, plan.call, w, earlier)
    else:
        data = realize(ctx.rng, src, plan.call, w)
        drawn[key] = data
    return [(ctx.claim(f"/app/input/{slug}/{base}"), data)]


def command_fidelity(step: int, cplan: CommandPlan, plan: CommandOption, solve: str, body: str
                     ) -> StepFidelity | None:
    """Rubric 2 with its two quotes: the documented command in SKILL.md and its filled-in line in the
    solution (None when either quote cannot be found verbatim: no 2 without evidence)."""
    line = next((ln for ln in solve.splitlines() if ln.endswith("|| [ $? -eq 1 ]")), "")
    uses = f"{plan.tool} {plan.doc.subcommand}".strip()
    rs = RubricScore(2, "command", uses, plan.doc.line, line[:QUOTE_CHARS],
                     f"runs the documented `{plan.tool}` command on the task's input")
    if not quotes_exist(rs, body, solve):
        return None
    return StepFidelity(step, cplan.skill_id, cplan.skill_name, RECIPE_NAME, (plan.tool,), (), "tool", 2,
                        rs.evidence())


def _inputs_test(inputs: list[tuple[str, str]]) -> str:
    return "\n".join([f"for path, digest in {inputs!r}:",
                      "    assert Path(path).is_file(), f'{path} is gone'",
                      "    assert sha256_of(path) == digest, f'{path} was changed: the result must come from the input as given'"])


def _result_test(out: str, inputs, template: str) -> str:
    return f'''import shlex
out = Path({out!r})
assert out.is_file(), f"{{out}} was not written"
for path, digest in {inputs!r}:
    assert sha256_of(path) == digest, f"{{path}} was changed: the result must come from the input as given"
with tempfile.TemporaryDirectory() as tmp:
    mine = Path(tmp) / out.name
    line = {template!r}.replace({OUT_MARK!r}, shlex.quote(str(mine)))
    # HOME is the scratch folder: no ~/.jq, ~/.sqliterc or shell start-up file the agent left is read
    proc = subprocess.run(["bash", "-c", line], cwd=tmp, capture_output=True, timeout=120,
                          env=dict(os.environ, LC_ALL="C", HOME=tmp))
    assert proc.returncode in (0, 1), (f"the skill's documented command failed on this input "
                                       f"(exit {{proc.returncode}}): {{proc.stderr[-800:]!r}}")
    want = mine.read_bytes() if mine.is_file() else b""


def norm(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return "\\n".join(line.rstrip() for line in text.strip().splitlines())


assert norm(want), "the documented command gives no result on this input: nothing to compare with"
got = out.read_bytes()
assert norm(got) == norm(want), (f"{{out}} is not what the skill's documented command gives for this input "
                                 f"({{len(got)}} bytes, expected {{len(want)}})")
'''
