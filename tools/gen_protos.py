"""Generate the Python code for protos/ into gen/python (or another directory).

The generated code is committed; tests/test_repository.py regenerates it into a
temporary directory and fails if anything differs, so a proto change without
`make proto` never lands.
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
DEFAULT_OUT = ROOT / "gen" / "python"
DESCRIPTORS = "agentmemory/descriptors.binpb"


def proto_files() -> list[Path]:
    return sorted(PROTO_ROOT.rglob("*.proto"))


def _plugin(name: str) -> str:
    """A protoc plugin installed beside this interpreter (the dev extra brings it)."""
    found = shutil.which(name, path=Path(sys.executable).parent) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} is not installed: run `make install`")
    return found


def generate(out: Path) -> None:
    (out / DESCRIPTORS).parent.mkdir(parents=True, exist_ok=True)
    well_known = resources.files("grpc_tools") / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        # The type stubs mypy checks libs/ and services/ against (pyproject.toml): the
        # messages', and the stubs' and servicers' in their grpc.aio form only, since every
        # caller and server here is asyncio. Servicer methods are concrete, as at run time
        # (an RPC not overridden answers UNIMPLEMENTED).
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}", f"--mypy_out=quiet:{out}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--mypy_grpc_out=quiet,only_async,generate_concrete_servicer_stubs:{out}",
        # The comments, for what documents the API at run time (libs/proto_docs.py):
        # the OpenAPI document's descriptions and what gRPC reflection shows.
        f"--descriptor_set_out={out / DESCRIPTORS}", "--include_source_info",
        "--include_imports",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    for package_dir in {p.parent for p in out.rglob("*.py")}:
        while package_dir != out:
            (package_dir / "__init__.py").touch()
            package_dir = package_dir.parent


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
