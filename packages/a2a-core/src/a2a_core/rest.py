"""The HTTP+JSON (REST) binding: its route table and its request and response codec (L1, pure).

The public face of ``a2a_core.rest``: import these names from here.
"""

from a2a_core._protocol.rest import (
    A2A_JSON_CONTENT_TYPE,
    DEFAULT_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    ROUTES,
    QueryField,
    QueryKind,
    RestRequest,
    RestRoute,
    RouteMatch,
    RouteMiss,
    check_request_content_type,
    decode_rest_request,
    encode_rest_result,
    encode_rest_stream_event,
    is_json_media_type,
    match_route,
    parse_query,
    rest_error_response,
    rest_route_miss_response,
)

__all__ = [
    "A2A_JSON_CONTENT_TYPE",
    "DEFAULT_CONTENT_TYPE",
    "JSON_CONTENT_TYPE",
    "ROUTES",
    "QueryField",
    "QueryKind",
    "RestRequest",
    "RestRoute",
    "RouteMatch",
    "RouteMiss",
    "check_request_content_type",
    "decode_rest_request",
    "encode_rest_result",
    "encode_rest_stream_event",
    "is_json_media_type",
    "match_route",
    "parse_query",
    "rest_error_response",
    "rest_route_miss_response",
]
