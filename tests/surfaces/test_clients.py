"""The clients generated from protos/ in Node and Ruby, and the SDKs' own copies (Python,
TypeScript): current with the protos; the Node and Ruby example programs work against a
live gateway (the SDKs' READMEs: test_sdks.py)."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"


def _files(tree: Path) -> set[Path]:
    return {p.relative_to(tree) for p in tree.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _same_tree(fresh: Path, committed: Path) -> list[str]:
    files, present = _files(fresh), _files(committed)
    differ = sorted(str(p) for p in files ^ present)
    differ += sorted(str(p) for p in files & present
                     if not filecmp.cmp(fresh / p, committed / p, shallow=False))
    return differ


@pytest.mark.parametrize("language, generated", [
    ("node", "gen"), ("ruby", "lib"), ("python", "src/agentmemory_client/_proto"),
    ("typescript", "src/gen")])
def test_generated_client_code_matches_the_protos(client_toolchains, tmp_path, language,
                                                  generated):
    out = tmp_path / generated
    done = subprocess.run([str(CLIENTS / language / "generate.sh"), str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    stale = _same_tree(out, CLIENTS / language / generated)
    assert not stale, f"run clients/{language}/generate.sh: stale generated code in {stale}"


def _run_example(command: list[str], env: dict[str, str]) -> dict[str, dict]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stdout + done.stderr
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    return {step.pop("step"): step for step in steps}


EXAMPLES = {
    "node": ["node", str(CLIENTS / "node" / "examples" / "gateway.mjs")],
    "ruby": ["ruby", "-I", str(CLIENTS / "ruby" / "lib"),
             str(CLIENTS / "ruby" / "examples" / "gateway.rb")],
}


@pytest.mark.parametrize("language", sorted(EXAMPLES))
def test_example_appends_remembers_builds_context_and_recalls(client_toolchains, platform,
                                                              language):
    steps = _run_example(EXAMPLES[language], {
        "AGENTMEMORY_GATEWAY": platform.grpc, "AGENTMEMORY_API_KEY": platform.keys["acme"],
        "AGENT_ID": f"example-{language}", "USER_ID": "ana", "THREAD_ID": "example"})
    assert steps["append"] == {"offsets": [1, 2]}
    assert steps["store"] == {"isError": False, "result": {
        "stored": True, "key": "home_city", "visibility": "private", "unchanged": False,
        "replaced": False}}
    pinned, *window = steps["context"]["messages"]
    assert pinned["role"] == "ROLE_SYSTEM" and "The user lives in Lisbon." in pinned["content"]
    assert window == [
        {"role": "ROLE_USER", "content": "Hi, I am Ana and I live in Lisbon."},
        {"role": "ROLE_ASSISTANT", "content": "Nice to meet you, Ana."}]
    assert steps["context"]["tools"] == ["memory_store", "memory_recall", "memory_forget",
                                         "journal_message_search", "journal_tool_call_view"]
    assert steps["recall"] == {"isError": False, "contents": ["The user lives in Lisbon."]}
    retrieved = steps["retrieve"]
    assert "The user lives in Lisbon." in retrieved["rendered"]
    assert retrieved["rendered"].endswith(f"(receipt {retrieved['receiptId']})")
