"""What every suite shares."""

# Hypothesis is imported before any test starts a server: the first A2AServer to start in a
# process freezes the objects that exist then (gc.freeze(), see a2a_core.server), and a
# registration hypothesis makes on import (trio's random generator) checks its referrers
# with gc.get_referrers, which does not see frozen objects.
import contextlib
from collections.abc import Iterator

import hypothesis  # noqa: F401
import pytest


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_stops_the_session() -> Iterator[None]:
    """Ctrl-C stops the whole run, also while a test serves through uvicorn in process.

    uvicorn's ``Server.serve`` takes SIGINT for itself (to stop gracefully) and raises it
    again once it has stopped: a test server that stops on its own event, not on that
    signal, swallowed it until the test ended, and the raised signal then failed the
    next test as a cancellation while the session went on. The servers that tests run in
    process leave the signal to Python, which raises KeyboardInterrupt where it lands
    (pytest then stops); uvicorn's own signal handling is tested in subprocesses."""
    import uvicorn

    captured = uvicorn.Server.capture_signals

    def leave_signals_alone(self: uvicorn.Server) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    uvicorn.Server.capture_signals = leave_signals_alone  # type: ignore[method-assign]
    try:
        yield
    finally:
        uvicorn.Server.capture_signals = captured  # type: ignore[method-assign]
