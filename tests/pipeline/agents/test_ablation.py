"""pipeline.agents.ablation / solution_steps: which solution step the ablation probe leaves out
(marked steps of our bundles, else top-level commands of a hand-written solve.sh), chosen by
seed; the script it runs instead. Unit tests: no container."""
import json

import pytest

from pipeline.agents.ablation import AblationAgent
from pipeline.agents.factory import make_agent
from pipeline.agents.protocol import AGENT_LABELS, AgentContext
from pipeline.agents.solution_steps import NoStepError, pick_step, solution_steps, without_step
from pipeline.shell_syntax import STEP_MARK
from pipeline.trajectories.atif import validate_with_harbor
from tests.helpers import sum_bundle

# As pipeline/synth/compose.py writes them.
OFFLINE = """#!/bin/bash
set -euo pipefail
export LC_ALL=C
cd /app

# --- step 1 (csv-filter) ---
python3 - <<'PY'
print("filtered")
PY
cd /app

# --- step 2 (line-diff) ---
diff -u a b > out.patch || [ $? -eq 1 ]
cd /app

# --- step 3 (text-normalise) ---
sort -u in.txt > out.txt
cd /app
"""
# As the LLM synthesizer's prompt asks (workbench/prompts/synth_solution.md), a step split in two.
LLM = """#!/bin/bash
set -e
# step 1: fetch the catalog
curl -s localhost:8080/items > /app/items.json
# step 2: count them
jq length /app/items.json > /app/count.txt
# step 1: (again) keep a copy
cp /app/items.json /app/items.bak
"""
HAND = """#!/bin/bash
set -e
cd /app
OUT=/app/out
mkdir -p "$OUT"
for f in data/*.csv; do
  cut -d, -f1 "$f" >> "$OUT/ids.txt"
done
if [ -s "$OUT/ids.txt" ]; then
  sort -u "$OUT/ids.txt" -o "$OUT/ids.txt"
fi
cat > "$OUT/report.md" <<EOF2
# Report
done
EOF2
"""


def _marker_numbers(script: str) -> list[int]:
    return [int(m.group(1)) for m in STEP_MARK.finditer(script)]


def _code(script: str) -> str:
    """The script's code lines: no comments (the ablation's note names what it left out), no blanks."""
    return "\n".join(ln for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def test_offline_bundles_steps_are_their_marked_sections():
    steps = solution_steps(OFFLINE)
    assert [s.number for s in steps] == [1, 2, 3] and all(s.marked for s in steps)
    assert [s.label for s in steps] == ["step 1 (csv-filter)", "step 2 (line-diff)", "step 3 (text-normalise)"]
    assert "diff -u a b" in steps[1].text and "sort -u" not in steps[1].text
    assert "set -euo pipefail" not in "".join(s.text for s in steps)     # the preamble is no step


def test_llm_bundles_sections_with_one_number_are_one_step():
    steps = solution_steps(LLM)
    assert [s.number for s in steps] == [1, 2]
    assert "curl" in steps[0].text and "cp /app/items.json" in steps[0].text and len(steps[0].spans) == 2
    cut = without_step(LLM, steps[0])
    assert "curl" not in _code(cut) and "cp /app/items.json" not in _code(cut) and "jq length" in cut
    assert _marker_numbers(cut) == [2] and cut.count("left out by the ablation probe: step 1") == 2


def test_hand_written_scripts_steps_are_top_level_commands_less_set_up():
    steps = solution_steps(HAND)
    assert not any(s.marked for s in steps)
    firsts = [s.text.splitlines()[0] for s in steps]
    assert firsts == ['mkdir -p "$OUT"', "for f in data/*.csv; do", 'if [ -s "$OUT/ids.txt" ]; then',
                      'cat > "$OUT/report.md" <<EOF2']
    # a compound command and a heredoc are one step each, whole (the heredoc's `done` closes nothing)
    assert steps[1].text.endswith("done") and steps[3].text.endswith("EOF2")
    cut = _code(without_step(HAND, steps[1]))
    assert "cut -d," not in cut and "for f in" not in cut and 'sort -u "$OUT/ids.txt"' in cut
    assert cut.count("\nfi\n") == 1 and "OUT=/app/out" in cut


@pytest.mark.parametrize("script", [OFFLINE, LLM, HAND])
def test_seed_selection_is_deterministic_and_covers_every_step(script):
    steps = solution_steps(script)
    assert len(steps) >= 2
    picks = [pick_step(steps, seed) for seed in range(len(steps))]
    assert [p.number for p in picks] == [s.number for s in steps]                    # each once in n seeds
    assert [pick_step(solution_steps(script), s).number for s in range(10)] == \
        [pick_step(steps, s).number for s in range(10)]                              # same seed, same step
    for step in steps:                                                               # never leaves out nothing
        kept, left = _code(without_step(script, step)).splitlines(), _code(step.text).splitlines()
        assert left and len(kept) == len(_code(script).splitlines()) - len(left)


@pytest.mark.parametrize("script", ["", "#!/bin/bash\nset -e\ncd /app\nexport X=1\n# nothing else\n"])
def test_a_script_without_steps_is_refused_never_run_whole(script):
    assert solution_steps(script) == []
    with pytest.raises(NoStepError, match="no step to leave out"):
        pick_step([], 0)


def test_the_ablation_of_a_script_without_steps_runs_nothing(tmp_path):
    bundle = sum_bundle()
    bundle.files["solution/solve.sh"] = b"#!/bin/bash\nset -e\ncd /app\n"

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"the ablation used its box ({name}) with nothing to leave out")

    ctx = AgentContext(task_id="t", trial_id="trial-abl", instruction="Sum.", bundle=bundle, box=Untouchable(),
                       timeout_s=30)
    result = AblationAgent().run(ctx)
    assert result.status == "crashed" and "no step to leave out" in result.error
    assert result.details == {"left_out": None, "steps": 0}
    (tmp_path / "t.json").write_text(json.dumps(result.trajectory))
    assert validate_with_harbor(tmp_path / "t.json") == []


def test_ablation_is_labelled_as_a_probe_and_keyed_by_name_and_version():
    agent = make_agent("ablation")
    assert isinstance(agent, AblationAgent) and agent.model is None
    assert agent.label == AGENT_LABELS["ablation"] and "not a model" in agent.label
    assert agent.config_key() == "ablation@1"
