"""The operator's defaults the engine assumes and ``Settings`` can replace, in a module that imports
nothing: the settings (and ``gpuquote serve``'s parent process, which reads them before its workers
start) take them without loading the engine. Each is explained where the engine uses it:

- ``DEFAULT_GPU_HOURS_BETWEEN_FAILURES``: failing hardware (``service.quote.model.interruptions``);
- ``DEFAULT_CROSS_NODE_FACTOR``: efficiency kept per doubling of nodes (``service.quote.model.scaling``);
- ``DEFAULT_CROSS_CITY_MBPS``: a copy between cities (``service.quote.evaluate.locality``).
"""

from __future__ import annotations

__all__ = ["DEFAULT_CROSS_CITY_MBPS", "DEFAULT_CROSS_NODE_FACTOR", "DEFAULT_GPU_HOURS_BETWEEN_FAILURES"]

# One failure per 50,700 GPU-hours: Llama 3 405B's pre-training (419 unexpected interruptions in 54 days
# on 16,384 H100; docs/engine.md, "Interruptions").
DEFAULT_GPU_HOURS_BETWEEN_FAILURES = 50_700.0
# Efficiency kept per doubling of nodes (0.88–0.93 over InfiniBand, docs/engine.md).
DEFAULT_CROSS_NODE_FACTOR = 0.9
# Mbit/s a copy between cities gets (``GPUQUOTE_CROSS_CITY_MBPS``).
DEFAULT_CROSS_CITY_MBPS = 500.0
