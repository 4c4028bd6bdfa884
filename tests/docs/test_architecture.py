"""docs/architecture.md names the files one SendMessage touches, and they are the ones it touches.

The request is the one `bench/path.py` follows: a blocking JSON-RPC v1.0 SendMessage to the
echo agent through ``A2AServer.handle``, with every Python call it makes recorded.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from types import ModuleType

from helpers.doc_blocks import ROOT

PAGE = ROOT / "docs" / "architecture.md"
BENCH = ROOT / "bench"


def _bench_path() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # bench/path.py imports its neighbour servers.py
    try:
        spec = importlib.util.spec_from_file_location("bench_path", BENCH / "path.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


def _documented() -> list[str]:
    block = re.search(r"<!-- path:begin -->\n(.*?)<!-- path:end -->", PAGE.read_text(), re.S)
    assert block is not None, "docs/architecture.md has no path block"
    return re.findall(r"^- `([^`]+)`$", block.group(1), re.MULTILINE)


def test_the_page_lists_the_files_a_send_touches() -> None:
    path = _bench_path()
    trace = asyncio.run(path.trace_send(lambda: path.send_request("jsonrpc", "1.0"), warmup=5))
    touched = trace.first_entered()
    assert sorted(_documented()) == sorted(touched)
    # The request goes down to the protocol once and comes back to it once: the server
    # module is entered once, and ServerProtocol's module is re-entered only from the
    # L1 helpers it calls during that one pass, and once for the reply.
    returns = trace.returns()
    assert returns["server/_server.py"] <= 1
    assert returns["_protocol/server.py"] <= 4
