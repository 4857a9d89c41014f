"""A sub-command's handler named by its module and function, imported when the command runs: parsing
the command line loads no command's dependencies (``gpuquote serve`` never loads the engine)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import cast

__all__ = ["Command"]


@dataclass(frozen=True, slots=True)
class Command:
    """``module.function(args)``, the module's ``EXIT_2_ERRORS`` what the command exits 2 for."""

    module: str
    function: str

    def __call__(self, args: argparse.Namespace) -> int:
        handler = cast(Callable[[argparse.Namespace], int], getattr(self._loaded(), self.function))
        return handler(args)

    def exit_2_errors(self) -> tuple[type[Exception], ...]:
        errors: tuple[type[Exception], ...] = self._loaded().EXIT_2_ERRORS
        return errors

    def _loaded(self) -> ModuleType:
        return importlib.import_module(self.module)
