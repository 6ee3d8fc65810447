"""One bash process fed block after block, as a person types into a terminal: what a block
sets (variables, PATH) is there for the next one."""

from __future__ import annotations

import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Ran:
    stdout: str
    stderr: str
    failed: list[str]  # "status N from: COMMAND", one per command that failed


class Shell:
    def __init__(self, cwd: Path, workdir: Path, env: dict[str, str]) -> None:
        self._workdir = workdir
        self._log = (workdir / "bash.log").open("w")
        self._bash = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env,
                                      stdin=subprocess.PIPE, stdout=self._log,
                                      stderr=subprocess.STDOUT, text=True)
        self._count = 0
        self._send("set -o pipefail\n")

    def run(self, block: str, timeout: float = 120) -> Ran:
        """Run ``block`` in the shell; every command in it that exits non-zero is listed
        (an ERR trap), the shell itself goes on."""
        self._count += 1
        out, err, failed, done = (self._workdir / f"{self._count}.{name}"
                                  for name in ("out", "err", "failed", "done"))
        failed.touch()
        self._send(f"trap 'echo \"status $? from: $BASH_COMMAND\" >> {shlex.quote(str(failed))}' ERR\n"
                   f"{{\n{block}\n}} > {shlex.quote(str(out))} 2> {shlex.quote(str(err))} "
                   f"< /dev/null\ntrap - ERR\n: > {shlex.quote(str(done))}\n")
        deadline = time.monotonic() + timeout
        while not done.exists():
            assert self._bash.poll() is None, f"bash exited: {self.log()}"
            assert time.monotonic() < deadline, f"block did not finish:\n{block}\n{self.log()}"
            time.sleep(0.05)
        return Ran(out.read_text(), err.read_text(), failed.read_text().splitlines())

    def log(self) -> str:
        """What bash printed itself (syntax errors)."""
        self._log.flush()
        return (self._workdir / "bash.log").read_text()

    def close(self) -> None:
        self._bash.stdin.close()
        self._bash.wait(timeout=10)
        self._log.close()

    def _send(self, text: str) -> None:
        self._bash.stdin.write(text)
        self._bash.stdin.flush()
