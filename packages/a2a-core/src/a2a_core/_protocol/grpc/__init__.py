"""The gRPC binding (L1, pure: no grpc or protobuf import).

`codec` encodes the v1.0 model as protobuf from the schema generated from ``a2a.proto``;
`binding` holds the service's method table, the ``google.rpc.Status`` of an error and the
gRPC framing the server and the client share.
"""
