"""Server reflection as both `grpc.reflection.v1.ServerReflection` and `grpc.reflection.v1alpha.ServerReflection`.

Clients (buf curl, grpcurl, Postman) ask for v1 first; grpcio-reflection ships only v1alpha. The two protocols'
messages are the same on the wire (v1 is v1alpha under a new package name), so v1 is served by the same
servicer, and its file descriptor, v1alpha's renamed, is added to the descriptor pool so that reflection can
describe the v1 service too.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

__all__ = ["SERVICE_NAMES", "V1_SERVICE_NAME", "enable_server_reflection"]

V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
# What every server lists for reflection itself: the current protocol and the older one.
SERVICE_NAMES = (V1_SERVICE_NAME, reflection.SERVICE_NAME)

_V1_FILE = "grpc/reflection/v1/reflection.proto"


def _add_v1_descriptor(pool: descriptor_pool.DescriptorPool) -> None:
    """grpc/reflection/v1/reflection.proto in `pool`: v1alpha's file under v1's package and file name
    (unless the pool describes the v1 service already: added before, or by a grpcio-reflection that has it)."""
    try:
        pool.FindServiceByName(V1_SERVICE_NAME)
        return
    except KeyError:
        pass
    v1alpha = reflection_pb2.DESCRIPTOR.package
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    v1 = V1_SERVICE_NAME.rsplit(".", 1)[0]
    proto.name, proto.package = _V1_FILE, v1
    proto.ClearField("options")
    for message in proto.message_type:
        for field in message.field:
            if field.type_name:
                field.type_name = field.type_name.replace(f".{v1alpha}.", f".{v1}.")
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(f".{v1alpha}.", f".{v1}.")
            method.output_type = method.output_type.replace(f".{v1alpha}.", f".{v1}.")
    pool.AddSerializedFile(proto.SerializeToString())


def enable_server_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection over `service_names` (and reflection's own two services) on `server`, as v1 and v1alpha."""
    servicer = reflection.aio.ReflectionServicer([*service_names, *SERVICE_NAMES])
    _add_v1_descriptor(descriptor_pool.Default())
    handlers = {
        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
            response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
        )
    }
    for name in SERVICE_NAMES:
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        server.add_registered_method_handlers(name, handlers)
