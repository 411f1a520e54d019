package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.tck.ForwardingRateLimiter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser: headless Chromium, driven by Selenium through the machine's own chromedriver,
 * against a real {@link TestServer}, with traffic through the real HTTP API. Nothing is read from pixels: the page
 * keeps each chart's points in data attributes and a sentence in its ARIA label.
 *
 * <p>Runs when {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver} exist (Debian's {@code chromium} and
 * {@code chromium-driver}; {@code .ci/run} installs them when it can; other paths with {@code -Dsluice.chromium=…}
 * and {@code -Dsluice.chromedriver=…}), and is skipped with the reason otherwise. The driver's path is given to
 * Selenium, so Selenium Manager never runs (it would try to download a browser).
 */
class DashboardBrowserTest {
    static final Path CHROMIUM = Path.of(System.getProperty("sluice.chromium", "/usr/bin/chromium"));
    static final Path CHROMEDRIVER = Path.of(System.getProperty("sluice.chromedriver", "/usr/bin/chromedriver"));
    static final Duration WAIT = Duration.ofSeconds(15);

    Path profile;
    WebDriver browser;

    /** Why the browser cannot run here, or null. */
    static String missing;

    @BeforeAll
    static void browserInstalled() {
        missing = !Files.isExecutable(CHROMIUM)
                ? CHROMIUM + " is not there"
                : !Files.isExecutable(CHROMEDRIVER) ? CHROMEDRIVER + " is not there" : null;
        if (missing != null) {
            System.err.println("DashboardBrowserTest skipped: " + missing
                    + " (apt-get install -y chromium chromium-driver to run it)");
        }
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
    }

    @BeforeEach
    void openBrowser() throws IOException {
        // per test, so that each shows as skipped with the reason (an assumption in @BeforeAll shows as nothing run)
        Assumptions.assumeTrue(
                missing == null,
                () -> "DashboardBrowserTest skipped: " + missing
                        + " (apt-get install -y chromium chromium-driver to run it)");
        profile = Files.createTempDirectory("sluice-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // headless as root in a container, and nothing that reaches out of the machine
        options.addArguments(
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--window-size=1400,1000",
                "--user-data-dir=" + profile);
        // a chromedriver per browser (quit() stops it), named here so that Selenium Manager is never asked
        ChromeDriverService driver = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        browser = new ChromeDriver(driver, options);
    }

    @AfterEach
    void closeBrowser() throws IOException {
        if (browser != null) {
            browser.quit();
        }
        if (profile != null) {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.deleteIfExists(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
    }

    <T> T await(String what, Function<WebDriver, T> condition) {
        return new WebDriverWait(browser, WAIT).withMessage(what).until(condition);
    }

    int polls() {
        String p = browser.findElement(By.tagName("body")).getAttribute("data-polls");
        return p == null ? 0 : Integer.parseInt(p);
    }

    WebElement ruleRow(String domain, String rule) {
        for (WebElement tr : browser.findElements(By.cssSelector("#rules-body tr"))) {
            if (domain.equals(tr.getAttribute("data-domain")) && rule.equals(tr.getAttribute("data-rule"))) {
                return tr;
            }
        }
        throw new AssertionError("no row for " + domain + " " + rule);
    }

    static List<String> cells(WebElement row) {
        List<String> out = new ArrayList<>();
        row.findElements(By.tagName("td")).forEach(td -> out.add(td.getText()));
        return out;
    }

    static double peak(WebElement canvas, String series) {
        String points = canvas.getAttribute("data-" + series);
        return points == null || points.isEmpty()
                ? 0
                : Arrays.stream(points.split(","))
                        .mapToDouble(Double::parseDouble)
                        .max()
                        .orElse(0);
    }

    /** The top keys table's cells, read in one script: the page rebuilds the table at every poll. */
    @SuppressWarnings("unchecked")
    List<List<String>> topKeys() {
        return (List<List<String>>)
                ((JavascriptExecutor) browser)
                        .executeScript(
                                "return Array.from("
                                        + "document.querySelectorAll('#top-keys-body tr'), tr => Array.from(tr.cells, td => td.textContent))");
    }

    static void times(int n, Runnable r) {
        for (int i = 0; i < n; i++) {
            r.run();
        }
    }

    @Test
    void showsTheRulesLiveRatesTheTopDeniedKeysAndChecksADescriptor() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            browser.get(s.base + "/");
            await("the first poll", b -> polls() >= 1);

            // 1. the rules table
            assertThat(browser.findElements(By.cssSelector("#rules-body tr"))).hasSize(7);
            assertThat(cells(ruleRow("shop", "shop.user")).subList(0, 7))
                    .containsExactly("shop", "shop.user", "per_user", "fixed_window", "3 per minute", "3", "");
            assertThat(cells(ruleRow("shop", "shop.path_/checkout")).subList(3, 7))
                    .containsExactly("token_bucket", "2 per second", "2", "shadow");
            assertThat(cells(ruleRow("shop", "shop.ip_203.0.113.7")).get(4)).isEqualTo("blocked (0 per second)");
            assertThat(cells(ruleRow("shop", "shop.tenant")).get(6)).isEqualTo("quota");
            assertThat(cells(ruleRow("api", "api.report")).subList(3, 6))
                    .containsExactly("sliding_window", "3 per 90s", "3");
            assertThat(cells(ruleRow("api", "api.status")).get(4)).isEqualTo("unlimited");

            // 2. traffic through the real API: 10 admitted and 10 denied on shop.user, one hot key, a hostile one
            String xss = "<script>alert(1)</script><b>bold</b>";
            times(10, () -> s.check("shop", "user=hot")); // 3 admitted, 7 denied
            times(4, () -> s.check("shop", "user=bob")); // 3 admitted, 1 denied
            s.check("shop", "user=carol"); // 1 admitted
            times(5, () -> s.check("shop", "user=" + xss)); // 3 admitted, 2 denied

            await(
                    "shop.user's totals",
                    b -> cells(ruleRow("shop", "shop.user")).subList(10, 12).equals(List.of("10", "10")));
            WebElement chart = ruleRow("shop", "shop.user").findElement(By.cssSelector("canvas"));
            await(
                    "a point of the chart above 0 admitted and denied per second",
                    b -> peak(chart, "admitted") > 0 && peak(chart, "denied") > 0);
            assertThat(chart.getAttribute("aria-label"))
                    .startsWith("shop shop.user: now ")
                    .contains("peak over the last minute");
            WebElement quiet = ruleRow("api", "api.report").findElement(By.cssSelector("canvas"));
            assertThat(peak(quiet, "admitted") + peak(quiet, "denied")).isZero();

            // 3. the top denied keys: the hot one first; the hostile one as text, nothing of it run or parsed
            await(
                    "the hot key first",
                    b -> !topKeys().isEmpty() && topKeys().get(0).get(1).equals("shop|user=hot"));
            assertThat(topKeys())
                    .extracting(row -> row.subList(1, 3))
                    .containsExactly(
                            List.of("shop|user=hot", "7"),
                            List.of("shop|user=" + xss, "2"),
                            List.of("shop|user=bob", "1"));
            assertThat(browser.findElements(By.cssSelector("#top-keys-body script, #top-keys-body b")))
                    .isEmpty();
            assertThat(((JavascriptExecutor) browser)
                            .executeScript("return Array.from(document.querySelectorAll('script'))"
                                    + ".map(s => s.getAttribute('src')).join(' ')"))
                    .as("only the page's own scripts")
                    .isEqualTo("ui/dashboard-tables.js ui/dashboard.js");

            // 4. the store
            assertThat(browser.findElement(By.id("store-name")).getText()).isEqualTo("memory");
            assertThat(browser.findElement(By.id("store-healthy")).getText()).isEqualTo("yes");

            // 5. the form: hits 0 asks, takes nothing
            browser.findElement(By.id("try-domain")).sendKeys("shop");
            browser.findElement(By.id("try-entries")).sendKeys("user=hot");
            browser.findElement(By.cssSelector("#try-form button")).click();
            await(
                    "the check-only answer",
                    b -> b.findElement(By.id("try-status")).getText().startsWith("429"));
            assertThat(browser.findElement(By.id("try-status")).getText()).isEqualTo("429 OVER_LIMIT");
            assertThat(browser.findElement(By.id("try-answer")).getText())
                    .contains("\"outcome\": \"checked\"", "\"hits\": 0", "\"remaining\": 0");
            WebElement entries = browser.findElement(By.id("try-entries"));
            entries.clear();
            entries.sendKeys("user=carol");
            browser.findElement(By.cssSelector("#try-form button")).click();
            await(
                    "carol's answer",
                    b -> b.findElement(By.id("try-status")).getText().startsWith("200"));
            assertThat(browser.findElement(By.id("try-answer")).getText()).contains("\"remaining\": 2");
            int after = polls();
            await("a poll after the checks", b -> polls() > after);
            assertThat(cells(ruleRow("shop", "shop.user")).subList(10, 12))
                    .as("the checks took nothing")
                    .containsExactly("10", "10");
            assertThat(s.check("shop", "user=carol").status()).isEqualTo(200);

            // a minute later the denials have aged out of the top keys; the totals stay
            s.clock().advance(Duration.ofSeconds(60));
            await(
                    "the top keys emptied",
                    b -> topKeys().isEmpty()
                            && b.findElement(By.id("top-empty")).isDisplayed());
        }
    }

    /**
     * At 1280 × 900 nothing scrolls sideways: not the page, and not a section inside it (the rules table once
     * overflowed its section, whose own scroll bar hid the Denied column), with an "other series" row shown too.
     */
    @Test
    void fitsA1280By900WindowWithoutScrollingSideways() {
        try (TestServer s = TestServer.start("dashboard-rules.yaml")) {
            browser.manage().window().setSize(new Dimension(1280, 900));
            browser.get(s.base + "/");
            long width = (Long) script("return window.innerWidth");
            assertThat(width).as("the viewport").isEqualTo(1280L);

            times(4, () -> s.check("shop", "user=hot"));
            // a domain no rules file has, through envoy's API (which answers it OK): the _unknown series
            TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/json"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(TestServer.check("no-such-domain", -1, "user=a")))
                    .build());
            await(
                    "the unknown domain's series",
                    b -> b.findElement(By.id("other-series")).isDisplayed());
            await("its decision, counted as admitted", b -> otherSeries().contains(List.of("_unknown", "none", "1")));
            assertThat(browser.findElement(By.cssSelector("#other-series p")).getText())
                    .contains("domain _unknown", "a domain no rules file defines");

            long viewport = (Long) script("return document.documentElement.clientWidth");
            assertThat((Long) script("return document.documentElement.scrollWidth"))
                    .as("the page")
                    .isLessThanOrEqualTo(viewport);
            @SuppressWarnings("unchecked")
            List<String> overflowing =
                    (List<String>) script("return Array.from(document.querySelectorAll('section, table'))"
                            + ".filter(e => e.offsetParent !== null && (e.scrollWidth > e.clientWidth"
                            + " || e.getBoundingClientRect().right > document.documentElement.clientWidth))"
                            + ".map(e => e.id + ': ' + e.scrollWidth + ' wide in ' + e.clientWidth)");
            assertThat(overflowing)
                    .as("sections and tables wider than their room")
                    .isEmpty();
            await(
                    "the denial counted",
                    b -> cells(ruleRow("shop", "shop.user")).get(11).equals("1"));
            WebElement denied =
                    ruleRow("shop", "shop.user").findElements(By.tagName("td")).get(11);
            assertThat(denied.getRect().getX() + denied.getRect().getWidth())
                    .as("the Denied column, in view")
                    .isLessThanOrEqualTo((int) viewport);
        }
    }

    /** Rows of a table body as their cells' text, read in one script (the page rebuilds these tables each poll). */
    @SuppressWarnings("unchecked")
    List<List<String>> rows(String body) {
        return (List<List<String>>) script("return Array.from(document.querySelectorAll('#" + body
                + " tr'), tr => Array.from(tr.cells, td => td.textContent))");
    }

    @Test
    void showsReservationsSettlesAndSlotSteps() {
        try (TestServer s = TestServer.start("sluice-stream-done.yaml")) {
            browser.get(s.base + "/");
            await("the first poll", b -> polls() >= 1);
            assertThat(browser.findElement(By.id("settles-empty")).isDisplayed())
                    .isTrue();
            assertThat(browser.findElement(By.id("in-flight-empty")).isDisplayed())
                    .isTrue();
            assertThat(browser.findElement(By.id("settles")).isDisplayed()).isFalse();

            StepMetricsHttpTest.knownSequence(s);

            // domain, rule, reserved, denied, settles/s, charged more, gave back, at estimate, not pending, permits
            await(
                    "the settles' totals",
                    b -> rows("settles-body").size() == 1
                            && rows("settles-body")
                                    .get(0)
                                    .subList(5, 11)
                                    .equals(List.of("1", "1", "1", "2", "30", "18")));
            List<String> settles = rows("settles-body").get(0);
            assertThat(settles.subList(0, 4)).containsExactly("metered", "metered.user", "3", "1");
            assertThat(browser.findElement(By.id("settles-empty")).isDisplayed())
                    .isFalse();
            // domain, acquired/s, denied/s, acquired, denied, released, renewed, not held
            await(
                    "the slot steps' totals",
                    b -> rows("in-flight-body").size() == 1
                            && rows("in-flight-body").get(0).subList(3, 8).equals(List.of("3", "1", "1", "1", "2")));
            assertThat(rows("in-flight-body").get(0).get(0)).isEqualTo("gpu");
            await(
                    "a rate of settles and acquisitions above 0, then back to 0 with no traffic",
                    b -> !rows("settles-body").get(0).get(4).equals("—"));
            int after = polls();
            await("two more polls", b -> polls() >= after + 2);
            assertThat(rows("settles-body").get(0).get(4)).isEqualTo("0");
            assertThat(rows("in-flight-body").get(0).subList(1, 3)).containsExactly("0", "0");
        }
    }

    Object script(String js) {
        return ((JavascriptExecutor) browser).executeScript(js);
    }

    /** The other series' rows as [domain, label, admitted total]. */
    @SuppressWarnings("unchecked")
    List<List<String>> otherSeries() {
        return (List<List<String>>) script("return Array.from(document.querySelectorAll('#series-body tr'), "
                + "tr => [tr.cells[0].textContent, tr.cells[1].textContent, tr.cells[5].textContent])");
    }

    @Test
    void asksForTheTokenAndKeepsItForTheTab() {
        try (TestServer s = TestServer.start(x -> x.withToken("s3cret"), "dashboard-rules.yaml")) {
            browser.get(s.base + "/ui");
            await("the token form", b -> b.findElement(By.id("token-section")).isDisplayed());
            assertThat(browser.findElements(By.cssSelector("#rules-body tr"))).isEmpty();
            // no data yet: the page says it waits, and does not claim that nothing was denied
            assertThat(browser.findElement(By.id("top-empty")).isDisplayed()).isFalse();
            assertThat(browser.findElement(By.id("top-waiting")).isDisplayed()).isTrue();

            browser.findElement(By.id("token-input")).sendKeys("wrong");
            browser.findElement(By.cssSelector("#token-form button")).click();
            await("the refusal", b -> b.findElement(By.id("token-error")).isDisplayed());
            assertThat(browser.findElement(By.id("token-error")).getText()).contains("refused");

            browser.findElement(By.id("token-input")).sendKeys("s3cret");
            browser.findElement(By.cssSelector("#token-form button")).click();
            await(
                    "the rules",
                    b -> b.findElements(By.cssSelector("#rules-body tr")).size() == 7);
            assertThat(browser.findElement(By.id("token-section")).isDisplayed())
                    .isFalse();
            assertThat(browser.findElement(By.id("top-empty")).isDisplayed())
                    .as("data: no denials")
                    .isTrue();
            assertThat(browser.findElement(By.id("top-waiting")).isDisplayed()).isFalse();

            browser.navigate().refresh(); // same tab: the token is still in its session storage
            await(
                    "the rules after a reload",
                    b -> b.findElements(By.cssSelector("#rules-body tr")).size() == 7);
            assertThat(browser.findElement(By.id("token-section")).isDisplayed())
                    .isFalse();

            browser.findElement(By.id("try-domain")).sendKeys("shop");
            browser.findElement(By.id("try-entries")).sendKeys("user=ann");
            browser.findElement(By.cssSelector("#try-form button")).click();
            await(
                    "the form's answer, with the token",
                    b -> b.findElement(By.id("try-status")).getText().startsWith("200"));
        }
    }

    /**
     * A remote store that cannot be reached, behind a failure policy and leases ({@code --leases}): the page says so,
     * with the cause and the policy, and counts the policy's decisions.
     */
    @Test
    void showsTheRemoteStoresOutageAndItsPolicyThroughLeases() {
        RateLimiter failSafe = FailSafeRateLimiter.builder(new UnreachableStore())
                .policy(FailurePolicy.FALLBACK_LOCAL)
                .build();
        try (TestServer s = TestServer.startWith(
                LeasedRateLimiter.over(failSafe),
                t -> t.withStore(t.limiter(), "redis+leases", Duration.ofSeconds(1)),
                "dashboard-rules.yaml")) {
            times(3, () -> s.check("shop", "user=ann")); // three unreachable in a row open the circuit
            browser.get(s.base + "/");
            await("the first poll", b -> polls() >= 1);
            assertThat(browser.findElement(By.id("store-name")).getText()).isEqualTo("redis+leases");
            WebElement healthy = browser.findElement(By.id("store-healthy"));
            assertThat(healthy.getText())
                    .isEqualTo("no (unavailable): its circuit is open, fallback_local decides until it answers");
            assertThat(healthy.getAttribute("class")).isEqualTo("error");
            assertThat(browser.findElement(By.id("store-policy")).getText()).isEqualTo("fallback_local");
            WebElement unavailable = browser.findElement(By.cssSelector("#degraded-body tr[data-cause=unavailable]"));
            assertThat(Long.parseLong(cells(unavailable).get(1)))
                    .as("the three checks, and any probe")
                    .isGreaterThanOrEqualTo(3);
        }
    }

    /** A remote store whose connection is refused: every decision fails {@code unavailable}. */
    static final class UnreachableStore extends ForwardingRateLimiter {
        UnreachableStore() {
            super(InMemoryRateLimiter.create());
        }

        private static StoreException refused() {
            return new StoreException(
                    "connection refused (the test's store is unreachable)", null, Degradation.UNAVAILABLE);
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            throw refused();
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return CompletableFuture.failedFuture(refused());
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            throw refused();
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
            return CompletableFuture.failedFuture(refused());
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            throw refused();
        }

        @Override
        public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
            return CompletableFuture.failedFuture(refused());
        }
    }
}
