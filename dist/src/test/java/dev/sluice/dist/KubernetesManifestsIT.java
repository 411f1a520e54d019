package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisServer;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * {@code dist/kubernetes/sluice.yaml} against what the service really serves: the Deployment's command line (the
 * image's entrypoint from the Dockerfile, then its {@code args}, then the flags its environment of envoy's variables
 * stands for: {@link EnvoyVariables}, which also refuses a variable the service does not read) run on this host from
 * the unpacked tarball, with that environment, its
 * ConfigMap laid out as the kubelet mounts one (the files behind {@code ..data}, a timestamped directory), its
 * {@code redis://} Service answered by a real Redis. Every probe's path answers 200 on the port it names, the Service's
 * ports reach HTTP and gRPC, the ConfigMap's rules decide; and the probes stay 200 while Redis is down, when envoy's
 * {@code /healthcheck} fails (the reason the probes are not on it).
 */
class KubernetesManifestsIT {
    private static final String SERVICE = "ratelimit";

    @TempDir
    Path dir;

    private final List<Map<String, Object>> docs = read(Distribution.module().resolve("kubernetes/sluice.yaml"));
    private final Dockerfile image = Dockerfile.read(Distribution.module().resolve("image/Dockerfile"));

    @Test
    void namesLabelsAndPortsHoldTogetherWithTheImage() {
        Map<String, Object> deployment = find("Deployment", SERVICE);
        Map<String, Object> pod = map(deployment, "spec", "template");
        Map<String, Object> container = onlyContainer(deployment);
        assertThat(container.get("image")).isEqualTo("sluice:" + Distribution.version());
        assertThat(container).as("the image's entrypoint runs").doesNotContainKey("command");
        assertThat(labels(pod)).containsAllEntriesOf(map(deployment, "spec", "selector", "matchLabels"));
        assertThat(labels(pod)).containsAllEntriesOf(map(find("Service", SERVICE), "spec", "selector"));

        assertThat(containerPorts(container).values())
                .as("the ports the image exposes")
                .containsExactlyInAnyOrderElementsOf(image.exposed());
        for (Map<String, Object> port : list(find("Service", SERVICE), "spec", "ports")) {
            assertThat(containerPort(container, port.get("targetPort")))
                    .as("%s", port)
                    .isPositive();
        }
        assertThat(map(pod, "spec", "securityContext").get("runAsUser").toString())
                .as("the image's user")
                .isEqualTo(image.last("USER").split(":", -1)[0]);

        // a read-only root: the JVM and Netty still get their scratch space
        assertThat(map(container, "securityContext").get("readOnlyRootFilesystem"))
                .isEqualTo(true);
        String tmpVolume = mountedVolume(container, "/tmp");
        assertThat(volume(pod, tmpVolume)).containsKey("emptyDir");
    }

    @Test
    void theDeploymentServesAsItsManifestSaysAndItsProbesStayUpWhileRedisIsDown() throws Exception {
        Map<String, Object> deployment = find("Deployment", SERVICE);
        Map<String, Object> pod = map(deployment, "spec", "template");
        Map<String, Object> container = onlyContainer(deployment);
        List<String> command = new ArrayList<>(image.execForm("ENTRYPOINT"));
        command.addAll(strings(container.get("args")));
        assertThat(command).as("serve, configured by its environment").endsWith("serve");
        command.addAll(EnvoyVariables.flags(environment(container)));

        // the ConfigMap's files, where the Deployment mounts them, as the kubelet lays them out
        String rulesAt = command.get(command.indexOf("--config") + 1);
        Map<String, Object> rulesVolume = volume(pod, mountedVolume(container, rulesAt));
        Map<String, Object> configMap =
                find("ConfigMap", (String) map(rulesVolume, "configMap").get("name"));
        Path rules = asTheKubeletMountsIt(map(configMap, "data"));

        try (RedisServer redis = RedisServer.start()) {
            String store = command.get(command.indexOf("--store") + 1);
            assertThat(store).as("REDIS_URL").isEqualTo("redis://redis:" + servicePortOf("redis"));
            ContainerCommand here = new ContainerCommand(
                            new HashSet<>(containerPorts(container).values()))
                    .mount(DockerfileIT.INSTALLED, Distribution.home())
                    .mount(rulesAt, rules)
                    .replace(store, redis.uri());
            List<String> local = here.localize(command);
            Map<String, Object> startup = map(container, "startupProbe", "httpGet");
            int startupPort = here.port(containerPort(container, startup.get("port")));
            try (Served s = Served.start(dir, Distribution.noJdk(environment(container)), local, startupPort, (String)
                    startup.get("path"))) {
                Map<String, Integer> probed = probes(container, here);
                assertThat(probed.values()).as("%s", probed).containsOnly(200);

                for (Map<String, Object> port : list(find("Service", SERVICE), "spec", "ports")) {
                    int servicePort = here.port(containerPort(container, port.get("targetPort")));
                    if (port.get("name").toString().startsWith("grpc")) {
                        // the ConfigMap's rules: /productpage once a minute
                        assertThat(Served.shouldRateLimit(servicePort, "ratelimit", "PATH", "/productpage")
                                        .getOverallCode())
                                .isEqualTo(RateLimitResponse.Code.OK);
                        assertThat(Served.shouldRateLimit(servicePort, "ratelimit", "PATH", "/productpage")
                                        .getOverallCode())
                                .isEqualTo(RateLimitResponse.Code.OVER_LIMIT);
                    } else {
                        assertThat(probe(servicePort, "/healthz"))
                                .as("%s", port)
                                .isEqualTo(200);
                    }
                }

                redis.kill();
                Eventually.await(
                        Distribution.GUARD,
                        "envoy's /healthcheck failing with Redis down",
                        () -> s.get("/healthcheck").statusCode() == 500);
                assertThat(s.get("/readyz").body()).contains("\"store_healthy\":false");
                Map<String, Integer> whileDown = probes(container, here);
                assertThat(whileDown.values())
                        .as("the probes with Redis down, the failure policy answering: %s", whileDown)
                        .containsOnly(200);
                assertThat(s.stop()).isEqualTo(143);
            }
        }
    }

    @Test
    void theEnvironmentNamesOnlyVariablesTheServiceReadsAndItsPortsAreTheContainers() {
        Map<String, Object> container = onlyContainer(find("Deployment", SERVICE));
        Map<String, String> env = environment(container);
        assertThat(env).containsKeys("PORT", "GRPC_PORT", "RUNTIME_ROOT", "REDIS_URL");
        assertThat(EnvoyVariables.NAMES).containsAll(env.keySet());
        assertThat(Integer.parseInt(env.get("PORT"))).isEqualTo(containerPort(container, "http"));
        assertThat(Integer.parseInt(env.get("GRPC_PORT"))).isEqualTo(containerPort(container, "grpc"));
        assertThat(env.get("REDIS_URL")).isEqualTo("redis:" + servicePortOf("redis"));
    }

    /** The container's environment: envoy's variables, by name (each a plain value, none from a secret). */
    private static Map<String, String> environment(Map<String, Object> container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (Map<String, Object> e : list(container, "env")) {
            assertThat(e.get("value")).as("%s", e).isInstanceOf(String.class);
            env.put((String) e.get("name"), (String) e.get("value"));
        }
        return env;
    }

    /** The status each probe of the container gets, by the probe's name. */
    private static Map<String, Integer> probes(Map<String, Object> container, ContainerCommand here)
            throws IOException, InterruptedException {
        Map<String, Integer> statuses = new LinkedHashMap<>();
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            Map<String, Object> get = map(container, probe, "httpGet");
            int port = here.port(containerPort(container, get.get("port")));
            statuses.put(probe + " " + get.get("path"), probe(port, (String) get.get("path")));
        }
        assertThat(statuses).hasSize(3);
        return statuses;
    }

    private static int probe(int port, String path) throws IOException, InterruptedException {
        return Served.get(port, path).statusCode();
    }

    /** {@code data}'s files in a directory as the kubelet mounts a ConfigMap: links to {@code ..data/NAME}. */
    private Path asTheKubeletMountsIt(Map<String, Object> data) throws IOException {
        Path mount = Files.createDirectories(dir.resolve("configmap"));
        Path version = Files.createDirectories(mount.resolve("..2026_01_01_00_00_00.000000001"));
        Files.createSymbolicLink(mount.resolve("..data"), version.getFileName());
        for (Map.Entry<String, Object> file : data.entrySet()) {
            Files.writeString(version.resolve(file.getKey()), (String) file.getValue(), StandardCharsets.UTF_8);
            Files.createSymbolicLink(mount.resolve(file.getKey()), Path.of("..data", file.getKey()));
        }
        return mount;
    }

    private int servicePortOf(String service) {
        Map<String, Object> port =
                list(find("Service", service), "spec", "ports").get(0);
        Object target = port.getOrDefault("targetPort", port.get("port"));
        Map<String, Object> backend = onlyContainer(find("Deployment", service));
        assertThat(containerPort(backend, target))
                .as("the %s Service reaches its Deployment", service)
                .isPositive();
        return (Integer) port.get("port");
    }

    private Map<String, Object> find(String kind, String name) {
        for (Map<String, Object> doc : docs) {
            if (kind.equals(doc.get("kind")) && name.equals(map(doc, "metadata").get("name"))) {
                return doc;
            }
        }
        throw new AssertionError("no " + kind + " " + name + " in the manifests");
    }

    private static Map<String, Object> onlyContainer(Map<String, Object> deployment) {
        List<Map<String, Object>> containers = list(deployment, "spec", "template", "spec", "containers");
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    private static Map<String, Object> labels(Map<String, Object> pod) {
        return map(pod, "metadata", "labels");
    }

    /** The container's ports, by name. */
    private static Map<String, Integer> containerPorts(Map<String, Object> container) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (Map<String, Object> p : list(container, "ports")) {
            ports.put(String.valueOf(p.get("name")), (Integer) p.get("containerPort"));
        }
        return ports;
    }

    /** A port as a probe or a Service names it, by name or number: the container port, or an assertion error. */
    private static int containerPort(Map<String, Object> container, Object port) {
        Map<String, Integer> ports = containerPorts(container);
        Integer number = port instanceof Integer n ? n : ports.get(String.valueOf(port));
        assertThat(ports.values()).as("a port of the container: %s", port).contains(number);
        return number;
    }

    private static String mountedVolume(Map<String, Object> container, String mountPath) {
        for (Map<String, Object> m : list(container, "volumeMounts")) {
            if (mountPath.equals(m.get("mountPath"))) {
                return (String) m.get("name");
            }
        }
        throw new AssertionError("nothing is mounted at " + mountPath);
    }

    private static Map<String, Object> volume(Map<String, Object> pod, String name) {
        for (Map<String, Object> v : list(pod, "spec", "volumes")) {
            if (name.equals(v.get("name"))) {
                return v;
            }
        }
        throw new AssertionError("no volume " + name);
    }

    private static List<Map<String, Object>> read(Path file) {
        List<Map<String, Object>> docs = new ArrayList<>();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(r)) {
                docs.add(map(doc));
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return docs;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node, String... path) {
        Object n = node;
        for (String key : path) {
            n = ((Map<String, Object>) n).get(key);
            if (n == null) {
                throw new AssertionError("no " + key + " in " + String.join(".", path));
            }
        }
        return (Map<String, Object>) n;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> node, String... path) {
        Map<String, Object> parent = map(node, Arrays.copyOf(path, path.length - 1));
        Object n = parent.get(path[path.length - 1]);
        if (n == null) {
            throw new AssertionError("no " + String.join(".", path));
        }
        return (List<Map<String, Object>>) n;
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object node) {
        return (List<String>) node;
    }
}
