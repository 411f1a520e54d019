package dev.sluice.spring;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Spring Boot application started over real HTTP in a class loader of its own, whose class path is this test's
 * less the jars named: "without Micrometer" or "without the servlet API" then means the classes are not there at all,
 * as in an application that never had them, not hidden from a condition while the JVM can still link them. The
 * loader's parent is the platform loader, so nothing of the test's own class path leaks in; it records every class
 * it defines, so a test can say which of Sluice's classes the application loaded.
 *
 * <p>Shared with the gateway module's tests through this module's test-jar.
 */
public final class IsolatedApp implements AutoCloseable {
    /** Micrometer's meters and Spring Boot Actuator (micrometer-observation and -commons stay: Spring uses them). */
    public static final List<String> ACTUATOR_AND_MICROMETER = List.of(
            "micrometer-core-",
            "micrometer-jakarta9-",
            "micrometer-registry-",
            "spring-boot-actuator-",
            "spring-boot-starter-actuator-",
            "HdrHistogram-",
            "LatencyUtils-");
    /** The servlet API and everything built on it: a WebFlux application on Netty has none of it. */
    public static final List<String> SERVLET = List.of(
            "jakarta.servlet-api-",
            "tomcat-embed-core-",
            "tomcat-embed-websocket-",
            "spring-webmvc-",
            "spring-boot-starter-tomcat-",
            "spring-boot-starter-web-");

    private static final String TOMCAT_URL_FACTORY = "org.apache.catalina.webresources.TomcatURLStreamHandlerFactory";

    private final Loader loader;
    /** The application's ConfigurableApplicationContext: a Closeable, a JDK type and so the same in any loader. */
    private final Closeable context;

    private final int port;

    private IsolatedApp(Loader loader, Closeable context, int port) {
        this.loader = loader;
        this.context = context;
        this.port = port;
    }

    /**
     * Starts {@code applicationClass} with {@code args} (Spring Boot's command line, e.g. {@code --sluice.x=y}) on a
     * random port of 127.0.0.1, in a loader without the jars whose file names start with any of {@code excluded}.
     *
     * @throws Exception what the application's start threw (the first cause, as {@code SpringApplication.run}
     *                   threw it)
     */
    public static IsolatedApp start(String applicationClass, List<String> excluded, String... args) throws Exception {
        Loader loader = new Loader(classPath(excluded));
        List<String> all = new ArrayList<>(List.of(
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--spring.main.banner-mode=off",
                "--spring.main.register-shutdown-hook=false"));
        all.addAll(List.of(args));
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            if (canLoad(loader, TOMCAT_URL_FACTORY)) {
                // Tomcat sets the JVM's one URL stream handler factory when it starts: a second Tomcat, in another
                // loader, would fail with "factory already defined". Embedded, it needs none
                loader.loadClass(TOMCAT_URL_FACTORY).getMethod("disable").invoke(null);
            }
            Class<?> app = loader.loadClass(applicationClass);
            Method run = loader.loadClass("org.springframework.boot.SpringApplication")
                    .getMethod("run", Class.class, String[].class);
            Object context = run.invoke(null, app, all.toArray(String[]::new));
            Object environment = loader.loadClass("org.springframework.context.ConfigurableApplicationContext")
                    .getMethod("getEnvironment")
                    .invoke(context);
            String port = (String) loader.loadClass("org.springframework.core.env.PropertyResolver")
                    .getMethod("getProperty", String.class)
                    .invoke(environment, "local.server.port");
            return new IsolatedApp(loader, (Closeable) context, Integer.parseInt(port));
        } catch (InvocationTargetException e) {
            loader.close();
            throw e.getCause() instanceof Exception c ? c : e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** The port the application listens on, on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** Whether {@code className} can be loaded where the application runs. */
    public boolean canLoad(String className) {
        return canLoad(loader, className);
    }

    /** The names of the classes defined for the application so far that start with {@code prefix}, sorted. */
    public Set<String> loaded(String prefix) {
        Set<String> names = new TreeSet<>();
        for (String n : loader.defined) {
            if (n.startsWith(prefix)) {
                names.add(n);
            }
        }
        return names;
    }

    /**
     * The classes defined for the application so far whose names start with {@code prefix} and whose class files
     * name {@code reference} (a class or package in internal form, such as {@code jakarta/servlet/}): what the
     * application loaded that refers to it, whether or not the reference was ever followed.
     */
    public Set<String> loadedNaming(String prefix, String reference) {
        byte[] needle = reference.getBytes(StandardCharsets.UTF_8);
        Set<String> naming = new TreeSet<>();
        for (String name : loaded(prefix)) {
            try (InputStream in = loader.getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (contains(in.readAllBytes(), needle)) {
                    naming.add(name);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return naming;
    }

    private static boolean contains(byte[] bytes, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= bytes.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (bytes[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** Whether {@code className} would load in an application started without the jars {@code excluded}. */
    public static boolean loadableWithout(List<String> excluded, String className) {
        try (Loader l = new Loader(classPath(excluded))) {
            return canLoad(l, className);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            context.close();
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
            loader.close();
        }
    }

    private static boolean canLoad(ClassLoader loader, String className) {
        try {
            Class.forName(className, false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** This JVM's class path (Surefire sets java.class.path to the test class path) less the excluded jars. */
    private static URL[] classPath(List<String> excluded) {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator, -1)) {
            if (entry.isEmpty()) {
                continue;
            }
            String file = Path.of(entry).getFileName().toString();
            if (excluded.stream().noneMatch(file::startsWith)) {
                try {
                    urls.add(Path.of(entry).toUri().toURL());
                } catch (MalformedURLException e) {
                    throw new IllegalStateException(entry, e);
                }
            }
        }
        return urls.toArray(URL[]::new);
    }

    /** Loads only from its own URLs (the platform loader below it), and remembers what it defined. */
    private static final class Loader extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        final Set<String> defined = ConcurrentHashMap.newKeySet();

        Loader(URL[] urls) {
            super("isolated-app", urls, ClassLoader.getPlatformClassLoader());
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            Class<?> c = super.findClass(name);
            defined.add(name);
            return c;
        }
    }
}
