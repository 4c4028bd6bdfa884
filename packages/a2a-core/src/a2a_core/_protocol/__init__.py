"""L1, the protocol (pure and synchronous): bytes and headers in, values out, and back.

Everything between request bytes and reply bytes lives here, in one folder, so that what is
pure is where it is: the error table, the operations table, the codec, the JSON-RPC and REST
bindings, SSE framing, version and extension negotiation, the agent card, the security values,
and `ServerProtocol` (``server``), which puts them in order. Nothing in this folder does I/O,
reads a clock, logs or imports an event loop (``tests/core/test_purity.py``).

These modules are private: the public names are re-exported by the modules at the top of the
package (``a2a_core.errors``, ``a2a_core.http``, ``a2a_core.protocol``...), which are what
users import.
"""
