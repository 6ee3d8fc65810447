"""``make run``: the whole platform on the embedded defaults, in the foreground.

Starts every component as its own process, waits until each reports SERVING
on the standard health service, prints the addresses, and on Ctrl-C (or
SIGTERM) stops them in reverse order, each with SIGTERM and its own graceful
shutdown. If any component dies, the rest are stopped and the exit status is 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from libs.healthcheck import is_serving
from services.journal.settings import JournalConfig

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 20.0


@dataclass
class Component:
    name: str
    argv: list[str]
    address: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None


def components(data_dir: Path) -> list[Component]:
    env = {"JOURNAL_LOCAL_PATH": str(data_dir / "journal"), **os.environ}
    journal = JournalConfig.from_env(env)
    return [
        Component(
            "journal",
            [sys.executable, "-m", "services.journal"],
            f"{_client_host(journal.server.host)}:{journal.server.port}",
            env,
        ),
    ]


def _client_host(host: str) -> str:
    return "localhost" if host in ("0.0.0.0", "::", "[::]", "") else host


def start(component: Component) -> None:
    component.process = subprocess.Popen(
        component.argv, cwd=ROOT, env=component.env, start_new_session=True
    )
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if component.process.poll() is not None:
            raise RuntimeError(f"{component.name} exited with {component.process.returncode}")
        if is_serving(component.address):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{component.name} not serving after {READY_TIMEOUT_SECONDS:.0f}s")


def stop(component: Component) -> None:
    process = component.process
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"{component.name} did not stop in time; killing it", file=sys.stderr)
        process.kill()
        process.wait()


def main() -> int:
    data_dir = Path(os.environ.get("AGENTMEMORY_DATA_DIR", ROOT / "data")).resolve()
    running: list[Component] = []
    stopping = False

    def request_stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        for component in components(data_dir):
            running.append(component)
            start(component)
        print(f"\nagent memory platform is up (data in {data_dir}):")
        for component in running:
            print(f"  {component.name:<14} {component.address}")
        print(f"\ntry: grpcurl -plaintext {running[0].address} list\nCtrl-C stops everything.\n",
              flush=True)
        while not stopping:
            dead = [c for c in running if c.process and c.process.poll() is not None]
            if dead:
                print(f"{dead[0].name} exited unexpectedly; stopping", file=sys.stderr)
                status = 1
                break
            time.sleep(0.3)
    except RuntimeError as exc:
        print(f"start-up failed: {exc}", file=sys.stderr)
        status = 1
    finally:
        for component in reversed(running):
            stop(component)
        print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
