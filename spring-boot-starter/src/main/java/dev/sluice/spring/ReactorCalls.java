package dev.sluice.spring;

import dev.sluice.Decision;
import java.util.Optional;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link RateLimited} methods returning Reactor's {@code Mono} or {@code Flux}; a class of its own so that Reactor
 * is loaded only by applications that use it. Each subscription is one call: it is decided when subscribed, through
 * the limiter's async path, and then either runs the method and relays what it returns or fails with
 * {@link RateLimitExceededException} without running it.
 */
final class ReactorCalls {
    private ReactorCalls() {}

    static Object error(RateLimitedMethod.Returns returns, Throwable e) {
        return returns == RateLimitedMethod.Returns.FLUX ? Flux.error(e) : Mono.error(e);
    }

    /**
     * @param template the invocation positioned at the interceptor; each subscription proceeds a clone of it, so that
     *     a resubscription (a retry) runs the method again
     */
    static Object decideOnSubscribe(
            RateLimitedInterceptor interceptor, RateLimitedInterceptor.Call call, MethodInvocation template) {
        Mono<Optional<Decision>> decided = Mono.defer(() -> Mono.fromFuture(interceptor.decideAsync(call)))
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty()); // a null decision: the limiter failed, the call runs
        if (call.method().returns == RateLimitedMethod.Returns.FLUX) {
            return decided.flatMapMany(d -> {
                RateLimitExceededException denied = interceptor.verdict(call, d.orElse(null));
                return denied != null ? Flux.error(denied) : Flux.from(proceed(template));
            });
        }
        return decided.flatMap(d -> {
            RateLimitExceededException denied = interceptor.verdict(call, d.orElse(null));
            return denied != null ? Mono.error(denied) : Mono.from(proceed(template));
        });
    }

    private static Publisher<?> proceed(MethodInvocation template) {
        try {
            MethodInvocation once = template instanceof ProxyMethodInvocation p ? p.invocableClone() : template;
            Object result = once.proceed();
            return result == null ? Mono.empty() : (Publisher<?>) result;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }
}
