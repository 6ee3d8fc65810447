"""Embedded backends for the one-command platform and the tests: real servers
from pip wheels, started and stopped as child processes.

Each server runs in the foreground as our child, in its own session (a Ctrl-C
at the terminal reaches only the launcher, which then stops things in order),
so a supervisor sees it exit: ``spawn()`` starts it and returns, ``ready()``
says whether it answers, ``exit_status()`` is None while it runs, and
``start()`` is spawn-and-wait for callers that just need a server.
"""

import signal
import subprocess


def terminate(process: subprocess.Popen | None, timeout: float = 20.0,
              sig: int = signal.SIGTERM) -> None:
    """Ask ``process`` to stop with ``sig``; SIGKILL it if it has not exited in time."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
