package dev.sluice.dist;

import dev.sluice.redis.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A container's command line (an image's, a Deployment's), made to run on this host as the container would run it:
 * each path under a mount ({@code /opt/sluice}, a volume) becomes the host directory that holds what the container
 * would see there, each {@code 0.0.0.0:PORT} becomes 127.0.0.1 on a free port (tests bind loopback), and whole
 * arguments may be replaced (a store's address by the test's). Every address must be one of the ports the container
 * declares: a command that listens where nothing routes to fails here.
 */
final class ContainerCommand {
    private static final Pattern ALL_INTERFACES = Pattern.compile("0\\.0\\.0\\.0:(\\d+)");

    private final Map<String, Path> mounts =
            new TreeMap<>(Comparator.comparing(String::length).reversed().thenComparing(Comparator.naturalOrder()));
    private final Map<String, String> replacements = new LinkedHashMap<>();
    private final Set<Integer> declaredPorts;
    private final Map<Integer, Integer> ports = new LinkedHashMap<>();

    ContainerCommand(Set<Integer> declaredPorts) {
        this.declaredPorts = declaredPorts;
    }

    /** What the container sees at {@code containerPath} is {@code hostPath} here. */
    ContainerCommand mount(String containerPath, Path hostPath) {
        mounts.put(containerPath, hostPath);
        return this;
    }

    /** The argument {@code argument}, whole, is {@code replacement} here. */
    ContainerCommand replace(String argument, String replacement) {
        replacements.put(argument, replacement);
        return this;
    }

    /** The command, to run here. */
    List<String> localize(List<String> command) {
        List<String> local = new ArrayList<>();
        for (String arg : command) {
            local.add(localize(arg));
        }
        return local;
    }

    private String localize(String arg) {
        if (replacements.containsKey(arg)) {
            return replacements.get(arg);
        }
        Matcher m = ALL_INTERFACES.matcher(arg);
        if (m.matches()) {
            return "127.0.0.1:" + port(Integer.parseInt(m.group(1)));
        }
        for (Map.Entry<String, Path> mount : mounts.entrySet()) {
            String at = mount.getKey();
            if (arg.equals(at)) {
                return mount.getValue().toString();
            }
            if (arg.startsWith(at + "/")) {
                return mount.getValue().resolve(arg.substring(at.length() + 1)).toString();
            }
        }
        return arg;
    }

    /** The host port that stands for the container's {@code containerPort}, one of those it declares. */
    int port(int containerPort) {
        if (!declaredPorts.contains(containerPort)) {
            throw new AssertionError("the command listens on port " + containerPort
                    + ", not one the container declares: " + declaredPorts);
        }
        return ports.computeIfAbsent(containerPort, p -> {
            try {
                return RedisServer.freePort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** The port of the address that follows {@code option} ({@code --http HOST:PORT}) in {@code command}. */
    static int portOf(List<String> command, String option) {
        int i = command.indexOf(option);
        if (i < 0 || i + 1 >= command.size()) {
            throw new AssertionError("no " + option + " HOST:PORT in " + command);
        }
        String address = command.get(i + 1);
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    /** The container ports the command listens on (all interfaces), in the order it names them. */
    Set<Integer> listening() {
        return ports.keySet();
    }
}
