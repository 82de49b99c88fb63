"""The verifier's toolchain runs whatever the solution did to the container's own bash,
python3, libc or /etc/ld.so.preload, and nothing from the image's ENV reaches it."""
import pytest

from workbench.sandbox import toolchain

PROBE = ("import sqlite3, hashlib, zipfile, json, pytest, sys; "
         "print('TOOLCHAIN', sys.prefix, pytest.__file__.startswith(sys.prefix))")


def test_clean_env_drops_what_makes_other_code_run():
    env = toolchain.clean_env(["PATH=/evil", "LD_PRELOAD=/app/x.so", "BASH_ENV=/app/rc", "PYTHONPATH=/app",
                               "PYTEST_ADDOPTS=-p evil", "BASH_FUNC_echo%%=() { :; }", "APP_HOME=/srv", "HOME="])
    assert env["APP_HOME"] == "/srv" and env["PATH"].startswith(toolchain.ROOT + "/bin:")
    assert not {"LD_PRELOAD", "BASH_ENV", "PYTHONPATH", "BASH_FUNC_echo%%"} & set(env)
    assert "-c /dev/null" in env["PYTEST_ADDOPTS"] and "--confcutdir=/tests" in env["PYTEST_ADDOPTS"]
    assert env["HOME"] == "/root" and env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
    # the image's programs (copies) before any folder of the container, git's helpers from the copy too
    dirs = env["PATH"].split(":")
    assert dirs.index(f"{toolchain.ROOT}/usr/bin") < dirs.index("/usr/local/bin") < dirs.index("/usr/bin")
    assert all(d.startswith(toolchain.ROOT) for d in dirs[:dirs.index("/usr/local/sbin")])
    assert env["GIT_EXEC_PATH"] == f"{toolchain.ROOT}/usr/lib/git-core"


def test_the_loader_is_blind_to_ld_so_preload():
    assert len(toolchain.PRELOAD_NONE) == len(toolchain.PRELOAD) and toolchain.PRELOAD_NONE.startswith(b"/wb-verifier/")


@pytest.mark.docker
def test_toolchain_survives_a_wrecked_container():
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine
    engine = Engine()
    tc = toolchain.ensure(engine)
    with engine.container(base_image_name(), purpose="toolchain-test", mounts=[tc.mount()]) as box:
        wreck = (f"touch {toolchain.ROOT}/bin/planted 2>&1; rm -rf {toolchain.ROOT} 2>&1; mv {toolchain.ROOT} /x 2>&1; "
                 "echo /nowhere/evil.so > /etc/ld.so.preload; printf '#!/bin/sh\\nexit 0\\n' > /tmp/fake; "
                 "chmod +x /tmp/fake; for f in /usr/bin/python3.11 /usr/bin/bash; do cp /tmp/fake $f.new; "
                 "mv -f $f.new $f; done; mv /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc.gone; "
                 "exit 0")
        res = box.run(wreck, 30)
        assert "Read-only file system" in res.output and "Device or resource busy" in res.output, res.output
        broken = box.run(["/bin/true"], 10)
        assert broken.exit_code != 0     # the container's own binaries are gone...
        py = box.run(toolchain.python_argv(PROBE), 30, environment=toolchain.LOADER_ENV)
        assert py.exit_code == 0 and "TOOLCHAIN /wb-verifier True" in py.output, py.output
        assert "ld.so" not in py.output  # ...the toolchain never even reads the planted preload
        sh = box.run([toolchain.BASH, "-c", "echo $BASH_VERSION"], 10, environment=toolchain.LOADER_ENV)
        assert sh.exit_code == 0 and sh.output.strip()[:1].isdigit(), sh.output


LIAR = "#!/bin/bash\necho 6\n"   # not sh: sh is one of the programs replaced
# What the tests' shell finds and gets, on the toolchain with the tests' environment.
SEEN = ("command -v git jq sh; git --version; echo '{\"a\": 1}' | jq .a; echo x | zstd -q | zstd -dc; "
        "python3 -c 'import os, subprocess; print(subprocess.run(\"echo real-$0\", shell=True, capture_output=True, "
        "text=True).stdout, os.system(\"echo sys-$0; exit 3\") >> 8)'")


@pytest.mark.docker
def test_the_tests_run_the_images_programs_whatever_the_container_did():
    """Liars over git and sh (links followed), a liar jq earlier on PATH: the container's own
    programs lie, the tests' PATH (and Python's shell=True and os.system) reach the image's copies."""
    import json
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine
    engine = Engine()
    tc = toolchain.ensure(engine)
    with engine.container(base_image_name(), purpose="toolchain-test", mounts=[tc.mount()]) as box:
        box.put({"liar": LIAR.encode()}, "/tmp")
        wreck = ("chmod +x /tmp/liar; cp /tmp/liar /usr/local/bin/jq; for t in git zstd sh; do "
                 "p=$(readlink -f $(command -v $t)); cp /tmp/liar $p.new; mv -f $p.new $p; done; git --version; jq; zstd")
        assert box.run(wreck, 30).output.split() == ["6", "6", "6"]   # the attack is real
        launch = "import json, os, sys; os.execve(sys.argv[2], sys.argv[2:], json.loads(sys.argv[1]))"
        argv = toolchain.python_argv(launch, json.dumps(toolchain.clean_env([])), toolchain.BASH, "-c", SEEN)
        res = box.run(argv, 30, environment=toolchain.LOADER_ENV)
        lines = res.output.split()
        assert res.exit_code == 0, res.output
        assert lines[:3] == [f"{toolchain.ROOT}/usr/bin/{t}" for t in ("git", "jq", "sh")], res.output
        assert "6" not in lines and "git version 2." in res.output, res.output
        assert lines[-5:] == ["1", "x", "sys-" + lines[2], "real-" + lines[2], "3"], res.output
