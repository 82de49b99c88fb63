import pytest

from tests.helpers import cli

pytestmark = pytest.mark.docker


def test_doctor_reports_every_part(tmp_path):
    r = cli("doctor", "--workspace", str(tmp_path / "ws"))
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("docker SDK", "Docker engine", "base image", "debootstrap"):
        assert name in r.stdout
    assert "missing" not in r.stdout


def test_doctor_names_a_missing_base_image_and_the_fix(tmp_path):
    r = cli("doctor", "--workspace", str(tmp_path / "ws"), env={"WORKBENCH_BASE_IMAGE": "nothere/base:0"})
    assert r.returncode == 1 and "nothere/base:0" in r.stdout and "missing" in r.stdout


def test_images_bootstrap_cli(tmp_path):
    r = cli("images", "bootstrap", "--workspace", str(tmp_path / "ws"))
    assert r.returncode == 0 and "present" in r.stdout
