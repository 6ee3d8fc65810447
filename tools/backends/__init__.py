"""Embedded backends for the one-command platform and the tests: real servers
from pip wheels, started and stopped as child processes."""

import subprocess


def terminate(process: subprocess.Popen | None, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited in time."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
