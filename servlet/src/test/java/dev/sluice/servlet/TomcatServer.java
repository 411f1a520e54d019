package dev.sluice.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.jspecify.annotations.Nullable;

/**
 * A real embedded Tomcat on 127.0.0.1 and a free port: an "authentication" filter (the principal from header
 * {@code X-Test-User}, the tier attribute from {@code X-Test-Tier}, as an application's security would set them),
 * then the filter under test (swappable between tests), then a servlet answering 200 "ok" (or, when a test
 * {@link #serve serves} its own, that one). Servlet and filters support asynchronous requests.
 */
final class TomcatServer implements AutoCloseable {
    private final Tomcat tomcat = new Tomcat();
    private final Path baseDir;
    private volatile Filter filter = (req, res, chain) -> chain.doFilter(req, res);
    private volatile @Nullable Handler handler;
    final int port;

    TomcatServer() throws IOException, LifecycleException {
        baseDir = Files.createTempDirectory("sluice-tomcat");
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        tomcat.setConnector(connector);
        Context ctx = tomcat.addContext("", null);
        Tomcat.addServlet(ctx, "ok", new HttpServlet() {
                    private static final long serialVersionUID = 1L;

                    @Override
                    protected void service(HttpServletRequest req, HttpServletResponse resp)
                            throws IOException, ServletException {
                        Handler h = handler;
                        if (h != null) {
                            h.handle(req, resp);
                            return;
                        }
                        resp.setContentType("text/plain");
                        resp.getWriter().write("ok");
                    }
                })
                .setAsyncSupported(true);
        ctx.addServletMappingDecoded("/*", "ok");
        addFilter(ctx, "auth", TomcatServer::authenticate);
        addFilter(ctx, "sluice", (req, res, chain) -> filter.doFilter(req, res, chain));
        tomcat.start();
        port = connector.getLocalPort();
    }

    void use(Filter f) {
        this.filter = f;
    }

    /** What the servlet does instead of answering "ok"; null: "ok" again. */
    void serve(@Nullable Handler h) {
        this.handler = h;
    }

    /** A test's servlet. */
    @FunctionalInterface
    interface Handler {
        void handle(HttpServletRequest req, HttpServletResponse resp) throws IOException, ServletException;
    }

    String url(String path) {
        return "http://127.0.0.1:" + port + path;
    }

    private static void addFilter(Context ctx, String name, Filter f) {
        FilterDef def = new FilterDef();
        def.setFilterName(name);
        def.setFilter(f);
        def.setAsyncSupported("true");
        ctx.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName(name);
        map.addURLPatternDecoded("/*");
        ctx.addFilterMap(map);
    }

    private static void authenticate(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest http = (HttpServletRequest) req;
        String tier = http.getHeader("X-Test-Tier");
        if (tier != null) {
            http.setAttribute(RateLimitFilter.DEFAULT_TIER_ATTRIBUTE, tier);
        }
        String user = http.getHeader("X-Test-User");
        if (user == null) {
            chain.doFilter(req, res);
            return;
        }
        Principal principal = () -> user;
        chain.doFilter(
                new HttpServletRequestWrapper(http) {
                    @Override
                    public Principal getUserPrincipal() {
                        return principal;
                    }
                },
                res);
    }

    @Override
    public void close() throws LifecycleException, IOException {
        tomcat.stop();
        tomcat.destroy();
        try (var files = Files.walk(baseDir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }
}
