// gRPC load client for `sluice serve`: ShouldRateLimit with a fixed number of calls in flight on one channel
// (HTTP/2 multiplexed), async stubs, for a fixed time; prints decisions/s and latency percentiles.
// Run with Java's source launcher against the server's shaded jar (it has grpc-java and the envoy stubs):
//   java -cp server/target/sluice-server-*-all.jar bench/server/GrpcLoad.java 127.0.0.1:8089 64 10 10 [connections]
// arguments: address, calls in flight, measured seconds, warm-up seconds, connections (default 1, as Envoy uses)
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public class GrpcLoad {
    public static void main(String[] args) throws Exception {
        String[] hp = (args.length > 0 ? args[0] : "127.0.0.1:8089").split(":");
        int inFlight = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int warmupSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        int channels = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        ManagedChannel[] chs = new ManagedChannel[channels];
        RateLimitServiceGrpc.RateLimitServiceStub[] stubs = new RateLimitServiceGrpc.RateLimitServiceStub[channels];
        for (int c = 0; c < channels; c++) {
            chs[c] = NettyChannelBuilder.forAddress(hp[0], Integer.parseInt(hp[1])).usePlaintext()
                    .withOption(io.grpc.netty.shaded.io.netty.channel.ChannelOption.TCP_NODELAY, true)
                    .directExecutor().build();
            stubs[c] = RateLimitServiceGrpc.newStub(chs[c]);
        }
        RateLimitRequest[] requests = new RateLimitRequest[1000];
        for (int u = 0; u < requests.length; u++) {
            requests[u] = RateLimitRequest.newBuilder().setDomain("bench").addDescriptors(RateLimitDescriptor.newBuilder()
                    .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue("u" + (u + 1)))).build();
        }
        run(stubs, requests, inFlight, warmupSeconds, false);
        run(stubs, requests, inFlight, seconds, true);
        for (ManagedChannel ch : chs) {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static void run(RateLimitServiceGrpc.RateLimitServiceStub[] stubs, RateLimitRequest[] requests, int inFlight,
                    int seconds, boolean report) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        long[] lat = new long[Math.max(1_000_000, seconds * 400_000)];
        AtomicInteger n = new AtomicInteger();
        AtomicLong errors = new AtomicLong();
        CountDownLatch done = new CountDownLatch(inFlight);
        long start = System.nanoTime();
        for (int c = 0; c < inFlight; c++) {
            RateLimitServiceGrpc.RateLimitServiceStub stub = stubs[c % stubs.length];
            new Object() {
                int next = 0;

                void call() {
                    long t0 = System.nanoTime();
                    if (t0 >= end) {
                        done.countDown();
                        return;
                    }
                    stub.withDeadlineAfter(10, TimeUnit.SECONDS).shouldRateLimit(requests[(next++) % requests.length],
                            new StreamObserver<RateLimitResponse>() {
                        public void onNext(RateLimitResponse r) {
                        }

                        public void onError(Throwable t) {
                            if (errors.incrementAndGet() == 1) {
                                System.err.println("GrpcLoad: " + t);
                            }
                            done.countDown(); // this caller stops: a failing server must not spin the client
                        }

                        public void onCompleted() {
                            int i = n.getAndIncrement();
                            if (i < lat.length) {
                                lat[i] = System.nanoTime() - t0;
                            }
                            call();
                        }
                    });
                }
            }.call();
        }
        done.await();
        if (errors.get() > 0 && n.get() == 0) {
            System.err.println("GrpcLoad: every call failed; is the server at the given address?");
            System.exit(1);
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (!report) {
            return;
        }
        int count = Math.min(n.get(), lat.length);
        long[] l = Arrays.copyOf(lat, count);
        Arrays.sort(l);
        System.out.printf("grpc ShouldRateLimit: %d calls in flight on %d connection(s), %.1f s: %.0f decisions/s, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, errors %d%n",
                inFlight, stubs.length, elapsed, count / elapsed, l[count / 2] / 1e6, l[(int) (count * 0.99)] / 1e6,
                l[(int) (count * 0.999)] / 1e6, errors.get());
    }
}
