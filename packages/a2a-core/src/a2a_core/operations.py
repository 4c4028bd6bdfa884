"""The operations table (L1, pure): every fact about each A2A operation, in one row.

The public face of ``a2a_core.operations``: import these names from here.
"""

from a2a_core._protocol.operations import (
    OPERATIONS,
    Binding,
    CallRequest,
    Dialect,
    Gate,
    Operation,
    OperationSpec,
    Verb,
)

__all__ = [
    "OPERATIONS",
    "Binding",
    "CallRequest",
    "Dialect",
    "Gate",
    "Operation",
    "OperationSpec",
    "Verb",
]
