// Writes one gRPC-framed ShouldRateLimit request (domain "bench"; descriptors user=u1, and with 3 also ip=10.0.0.1
// and org=o1) for h2load -d, built with the envoy stubs of the server's shaded jar, not by hand:
//   java -cp server/target/sluice-server-*-all.jar bench/server/RlsFrame.java 3 /tmp/rls3.bin
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

public class RlsFrame {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        String[][] entries = {{"user", "u1"}, {"ip", "10.0.0.1"}, {"org", "o1"}};
        RateLimitRequest.Builder r = RateLimitRequest.newBuilder().setDomain("bench");
        for (int i = 0; i < n; i++) {
            r.addDescriptors(RateLimitDescriptor.newBuilder()
                    .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(entries[i][0]).setValue(entries[i][1])));
        }
        byte[] message = r.build().toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0); // not compressed
        out.write(ByteBuffer.allocate(4).putInt(message.length).array());
        out.write(message);
        Files.write(Path.of(args[1]), out.toByteArray());
    }
}
