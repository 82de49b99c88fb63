"""`workbench app` and `workbench demo`: the dashboard served in this very process (so a
SIGTERM or SIGINT to its pid stops the server), the demo build behind it as a child that dies
with it, and a token for any bind that the network can reach."""
from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass

from workbench.config import ENV_HOME, REPO_ROOT
from workbench.console import err
from workbench.demo_status import LOG_FILE
from workbench.workspace import Workspace

APP_SCRIPT = REPO_ROOT / "workbench" / "app.py"
ENV_TOKEN = "WORKBENCH_AUTH_TOKEN"   # how the token reaches the app's gate (workbench/app.py)
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True)
class BindPlan:
    host: str
    port: int
    token: str | None      # None: no gate (loopback only)
    generated: bool        # the token was made here, so it must be shown to the user

    @property
    def url(self) -> str:
        """The address to open; a generated token rides along (a token the user chose is theirs
        to give, and stays out of the terminal and its logs)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}" + (f"/?token={self.token}" if self.generated else "")


def is_loopback(host: str) -> bool:
    """Only this machine can reach the bind; '' and hostnames other than localhost may not be."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plan_bind(host: str, port: int, token: str | None) -> BindPlan:
    """A loopback bind needs no token (one given is still asked for); any other bind gets the
    token given or a generated one. Raises ValueError for a token too short to resist guessing."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"--auth-token is {len(token)} characters long; use at least {MIN_TOKEN_CHARS} "
                         f"(or leave it out and one is generated)")
    if token is None and not is_loopback(host):
        return BindPlan(host, port, secrets.token_urlsafe(24), generated=True)
    return BindPlan(host, port, token, generated=False)


def announce(plan: BindPlan, ws: Workspace) -> None:
    if not is_loopback(plan.host):
        err.print(f"[bold red]WARNING: serving on {plan.host or 'every interface'}: every page, Settings "
                  "(the LLM endpoint and key) included, can be reached from the network.[/bold red]")
        err.print("[bold red]Only browsers that give the access token get in; anyone on the network can "
                  "still see that a dashboard runs here. Prefer --host 127.0.0.1 and an SSH tunnel.[/bold red]")
    if plan.generated:
        err.print(f"[bold]Access token (generated for this run):[/bold] {plan.token}")
    gated = " (asks for the access token)" if plan.token and not plan.generated else ""
    err.print(f"Dashboard on {plan.url}{gated} over {ws.root}", markup=False)


def cmd_app(args) -> int:
    try:
        plan = plan_bind(args.host, args.port, args.auth_token or os.environ.get(ENV_TOKEN) or None)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]")
        return 2
    ws = Workspace.open(args.workspace)
    build = _start_demo_build(ws, args.setup_docker) if args.demo else None
    announce(plan, ws)
    os.environ[ENV_HOME] = str(ws.root)
    if plan.token:
        os.environ[ENV_TOKEN] = plan.token
    else:
        os.environ.pop(ENV_TOKEN, None)
    try:
        serve(plan)
    finally:
        if build is not None:
            from workbench.process_owner import stop_group
            stop_group(build)
    return 0


def serve(plan: BindPlan) -> None:
    """Streamlit's own `run` command, in this process: it installs SIGTERM/SIGINT handlers
    that stop the server, and returns once it has stopped."""
    from streamlit.web import cli as stcli
    stcli.main(args=["run", str(APP_SCRIPT), "--server.address", plan.host, "--server.port", str(plan.port),
                     "--server.headless", "true", "--browser.gatherUsageStats", "false",
                     # no HTTP route that drives the app without a browser session
                     "--server.enableAgentApi", "false"],
               prog_name="streamlit", standalone_mode=False)


def _start_demo_build(ws: Workspace, setup_docker: bool) -> subprocess.Popen | None:
    """`workbench demo` in the background, when the demo workspace lacks anything; it writes
    its progress to the workspace's status file and its output to runs/demo-build.log."""
    from workbench.demo_build import demo_todo
    from workbench.process_owner import start_owned
    if not demo_todo(ws):
        return None
    env = {k: v for k, v in os.environ.items() if k != ENV_TOKEN}
    cmd = [sys.executable, "-m", "workbench.cli", "--workspace", str(ws.root), "demo"]
    if setup_docker:
        cmd.append("--setup-docker")
    log = ws.runs_dir / LOG_FILE
    err.print(f"Building the demo workspace behind the dashboard (progress on the Overview; log {log}).")
    return start_owned(cmd, log_path=log, env=env, cwd=REPO_ROOT)


def cmd_demo(args) -> int:
    from workbench.demo_build import SETUP_DOCKER, ensure_demo
    ensure_demo(args.workspace, docker_setup=SETUP_DOCKER if args.setup_docker else None)
    return 0


def add_commands(sub, common: argparse.ArgumentParser) -> None:
    docker_help = "also set up Docker and the base image (scripts/setup-docker.sh) for the demo's tasks"
    s = sub.add_parser("demo", parents=[common], help="build the demo workspace from the bundled corpus")
    s.add_argument("--setup-docker", action="store_true", help=docker_help)
    s.set_defaults(func=cmd_demo)
    s = sub.add_parser("app", parents=[common], help="serve the dashboard")
    s.add_argument("--host", default="127.0.0.1",
                   help="bind address (default: localhost only; any other needs an access token)")
    s.add_argument("--port", type=int, default=8501, help="port to serve on (default 8501)")
    s.add_argument("--demo", action="store_true",
                   help="build what the demo workspace lacks in the background, behind the dashboard")
    s.add_argument("--setup-docker", action="store_true", help=f"with --demo: {docker_help}")
    s.add_argument("--auth-token", default=None,
                   help=f"token a browser must give (?token=… or a prompt); default ${ENV_TOKEN}, "
                        "generated and printed for a non-loopback --host")
    s.set_defaults(func=cmd_app)
