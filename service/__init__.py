"""gpuquote: GPU-rental prices, normalized, and ranked total-cost quotes."""

from importlib.metadata import version

__all__ = ["VERSION"]

VERSION = version("gpuquote")
