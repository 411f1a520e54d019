#!/usr/bin/env python3
"""Asks Sluice's gRPC service (Envoy's rate-limit protocol, RLS v3) for one decision, as Envoy would.

    rls_check.py [HOST:PORT [DOMAIN [KEY=VALUE[,KEY=VALUE...] ...]]]
    rls_check.py 127.0.0.1:8081 example user=alice           # the built-in example rules: OK, 9 left
    rls_check.py 127.0.0.1:8081 api remote_address=203.0.113.7   # a blocked address: OVER_LIMIT

Prints the overall code and one line per descriptor; exits 0 when OK, 1 when OVER_LIMIT, 2 when the call failed. Needs grpcio and protobuf,
and Python modules generated from envoy's .proto files on PYTHONPATH (server/README.md, "Call it yourself").
"""
import sys

import grpc
from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2
from envoy.service.ratelimit.v3 import rls_pb2

METHOD = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit"


def descriptor(text):
    entries = [ratelimit_pb2.RateLimitDescriptor.Entry(key=k, value=v)
               for k, v in (pair.split("=", 1) for pair in text.split(","))]
    return ratelimit_pb2.RateLimitDescriptor(entries=entries)


def main(args):
    target = args[0] if args else "127.0.0.1:8081"
    domain = args[1] if len(args) > 1 else "example"
    request = rls_pb2.RateLimitRequest(domain=domain, descriptors=[descriptor(d) for d in args[2:] or ["user=alice"]])
    with grpc.insecure_channel(target) as channel:
        # a plain unary call: the messages are all a client needs (protoc's --python_out, no gRPC plugin)
        should_rate_limit = channel.unary_unary(METHOD, request_serializer=rls_pb2.RateLimitRequest.SerializeToString,
                                                response_deserializer=rls_pb2.RateLimitResponse.FromString)
        try:
            response = should_rate_limit(request, timeout=5)
        except grpc.RpcError as e:
            print("cannot ask %s: %s %s (is 'sluice serve' running? its gRPC address is --grpc)" % (
                target, e.code().name, e.details()), file=sys.stderr)
            return 2
    codes = rls_pb2.RateLimitResponse.Code
    print(codes.Name(response.overall_code))
    for status in response.statuses:
        limit = status.current_limit
        print("  %s remaining=%d limit=%s reset_in=%ds" % (
            codes.Name(status.code), status.limit_remaining,
            "%d per %s" % (limit.requests_per_unit, rls_pb2.RateLimitResponse.RateLimit.Unit.Name(limit.unit))
            if status.HasField("current_limit") else "none", status.duration_until_reset.seconds))
    return 0 if response.overall_code == codes.OK else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
