import pytest

from workbench.sandbox import base_image
from workbench.sandbox.engine import Engine


def test_mirror_is_read_from_apt_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.example.test/debian\nSuites: bookworm\n")
    assert base_image.apt_mirror(tmp_path) == "http://mirror.example.test/debian"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://other.example.test/debian/ bookworm main\n")
    assert base_image.apt_mirror(tmp_path) == "http://other.example.test/debian"
    (tmp_path / "sources.list").write_text("")
    assert base_image.apt_mirror(tmp_path) == base_image.DEFAULT_MIRROR


def test_tag_follows_the_recipe(monkeypatch):
    tag = base_image.recipe_tag()
    assert tag.startswith("workbench/base:") and base_image.recipe_tag() == tag
    monkeypatch.setattr(base_image, "PACKAGES", base_image.PACKAGES + ("gcc",))
    assert base_image.recipe_tag() != tag
    monkeypatch.setenv(base_image.ENV_BASE_IMAGE, "my/base:1")
    assert base_image.base_image_name() == "my/base:1"


@pytest.mark.docker
def test_bootstrap_is_a_no_op_when_the_image_exists():
    report = base_image.bootstrap(Engine().client, log=lambda m: None)
    assert report.action == "present" and report.tag == base_image.recipe_tag() and report.seconds < 5
    assert "workbench/base:latest" in Engine().client.images.get(report.tag).tags


def test_missing_debootstrap_is_explained(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(base_image.ENV_IMAGE_CACHE, str(tmp_path / "cache"))
    with pytest.raises(RuntimeError, match="apt-get install -y debootstrap"):
        base_image.bootstrap(Engine().client, log=lambda m: None, force=True)
