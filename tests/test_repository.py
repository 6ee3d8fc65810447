"""Checks on the repository itself: protos, generated code, compose file, docs."""

from __future__ import annotations

import ast
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tools import config_table, gen_protos

ROOT = Path(__file__).resolve().parent.parent
BIN = os.path.dirname(sys.executable)


def _tool(name: str) -> str:
    found = shutil.which(name, path=BIN) or shutil.which(name)
    assert found, f"{name} is not installed (it is a dev dependency)"
    return found


def test_buf_lint_is_clean():
    done = subprocess.run([_tool("buf"), "lint"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_no_type_errors_in_libs_and_services():
    # The files and settings are pyproject.toml's [tool.mypy], as `make lint` runs it.
    done = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# What each top-level package may not import: what ships (libs, services) stands on nothing
# of the tests, benchmarks or their kit; tools/ (launcher, generators, training) uses the
# kit at most, never a test or a benchmark.
_FORBIDDEN_IMPORTS = {
    "libs": {"tests", "bench", "testkit"},
    "services": {"tests", "bench", "testkit"},
    "tools": {"tests", "bench"},
}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return {name.split(".")[0] for name in names}


def test_dependencies_point_one_way():
    wrong = [f"{path.relative_to(ROOT)} imports {package}"
             for top, forbidden in _FORBIDDEN_IMPORTS.items()
             for path in sorted((ROOT / top).rglob("*.py"))
             for package in sorted(_imported_packages(path) & forbidden)]
    assert not wrong, "\n".join(wrong)


def test_the_import_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from bench.persona_chat import turns\n    import tests.x\n")
    assert _imported_packages(module) == {"bench", "tests"}


def test_generated_code_matches_the_protos(tmp_path):
    gen_protos.generate(tmp_path)
    committed = ROOT / "gen" / "python"
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    present = sorted(p.relative_to(committed) for p in committed.rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    assert fresh == present, "run `make proto`: generated files differ from gen/python"
    changed = [str(p) for p in fresh if not filecmp.cmp(tmp_path / p, committed / p, shallow=False)]
    assert not changed, f"run `make proto`: stale generated code in {changed}"


def test_compose_file_is_valid_and_complete():
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", "docker-compose.yml"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"postgres", "redis", "qdrant", "s3", "clickhouse", "journal-shard-0",
            "journal-shard-1", "thread_memory", "agent_memory", "search", "gateway"} <= set(services)
    published = {name for name, spec in services.items() if spec.get("ports")}
    assert published == {"gateway"}
    # The topology tools/topology.py runs: two replicas of everything, two journal
    # shards each with a writer and a standby under leases, found by one name.
    for name in ("journal-shard-0", "journal-shard-1", "thread_memory", "agent_memory", "search",
                 "gateway"):
        assert services[name]["deploy"]["replicas"] == 2, name
    for shard in (0, 1):
        journal = services[f"journal-shard-{shard}"]
        assert journal["environment"]["JOURNAL_SHARDS"] == str(shard)
        assert journal["environment"]["JOURNAL_SHARD_COUNT"] == "2"
        assert float(journal["environment"]["JOURNAL_LEASE_SECONDS"]) > 0
        assert journal["networks"]["default"]["aliases"] == ["journal"]


def test_the_configuration_page_table_matches_the_code():
    page = config_table.PAGE.read_text()
    assert config_table.table() in page, "run `python -m tools.config_table --write`"
    assert page.count(config_table.BEGIN) == page.count(config_table.END) == 1


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
