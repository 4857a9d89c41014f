"""The engine's floors point one way: no module imports one from a floor above its own (docs/engine.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import service.quote

ENGINE = Path(service.quote.__file__).parent
# Lowest first; a module may import its own floor and the ones below.
FLOORS = (
    "base",
    "prose",
    "model",
    "jobs",
    "resolve",
    "evaluate",
    "rank",
    "assemble",
    "nearest",
    "alternatives",
    "engine",
)


def _floor(module: str) -> int:
    """The floor of ``service.quote.<module...>`` (the front door, ``service.quote`` itself, is above all)."""
    parts = module.split(".")
    return FLOORS.index(parts[2]) if len(parts) > 2 else len(FLOORS)


def _engine_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    found += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    return [name for name in found if name == "service.quote" or name.startswith("service.quote.")]


def _modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(ENGINE.rglob("*.py")):
        relative = path.relative_to(ENGINE).with_suffix("")
        parts = [part for part in relative.parts if part != "__init__"]
        modules.append((".".join(["service", "quote", *parts]), path))
    return modules


@pytest.mark.parametrize(("module", "path"), _modules(), ids=[name for name, _ in _modules()])
def test_no_module_imports_from_a_floor_above_its_own(module: str, path: Path) -> None:
    own = _floor(module)
    above = [name for name in _engine_imports(path) if _floor(name) > own]
    assert above == [], (
        f"{module} (floor {FLOORS[own] if own < len(FLOORS) else 'front door'}) imports {above}"
    )


def test_every_engine_module_is_on_a_floor() -> None:
    for module, _ in _modules():
        parts = module.split(".")
        assert len(parts) == 2 or parts[2] in FLOORS, module
