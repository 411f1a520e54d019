package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * gRPC server reflection, as grpcurl and other reflection clients use it: grpc-java's own reflection client lists the
 * services, resolves the RLS file descriptor with its imports, and then calls ShouldRateLimit with a message built from
 * those descriptors alone (no generated envoy classes), as a client without envoy's .proto files does.
 */
class GrpcReflectionTest {
    static final String RLS = "envoy.service.ratelimit.v3.RateLimitService";

    @Test
    void listsTheServicesAndResolvesTheRlsDescriptorsWellEnoughToCallIt() throws Exception {
        try (SluiceServer server = start(true)) {
            ManagedChannel ch = channel(server);
            try {
                ServerReflectionResponse list = ask(
                        ch,
                        ServerReflectionRequest.newBuilder().setListServices("").build());
                assertThat(list.getListServicesResponse().getServiceList())
                        .extracting(ServiceResponse::getName)
                        .contains(
                                RLS,
                                "grpc.health.v1.Health",
                                "grpc.reflection.v1.ServerReflection",
                                "grpc.reflection.v1alpha.ServerReflection");

                ServerReflectionResponse files = ask(
                        ch,
                        ServerReflectionRequest.newBuilder()
                                .setFileContainingSymbol(RLS)
                                .build());
                FileDescriptor rls = build(
                        files.getFileDescriptorResponse().getFileDescriptorProtoList(),
                        "envoy/service/ratelimit/v3/rls.proto");
                ServiceDescriptor service = rls.findServiceByName("RateLimitService");
                MethodDescriptor method = service.findMethodByName("ShouldRateLimit");
                assertThat(method.getInputType().getFullName())
                        .isEqualTo("envoy.service.ratelimit.v3.RateLimitRequest");

                // the built-in example's "example" domain: user=alice, bursts of 10
                DynamicMessage response = call(ch, method, request(method.getInputType(), "example", "user", "alice"));
                FieldDescriptor overall = response.getDescriptorForType().findFieldByName("overall_code");
                assertThat(((com.google.protobuf.Descriptors.EnumValueDescriptor) response.getField(overall)).getName())
                        .isEqualTo("OK");
                DynamicMessage status = (DynamicMessage) response.getRepeatedField(
                        response.getDescriptorForType().findFieldByName("statuses"), 0);
                assertThat(status.getField(status.getDescriptorForType().findFieldByName("limit_remaining")))
                        .isEqualTo(9);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void switchedOffReflectionIsUnimplemented() throws Exception {
        try (SluiceServer server = start(false)) {
            ManagedChannel ch = channel(server);
            try {
                assertThatThrownBy(() -> ask(
                                ch,
                                ServerReflectionRequest.newBuilder()
                                        .setListServices("")
                                        .build()))
                        .hasCauseInstanceOf(StatusRuntimeException.class)
                        .satisfies(e -> assertThat(
                                        Status.fromThrowable(e.getCause()).getCode())
                                .isEqualTo(Status.Code.UNIMPLEMENTED));
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    static SluiceServer start(boolean reflection) throws Exception {
        return SluiceServer.start(
                SluiceServer.Settings.defaults(InMemoryRateLimiter.create(), RuleSet.builtinExample())
                        .withHttp(null),
                1024,
                0,
                reflection);
    }

    static ManagedChannel channel(SluiceServer server) {
        return NettyChannelBuilder.forAddress("127.0.0.1", server.grpcAddress().getPort())
                .usePlaintext()
                .build();
    }

    /** One request on the bidirectional reflection stream, its one answer. */
    static ServerReflectionResponse ask(ManagedChannel ch, ServerReflectionRequest request) throws Exception {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(ch)
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse r) {
                        answer.complete(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new AssertionError("no answer"));
                    }
                });
        requests.onNext(request);
        try {
            return answer.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new Exception(e.getCause());
        } finally {
            requests.onCompleted();
        }
    }

    /** The named file, built from the protos the server sent (it and every file it imports, in any order). */
    static FileDescriptor build(List<ByteString> protos, String name) throws Exception {
        Map<String, FileDescriptorProto> byName = new HashMap<>();
        for (ByteString b : protos) {
            FileDescriptorProto p = FileDescriptorProto.parseFrom(b);
            byName.put(p.getName(), p);
        }
        assertThat(byName).containsKey(name);
        return build(byName, name, new HashMap<>());
    }

    private static FileDescriptor build(
            Map<String, FileDescriptorProto> byName, String name, Map<String, FileDescriptor> built) throws Exception {
        FileDescriptor done = built.get(name);
        if (done != null) {
            return done;
        }
        FileDescriptorProto proto = byName.get(name);
        assertThat(proto).as("the server sent " + name + ", an import").isNotNull();
        List<FileDescriptor> deps = new ArrayList<>();
        for (String dep : proto.getDependencyList()) {
            deps.add(build(byName, dep, built));
        }
        FileDescriptor file = FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
        built.put(name, file);
        return file;
    }

    static DynamicMessage request(Descriptor type, String domain, String key, String value) {
        Descriptor descriptor = type.findFieldByName("descriptors").getMessageType();
        Descriptor entry = descriptor.findFieldByName("entries").getMessageType();
        DynamicMessage e = DynamicMessage.newBuilder(entry)
                .setField(entry.findFieldByName("key"), key)
                .setField(entry.findFieldByName("value"), value)
                .build();
        DynamicMessage d = DynamicMessage.newBuilder(descriptor)
                .addRepeatedField(descriptor.findFieldByName("entries"), e)
                .build();
        return DynamicMessage.newBuilder(type)
                .setField(type.findFieldByName("domain"), domain)
                .addRepeatedField(type.findFieldByName("descriptors"), d)
                .build();
    }

    static DynamicMessage call(ManagedChannel ch, MethodDescriptor method, DynamicMessage request) {
        io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage> grpcMethod =
                io.grpc.MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
                        .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
                        .setFullMethodName(io.grpc.MethodDescriptor.generateFullMethodName(
                                method.getService().getFullName(), method.getName()))
                        .setRequestMarshaller(
                                ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getInputType())))
                        .setResponseMarshaller(
                                ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getOutputType())))
                        .build();
        return ClientCalls.blockingUnaryCall(
                ch, grpcMethod, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request);
    }
}
