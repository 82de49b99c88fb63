"""What a verifier run says: the reward test.sh wrote, the per-test outcomes (JUnit XML, or
CTRF for hand-written Harbor tasks), and whether the two agree.

A reward is only believed together with the outcomes it summarises: a reward of 1 beside a
failing test or beside no test at all is a contradiction, named as such in the verdict
(a planted reward file, or an interpreter replaced so that nothing runs). One exception: a
test.sh that never asks for outcomes (it names neither JUnit nor CTRF: a Harbor task may, and
Harbor runs it) and writes only a reward is believed in our sealed test phase — the agent cannot
plant or rewrite files there — with REWARD_ONLY as its warning (`reward_only`). A test.sh that
asks for outcomes and leaves none (pytest stopped by a planted conftest or ini file, say) is
still a contradiction, as is an outcome file that names no test.
"""
from __future__ import annotations

import json

from pipeline.verify.junit import parse_ctrf, parse_junit

FAILING = ("failed", "error")
OUTCOME_FILES = ("junit.xml", "ctrf.json")
REWARD_ONLY = ("tests/test.sh wrote a reward but no per-test outcomes (neither /logs/verifier/junit.xml nor "
               "ctrf.json), so no test can be named: the reward is believed (the test phase is sealed); to get "
               "per-test outcomes run pytest with --junitxml=/logs/verifier/junit.xml, or write a CTRF report "
               "to /logs/verifier/ctrf.json")


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def read_reward(files: dict[str, bytes]) -> tuple[float | None, dict]:
    """The reward (reward.json wins over reward.txt, as in Harbor; a dict counts by its lowest
    value) and extra details: parse errors, and a disagreement between the two files."""
    by_name = {_name(k): v for k, v in files.items()}
    extra: dict = {}
    from_txt = None
    if "reward.txt" in by_name:
        try:
            from_txt = float(by_name["reward.txt"].decode().strip())
        except (ValueError, UnicodeDecodeError):
            extra["reward_txt_error"] = by_name["reward.txt"][:200].decode("utf-8", "replace")
    if "reward.json" not in by_name:
        return from_txt, extra
    try:
        data = json.loads(by_name["reward.json"])
        values = [float(v) for v in data.values()] if isinstance(data, dict) else [float(data)]
        from_json = min(values) if values else None
        extra["reward_json"] = data
    except (ValueError, TypeError, AttributeError):
        extra["reward_json_error"] = by_name["reward.json"][:200].decode("utf-8", "replace")
        return None, extra
    if from_txt is not None and from_json != from_txt:
        extra["reward_disagreement"] = f"reward.json gives {from_json}, reward.txt gives {from_txt}"
    return from_json, extra


def reward_only(files: dict[str, bytes], test_sh: str) -> bool:
    """A reward and no outcome file, from a test.sh that never asks for one (see the module's doc)."""
    names = {_name(k) for k in files}
    asks = any(word in test_sh.lower() for word in ("junit", "ctrf"))
    return not asks and bool(names & {"reward.txt", "reward.json"}) and not names & set(OUTCOME_FILES)


def read_tests(files: dict[str, bytes]) -> list[dict]:
    """Per-test outcomes from junit.xml, else from ctrf.json (empty when neither is there)."""
    by_name = {_name(k): v for k, v in files.items()}
    if "junit.xml" in by_name:
        return parse_junit(by_name["junit.xml"])
    return parse_ctrf(by_name.get("ctrf.json"))


def failing(tests: list[dict]) -> list[str]:
    return [t["name"] for t in tests if t["outcome"] in FAILING]


def contradiction(reward: float | None, tests: list[dict], extra: dict) -> str | None:
    """Why this reward cannot be believed, or None. Checked before any verdict is drawn."""
    if reward is None:
        return None
    if not tests and extra.get("reward_only"):
        return None                     # believed, with REWARD_ONLY as the warning
    if not tests:
        return (f"the tests reported reward {reward:g} but no per-test outcomes: 0 tests collected "
                "(no test case in /logs/verifier/junit.xml or ctrf.json), so nothing was checked")
    bad = failing(tests)
    if reward >= 1.0 and bad:
        return (f"reward {reward:g} contradicts the per-test outcomes: {len(bad)} of {len(tests)} tests failed "
                f"({', '.join(bad[:5])})")
    if reward >= 1.0 and not any(t["outcome"] == "passed" for t in tests):
        return f"reward {reward:g} but none of the {len(tests)} tests passed (all skipped)"
    if "reward_disagreement" in extra:
        return f"the reward files disagree: {extra['reward_disagreement']}"
    return None
