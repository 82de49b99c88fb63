"""pytest plugin shipped in the verifier's toolchain as `wb_seal` (loaded with `-p wb_seal`).

Tests may run the solution's code, and that code may leave a process behind that rewrites
junit.xml or reward.txt once pytest has written them. So when the session finishes, before
any report is written (tryfirst: ahead of junitxml), every other process is killed
(`wb_strays`, i.e. toolchain_strays.py)."""
import pytest
import wb_strays


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    wb_strays.stop_others()
