package dev.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits the calls of a Spring bean's method by a limit named under {@code sluice.limits}: each call spends
 * {@code cost} permits of the budget of its {@code key}, and a call over the limit throws
 * {@link RateLimitExceededException} without running the method. In a web application that exception is answered
 * {@code 429} with {@code RateLimit}, {@code RateLimit-Policy} and {@code Retry-After} headers and a problem+json
 * body, as the filter answers.
 *
 * <pre>
 * &#64;RateLimited(limit = "exports", key = "#user.id", cost = "#items.size()")
 * public Export export(User user, List&lt;Item&gt; items) { ... }
 * </pre>
 *
 * <p>{@code key} and {@code cost} are SpEL over the arguments: by parameter name ({@code #user}: compile with
 * {@code -parameters}, as Spring Boot's Maven and Gradle plugins do) or by position ({@code #p0}, {@code #a0});
 * {@code @beanName} reaches other beans. Both are parsed, and the limit looked up, when the bean is created: a
 * mistake stops the application at startup naming the method, the attribute and the fix, never the first call.
 *
 * <p><b>Keys.</b> The store key is {@code <limit>:<scope>:<key>}, the scope being by default the method
 * ({@code ExportService.export}): two methods under one limit have separate budgets, and the same limit name used
 * by the filter's rules is a budget of its own too. Give methods the same {@link #scope()} to share a budget.
 *
 * <p><b>Return types.</b> A method returning {@code CompletableFuture} or {@code CompletionStage}, or Reactor's
 * {@code Mono} or {@code Flux}, is decided through the limiter's asynchronous path and never blocks its caller:
 * when denied, the returned future (or publisher) fails with {@link RateLimitExceededException} and the method does
 * not run. A {@code Mono} or {@code Flux} is decided when it is subscribed, once per subscription. When a remote
 * store answers later, the method runs on the application's task executor, never on the store's I/O thread.
 *
 * <p>Like any Spring AOP advice, it applies to calls through the bean (not {@code this.method()}), on public or
 * protected methods of a bean whose class can be proxied; an annotated private, static or final method fails
 * startup rather than being silently unlimited. {@code sluice.enabled=false} turns every annotation off and
 * {@code sluice.shadow-mode=true} lets would-be denials run, logged and counted.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {

    /** The name of a limit under {@code sluice.limits}, such as {@code exports}. */
    String limit();

    /**
     * SpEL giving the caller's key, such as {@code #user.id} or {@code #p0}; its value's {@code toString()} is used
     * and it must not be null. Empty: one budget for every caller of the method.
     */
    String key() default "";

    /**
     * SpEL giving the permits the call spends, such as {@code #items.size()}: a whole number, 0 or more (0 spends
     * nothing and is not checked). Empty: 1.
     */
    String cost() default "";

    /**
     * What the budget belongs to besides the key. Empty: the method, as {@code SimpleClassName.method} (overloads
     * share it). Methods with the same scope and limit share one budget per key.
     */
    String scope() default "";
}
