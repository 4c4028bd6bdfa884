"""The garbage collector and a long-running server (L2, private): freeze what start-up made.

A full collection walks every object the collector tracks. After start-up that is mostly the
interpreter's own: modules, functions, classes, the framework's and the application's
(about 45,000 objects for a server on uvicorn), none of which ever becomes garbage. Each
full collection walked them all again and stopped the event loop for 30-40 ms, a few times
a second under load: the p99 of a blocking SendMessage (docs/benchmarks.md). The requests
themselves leave no cyclic garbage (each execution lets go of what refers back to it when
it ends), so the collector has little to find and should not have much to walk.

``gc.freeze()`` moves every object tracked now into a permanent generation that collections
skip. Done once per process, when the first server starts, after its backend's services
(what it holds for its whole life is frozen with the rest). What it costs: an object that
existed at that moment and later becomes cyclic garbage is never reclaimed, so the leak is
bounded by what start-up made. ``gc.unfreeze()`` undoes it, for an application that wants
the collector to see everything again.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_objects"]

_frozen = False


def freeze_startup_objects() -> bool:
    """Freeze the objects tracked now, the first time in this process; whether it did."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.freeze()
    return True
