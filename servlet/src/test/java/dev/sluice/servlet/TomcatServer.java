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

/**
 * A real embedded Tomcat on 127.0.0.1 and a free port: an "authentication" filter (the principal from header
 * {@code X-Test-User}, the tier attribute from {@code X-Test-Tier}, as an application's security would set them),
 * then the filter under test (swappable between tests), then a servlet answering 200 "ok".
 */
final class TomcatServer implements AutoCloseable {
    private final Tomcat tomcat = new Tomcat();
    private final Path baseDir;
    private volatile Filter filter = (req, res, chain) -> chain.doFilter(req, res);
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
            protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                resp.setContentType("text/plain");
                resp.getWriter().write("ok");
            }
        });
        ctx.addServletMappingDecoded("/*", "ok");
        addFilter(ctx, "auth", TomcatServer::authenticate);
        addFilter(ctx, "sluice", (req, res, chain) -> filter.doFilter(req, res, chain));
        tomcat.start();
        port = connector.getLocalPort();
    }

    void use(Filter f) {
        this.filter = f;
    }

    String url(String path) {
        return "http://127.0.0.1:" + port + path;
    }

    private static void addFilter(Context ctx, String name, Filter f) {
        FilterDef def = new FilterDef();
        def.setFilterName(name);
        def.setFilter(f);
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
