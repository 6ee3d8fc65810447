"""The walkthrough runs as written: every shell block of docs/getting-started.md from its
heading "A grpcurl walkthrough" on (the README's walkthrough, which the page includes, then
the page's own; not `make run` above it) runs in one bash against the platform, exits 0,
and prints what the `output` block after it shows.

Three things differ from a terminal beside `make run`, and only these, by plain text
substitution in the blocks: `localhost:50051` is the fixture's gateway, `localhost:8080`
its HTTP listener, and `data/demo-api-key` a file holding what `make run` writes there (an
admin key of the account `demo` that may act for users), made for this test.

An `output` block lists lines of the reply in order, each a whole line (indentation aside)
in which `...` stands for anything; a line of `...` alone is a gap. A block whose reply
does not show its lines yet is run again for a while: transcript search follows the
journal in the background, and every block is safe to repeat (the appends and the store
are idempotent).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import markdown
import pytest
import yaml

from testkit.shell import Shell

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
START = "## A grpcurl walkthrough\n"
BIN = os.path.dirname(sys.executable)
SETTLE_SECONDS = 30


def page_text() -> str:
    """The page as the site renders it: its includes expanded by pymdownx.snippets with
    mkdocs.yml's own settings for it."""
    extensions = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["markdown_extensions"]
    config = next(e["pymdownx.snippets"] for e in extensions
                  if isinstance(e, dict) and "pymdownx.snippets" in e)
    config = {**config, "base_path": [str(ROOT / p) for p in config["base_path"]]}
    md = markdown.Markdown(extensions=["pymdownx.snippets"],
                           extension_configs={"pymdownx.snippets": config})
    return "\n".join(md.preprocessors["snippet"].run(PAGE.read_text().splitlines()))


def steps(text: str) -> list[tuple[str, list[str]]]:
    """Each sh block, with the lines of the output block right after it (or none)."""
    found: list[tuple[str, list[str]]] = []
    for language, body in re.findall(r"^```(sh|output)\n(.*?)^```", text, re.M | re.S):
        if language == "sh":
            found.append((body, []))
        else:
            assert found and not found[-1][1], "an output block follows its sh block"
            found[-1] = (found[-1][0], [line.strip() for line in body.splitlines()])
    return found


def _pattern(line: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in line.split("...")))


def missing_line(expected: list[str], output: str) -> str | None:
    """The first expected line not found in order in ``output`` (None: all are there)."""
    lines = iter(line.strip() for line in output.splitlines())
    for line in expected:
        if line in ("", "..."):
            continue
        pattern = _pattern(line)
        if not any(pattern.fullmatch(actual) for actual in lines):
            return line
    return None


def test_missing_line_matches_in_order_with_gaps():
    output = '{\n  "a": 1,\n  "b": "x y z",\n  "c": 3\n}'
    assert missing_line(['"a": 1,', "...", '"b": "x ... z",'], output) is None
    assert missing_line(['"b": "x ... z",', '"a": 1,'], output) == '"a": 1,'
    assert missing_line(['"b": "x"'], output) == '"b": "x"'


@pytest.fixture
def shell(platform, tmp_path):
    key_file = tmp_path / "demo-api-key"
    key_file.write_text(platform.create_key("demo") + "\n")
    http = platform.http.removeprefix("http://")
    substitutions = {"localhost:50051": platform.gateway, "localhost:8080": http,
                     "data/demo-api-key": str(key_file)}
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    started = Shell(ROOT, tmp_path, env)
    yield started, substitutions
    started.close()


def _run_until_shown(shell: Shell, block: str, expected: list[str]):
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        ran = shell.run(block)
        assert not ran.failed, f"{ran.failed}\n{block}\n{ran.stderr}"
        missing = missing_line(expected, ran.stdout)
        if missing is None:
            return ran
        assert time.monotonic() < deadline, f"not shown: {missing}\n{block}\n{ran.stdout}"
        time.sleep(0.5)


def test_the_walkthrough_commands_run_and_print_what_the_text_shows(shell):
    bash, substitutions = shell
    text = page_text()
    text = text[text.index(START):]
    for placeholder in substitutions:
        assert placeholder in text, f"the walkthrough no longer uses {placeholder}"
    outputs = {}
    for block, expected in steps(text):
        for placeholder, actual in substitutions.items():
            block = block.replace(placeholder, actual)
        outputs[block] = _run_until_shown(bash, block, expected).stdout
    assert len(outputs) >= 8

    def reply(*needles: str) -> dict:
        """The JSON reply of the first block that holds every one of ``needles``."""
        return json.loads(next(out for block, out in outputs.items()
                               if all(needle in block for needle in needles)))

    # What the walkthrough claims, read from the replies themselves.
    context = reply("GatewayService/BuildContext")["messages"]
    assert [m["role"] for m in context] == ["ROLE_SYSTEM", "ROLE_USER", "ROLE_ASSISTANT",
                                            "ROLE_TOOL"]
    assert context[0]["content"].startswith("<remembered_facts>\n- name: The user is Ana Lopes.")
    recalled = reply("CallTool", '"memory_recall"')["result"]["entries"]
    assert recalled[0]["content"] == "The user is Ana Lopes."
    hits = reply("CallTool", '"journal_message_search"')["result"]["hits"]
    assert hits[0]["message_id"] == "m1"
