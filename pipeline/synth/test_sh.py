"""tests/test.sh of a synthesized bundle: pytest on the verifier's toolchain, the per-test results
as JUnit XML and CTRF, and the reward."""
from __future__ import annotations

from workbench.sandbox.toolchain import ROOT as TOOLCHAIN_ROOT

# Under the workbench the verifier's read-only toolchain is mounted and /logs/verifier exists
# (emptied): only bash builtins and the toolchain run, nothing the solution could replace.
# Under Harbor (no toolchain) the image's own python3 and mkdir do the work.
# pytest's exit code is kept in $rc before anything else runs: the reward line (or the
# weighted variant pipeline/synth/llm/render.py puts in its place) reads it.
_TEST_SH_HEAD = """#!/bin/bash
if [ -x {root}/bin/python3 ]; then PY=({root}/bin/python3 -I); else PY=(python3); fi
[ -d /logs/verifier ] || mkdir -p /logs/verifier
cd /app
"${{PY[@]}}" -m pytest -q -p no:cacheprovider --junitxml=/logs/verifier/junit.xml -rA /tests/test_outputs.py
rc=$?
""".format(root=TOOLCHAIN_ROOT)

# The per-test results again as CTRF (ctrf.io: results.tool, summary, tests[{name, status,
# duration in ms, message}]) in /logs/verifier/ctrf.json, so they travel with an exported task
# (Harbor keeps /logs/verifier; reward.json stays numbers only, as Harbor averages its keys).
# Made from the JUnit XML, which our own verifier keeps reading. A pytest error (junit
# <error>) becomes status "other" with rawStatus "error". No XML (pytest never ran): no CTRF.
CTRF_STEP = r""""${PY[@]}" - <<'CTRFEOF' || true
import json, time, xml.etree.ElementTree as ET
try:
    cases = list(ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"))
except Exception:
    raise SystemExit(0)
tests = []
for case in cases:
    status, message = "passed", ""
    for tag, st in (("failure", "failed"), ("error", "other"), ("skipped", "skipped")):
        node = case.find(tag)
        if node is not None:
            status, message = st, (node.get("message") or node.text or "")[:2000]
            break
    try:
        ms = max(0, round(float(case.get("time") or 0) * 1000))
    except ValueError:
        ms = 0
    t = {"name": case.get("name", "?"), "status": status, "duration": ms}
    if message:
        t["message"] = message
    if status == "other":
        t["rawStatus"] = "error"
    tests.append(t)
stop = int(time.time() * 1000)
count = {s: sum(t["status"] == s for t in tests) for s in ("passed", "failed", "skipped", "pending", "other")}
report = {"results": {"tool": {"name": "pytest"},
                      "summary": {"tests": len(tests), **count, "start": stop - sum(t["duration"] for t in tests),
                                  "stop": stop},
                      "tests": tests}}
with open("/logs/verifier/ctrf.json", "w") as fh:
    json.dump(report, fh, indent=1)
CTRFEOF
"""

REWARD_LINE = "if [ $rc -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"

TEST_SH = _TEST_SH_HEAD + CTRF_STEP + REWARD_LINE + "exit 0\n"
