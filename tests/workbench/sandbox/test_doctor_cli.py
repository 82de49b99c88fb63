import pytest

from tests.helpers import cli

pytestmark = pytest.mark.docker


def test_doctor_reports_every_part(tmp_path):
    r = cli("doctor", "--workspace", str(tmp_path / "ws"))
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("docker SDK", "Docker engine", "base image", "debootstrap", "patchelf"):
        assert name in r.stdout
    assert "missing" not in r.stdout


def test_doctor_names_a_missing_base_image_and_the_fix(tmp_path):
    r = cli("doctor", "--workspace", str(tmp_path / "ws"), env={"WORKBENCH_BASE_IMAGE": "nothere/base:0"})
    assert r.returncode == 1 and "nothere/base:0" in r.stdout and "missing" in r.stdout


def test_images_bootstrap_cli(tmp_path):
    r = cli("images", "bootstrap", "--workspace", str(tmp_path / "ws"))
    assert r.returncode == 0 and "present" in r.stdout


def test_doctor_names_a_missing_patchelf_and_the_fix(tmp_path, monkeypatch):
    """The verifier's toolchain needs patchelf: without it doctor says so and how to get it."""
    import shutil

    from workbench.sandbox.doctor import diagnose
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda cmd, *a, **k: None if cmd == "patchelf" else real_which(cmd, *a, **k))
    found = {f.name: f for f in diagnose()}
    patchelf = found["patchelf (verifier toolchain)"]
    assert not patchelf.ok and patchelf.required and "apt-get install -y patchelf" in patchelf.fix
