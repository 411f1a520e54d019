package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.servlet.RateLimitListener.Outcome;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.BiFunction;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;

/**
 * The advice around {@link RateLimited} methods: evaluates the key and cost, asks the limiter, and runs the method
 * or fails with {@link RateLimitExceededException}, never both.
 *
 * <p>A method returning a value is decided on the caller's thread ({@link RateLimiter#tryAcquire}: a remote store
 * waits at most its budget). One returning a {@code CompletionStage}, {@code Mono} or {@code Flux} is decided with
 * {@link RateLimiter#tryAcquireAsync} and returns at once: when the decision is already there (the in-memory store,
 * an open circuit) the method runs on the caller's thread as it would without Sluice; when the store answers
 * later, the rest continues on the application's task executor, because a remote store completes its futures on
 * its I/O thread, which must not run application code (a blocking call there stalls every decision).
 *
 * <p>As in the filter, a limiter that throws lets the call run (logged, a few lines a second at most): a rate
 * limiter must not take the application down. Shadow mode runs would-be denials and logs them.
 */
final class RateLimitedInterceptor implements MethodInterceptor {
    private static final System.Logger LOG = System.getLogger(RateLimitedInterceptor.class.getName());
    /** Spring Boot's executor for application work ({@code TaskExecutionAutoConfiguration}). */
    static final String TASK_EXECUTOR = "applicationTaskExecutor";

    private final RateLimitedMethods methods;
    private final boolean shadowMode;
    private final LogThrottle logThrottle = new LogThrottle();
    // set by RateLimitedMethods.setBeanFactory, which Spring calls before it proxies any bean
    private volatile @Nullable BeanFactory beanFactory;
    private volatile @Nullable BeanFactoryResolver beans;
    // looked up on first use: null until then
    private volatile @Nullable RateLimiter limiter;
    private volatile @Nullable DecisionCounts counts;
    private volatile @Nullable Executor executor;

    RateLimitedInterceptor(RateLimitedMethods methods, boolean shadowMode) {
        this.methods = methods;
        this.shadowMode = shadowMode;
    }

    void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        this.beans = new BeanFactoryResolver(beanFactory);
    }

    private BeanFactory beanFactory() {
        return Objects.requireNonNull(beanFactory, "setBeanFactory was not called: the interceptor has no beans");
    }

    /** The application's limiter, looked up once (at startup when a bean has annotated methods). */
    RateLimiter limiter() {
        RateLimiter l = limiter;
        if (l == null) {
            l = beanFactory().getBean(RateLimiter.class);
            limiter = l;
        }
        return l;
    }

    /** Where calls are counted: the application's {@link DecisionCounts}, looked up once. */
    private DecisionCounts counts() {
        DecisionCounts c = counts;
        if (c == null) {
            c = beanFactory().getBeanProvider(DecisionCounts.class).getIfAvailable(DecisionCounts::new);
            counts = c;
        }
        return c;
    }

    private Executor executor() {
        Executor e = executor;
        if (e == null) {
            BeanFactory f = beanFactory();
            e = f.containsBean(TASK_EXECUTOR) && f.isTypeMatch(TASK_EXECUTOR, Executor.class)
                    ? f.getBean(TASK_EXECUTOR, Executor.class)
                    : ForkJoinPool.commonPool();
            executor = e;
        }
        return e;
    }

    /** One call: its method, the caller's key, the store key and the cost. */
    record Call(RateLimitedMethod method, String key, String storeKey, long cost) {}

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        RateLimitedMethod m = methods.find(
                invocation.getMethod(),
                target == null ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(target));
        if (m == null) {
            return invocation.proceed();
        }
        Call call;
        try {
            MethodBasedEvaluationContext context = m.context(invocation.getArguments(), beans);
            String key = m.key(context);
            long cost;
            try {
                cost = m.cost(context);
            } catch (IllegalArgumentException e) {
                counts().call(m, Outcome.BAD_COST, null);
                throw e;
            }
            call = new Call(m, key, m.storeKey(key), cost);
        } catch (IllegalArgumentException e) {
            return switch (m.returns) {
                case COMPLETION_STAGE -> CompletableFuture.failedFuture(e);
                case MONO, FLUX -> ReactorCalls.error(m.returns, e);
                case VALUE -> throw e;
            };
        }
        if (call.cost() == 0) {
            return invocation.proceed(); // spends nothing, so nothing to ask
        }
        return switch (m.returns) {
            case COMPLETION_STAGE -> stage(call, invocation);
            case MONO, FLUX ->
                ReactorCalls.decideOnSubscribe(
                        this, call, invocation instanceof ProxyMethodInvocation p ? p.invocableClone() : invocation);
            case VALUE -> {
                RateLimitExceededException denied = verdict(call, decide(call));
                if (denied != null) {
                    throw denied;
                }
                yield invocation.proceed();
            }
        };
    }

    private Object stage(Call call, MethodInvocation invocation) throws Throwable {
        CompletableFuture<Decision> decided = decideAsync(call);
        if (decided.isDone()) {
            RateLimitExceededException denied = verdict(call, decided.join());
            return denied != null ? CompletableFuture.failedFuture(denied) : invocation.proceed();
        }
        return decided.thenCompose(d -> {
            RateLimitExceededException denied = verdict(call, d);
            if (denied != null) {
                return CompletableFuture.failedFuture(denied);
            }
            try {
                return (CompletionStage<?>) invocation.proceed();
            } catch (Throwable t) {
                return CompletableFuture.failedFuture(t);
            }
        });
    }

    /** The store's decision, or null when the limiter threw (logged). */
    private @Nullable Decision decide(Call call) {
        try {
            return limiter().tryAcquire(call.storeKey(), call.method().limit, call.cost());
        } catch (RuntimeException e) {
            limiterFailed(call, e);
            return null;
        }
    }

    /**
     * The decision through the async path, completing with null when the limiter failed (logged). Already complete
     * when the limiter answered at once; otherwise completing on the application's task executor.
     */
    CompletableFuture<Decision> decideAsync(Call call) {
        CompletableFuture<Decision> f;
        try {
            f = limiter().tryAcquireAsync(call.storeKey(), call.method().limit, call.cost());
        } catch (RuntimeException e) {
            limiterFailed(call, e);
            return CompletableFuture.completedFuture(null);
        }
        BiFunction<Decision, Throwable, Decision> orNull = (d, e) -> {
            if (e != null) {
                limiterFailed(call, e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
                return null;
            }
            return d;
        };
        return f.isDone() ? f.handle(orNull) : f.handleAsync(orNull, executor());
    }

    /**
     * What to do with a decision: null to run the method (allowed, limiter failed, or shadow mode), else the
     * exception to fail with. Counts the outcome and logs what deserves it.
     */
    @Nullable
    RateLimitExceededException verdict(Call call, @Nullable Decision d) {
        RateLimitedMethod m = call.method();
        if (d == null) {
            counts().call(m, Outcome.LIMITER_FAILED, null);
            return null;
        }
        if (d.degraded() && logThrottle.allow("degraded")) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "decision for " + m + " made without the store ("
                            + d.degradation().label() + "): " + d + leftOut());
        }
        if (d.allowed()) {
            counts().call(m, Outcome.ALLOWED, d);
            return null;
        }
        if (shadowMode) {
            counts().call(m, Outcome.SHADOW_DENIED, d);
            if (logThrottle.allow("shadow")) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "shadow mode: would deny a call of " + m.description + " by limit '" + m.limitName + "': " + d
                                + leftOut());
            }
            return null;
        }
        counts().call(m, Outcome.DENIED, d);
        return new RateLimitExceededException(m.limitName, m.limit, call.key(), d, m.description);
    }

    private void limiterFailed(Call call, Throwable e) {
        if (logThrottle.allow("failed")) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limiter failed; letting a call of " + call.method().description + " through" + leftOut(),
                    e);
        }
    }

    private String leftOut() {
        long n = logThrottle.suppressedSinceLast();
        return n == 0 ? "" : " (" + n + " similar lines left out)";
    }
}
