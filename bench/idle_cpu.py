"""Idle CPU of the whole platform: what ``make run`` costs while nothing happens.

Starts ``python -m tools.launch`` on free ports and a temporary data directory,
waits until it is up and then ``--settle`` seconds more, and samples every
component's CPU time (utime + stime of the process and its descendants, from
/proc) over ``--window`` seconds. Prints % of one core per component and the
machine's load average, which the figures should be read against.

    python -m bench.idle_cpu [--settle 30] [--window 60] [--activity] [--py-spy SECONDS]

``--activity`` first gives the platform some work through the gateway (120 messages
appended in batches of ten, so thread memory summarizes, a context built, searches
repeated so search keeps the scope hot), then lets it settle: what an idle platform
costs after it has been used, not only after a fresh start.

``--py-spy`` records each service for that many seconds (py-spy's ``record
--format raw``, idle frames excluded) after the window and prints its busiest
stacks: which loops wake up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as gateway_grpc
from google.protobuf import struct_pb2

from libs import clients
from tools.backends.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("journal", "agent_memory", "thread_memory", "search", "gateway")
TICKS = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended since it was listed
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def launcher_env(data_dir: Path) -> dict[str, str]:
    env = {**os.environ, "AGENTMEMORY_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1",
           "AGENTMEMORY_POSTGRES_PORT": str(free_port()),
           "AGENTMEMORY_REDIS_PORT": str(free_port()), "GATEWAY_HTTP_PORT": str(free_port())}
    for name in SERVICES:
        env[f"{name.upper()}_PORT"] = str(free_port())
        env[f"{name.upper()}_METRICS_PORT"] = str(free_port())
    return env


def wait_for_table(log: Path, process: subprocess.Popen, timeout: float = 240) -> dict[str, int]:
    """The pid of every component, from the table the launcher prints once all are up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text()
        if "Ctrl-C stops everything" in text:
            return {m[1]: int(m[2]) for m in re.finditer(r"^  (\w+) +\S+ +pid (\d+)$", text,
                                                          re.MULTILINE)}
        if process.poll() is not None:
            sys.exit("launcher exited:\n" + text)
        time.sleep(0.5)
    sys.exit("the platform did not come up:\n" + log.read_text())


def thread_seconds(pid: int) -> Counter:
    """CPU seconds of each thread of ``pid``, summed by thread name."""
    by_name: Counter = Counter()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        by_name[name] += (int(fields[11]) + int(fields[12])) / TICKS
    return by_name


async def some_activity(gateway: str, key: str) -> None:
    metadata = (("authorization", f"Bearer {key}"),)
    caller = gateway_pb.Caller(agent_id="idle-bench", user_id="ana",
                               surface=principal_pb2.SURFACE_AGENT)
    roles = (message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT)
    async with clients.channel(gateway, default_timeout=60) as channel:
        stub = gateway_grpc.GatewayServiceStub(channel)
        for start in range(0, 120, 10):
            await stub.AppendMessages(gateway_pb.AppendMessagesRequest(
                caller=caller, thread_id="idle-bench", messages=[
                    message_pb2.Message(id=f"m{i}", role=roles[i % 2],
                                        content=f"Message {i} about the billing migration plan.")
                    for i in range(start, start + 10)]), metadata=metadata)
        await stub.BuildContext(gateway_pb.BuildContextRequest(
            caller=caller, thread_id="idle-bench"), metadata=metadata)
        arguments = struct_pb2.Struct()
        arguments.update({"query": "billing migration", "summarize": False})
        for _ in range(3):
            await stub.CallTool(gateway_pb.CallToolRequest(
                caller=caller, tool_name="journal_message_search", arguments=arguments),
                metadata=metadata)
            await asyncio.sleep(0.5)


def sample(pids: dict[str, int], window: float) -> tuple[dict[str, float], dict[str, Counter]]:
    """% of a core per component, and per thread name of each service, over ``window``."""
    trees = {name: descendants(pid) for name, pid in pids.items()}
    before = {name: cpu_seconds(tree) for name, tree in trees.items()}
    threads_before = {name: thread_seconds(pids[name]) for name in SERVICES}
    started = time.monotonic()
    time.sleep(window)
    elapsed = time.monotonic() - started
    usage = {name: 100 * (cpu_seconds(trees[name]) - before[name]) / elapsed for name in pids}
    threads = {}
    for name in SERVICES:
        spent = thread_seconds(pids[name])
        spent.subtract(threads_before[name])
        threads[name] = Counter({t: 100 * s / elapsed for t, s in spent.items() if s > 0})
    return usage, threads


def busiest_stacks(pid: int, seconds: float, top: int = 6) -> list[tuple[int, str]]:
    """py-spy's raw samples of ``pid`` (idle excluded), the busiest stacks first."""
    py_spy = shutil.which("py-spy", path=os.path.dirname(sys.executable))
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        subprocess.run([py_spy, "record", "--pid", str(pid), "--duration", str(int(seconds)),
                        "--rate", "200", "--format", "raw", "--output", out.name, "--nonblocking"],
                       check=True, capture_output=True)
        counts: Counter = Counter()
        for line in Path(out.name).read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            counts[";".join(frames[-4:])] += int(count)
    return [(count, stack) for stack, count in counts.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--activity", action="store_true")
    parser.add_argument("--py-spy", type=float, default=0.0, dest="py_spy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="idle-cpu-") as tmp:
        log = Path(tmp) / "launcher.log"
        with open(log, "w") as out:
            launcher = subprocess.Popen([sys.executable, "-m", "tools.launch"], cwd=ROOT,
                                        env=launcher_env(Path(tmp) / "data"), stdout=out,
                                        stderr=subprocess.STDOUT)
        try:
            pids = wait_for_table(log, launcher)
            if args.activity:
                gateway = re.search(r"^  gateway +(\S+)", log.read_text(), re.MULTILINE)[1]
                key = (Path(tmp) / "data" / "demo-api-key").read_text().strip()
                asyncio.run(some_activity(gateway, key))
            time.sleep(args.settle)
            load_before = os.getloadavg()
            usage, threads = sample(pids, args.window)
            load_after = os.getloadavg()
            print(f"idle CPU, % of one core over {args.window:g} s, after {args.settle:g} s idle"
                  f"{' following some activity' if args.activity else ''} "
                  f"(load average {load_before[0]:.2f} before, {load_after[0]:.2f} after, "
                  f"{os.cpu_count()} cores)")
            for name, percent in usage.items():
                print(f"  {name:<14} {percent:6.2f} %")
            print(f"  {'services':<14} {sum(usage[s] for s in SERVICES):6.2f} %")
            for name in SERVICES:
                busiest = ", ".join(f"{t} {p:.2f}" for t, p in threads[name].most_common(5))
                print(f"  {name} by thread: {busiest or 'none'}")
            if args.py_spy:
                for name in SERVICES:
                    print(f"\n{name}: busiest stacks over {args.py_spy:g} s (samples at 200/s)")
                    for count, stack in busiest_stacks(pids[name], args.py_spy):
                        print(f"  {count:5d}  {stack}")
        finally:
            launcher.send_signal(signal.SIGTERM)
            try:
                launcher.wait(90)
            except subprocess.TimeoutExpired:
                launcher.kill()


if __name__ == "__main__":
    main()
