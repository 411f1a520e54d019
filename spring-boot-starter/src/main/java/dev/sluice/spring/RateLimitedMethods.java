package dev.sluice.spring;

import dev.sluice.Limit;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds {@link RateLimited} methods as beans are created, checks each one (its limit exists, its SpEL parses and
 * names real arguments; see {@link RateLimitedMethod}) and proxies the bean with {@link RateLimitedInterceptor}. A
 * bad annotation therefore fails the bean's creation, and so the application's start, with a
 * {@link SluiceConfigException} that names the method and the fix.
 *
 * <p>Built on Spring AOP's own advising post-processor, as {@code @Async} and {@code @Validated} are: no AspectJ
 * needed. On a bean that is already a proxy (say, {@code @Transactional}) the advice goes first, so a denied call
 * opens no transaction. It is also the registry of annotated methods that the {@code ratelimits} endpoint lists.
 */
final class RateLimitedMethods extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {
    private final Map<String, Limit> limits;
    private final RateLimitedInterceptor interceptor;
    /** By (method, target class) as found at startup and as invoked (an interface's method, say). */
    private final Map<MethodClassKey, RateLimitedMethod> byMethod = new ConcurrentHashMap<>();
    /** One entry per annotated method, in the order found: what the endpoint lists. */
    private final Map<Method, RateLimitedMethod> found = new ConcurrentHashMap<>();

    /** Null until Spring calls {@link #setBeanFactory}. */
    private @Nullable BeanFactory beanFactory;

    /**
     * @param limits the named limits of {@code sluice.limits}
     * @param proxyTargetClass Spring Boot's {@code spring.aop.proxy-target-class}: proxy classes, not interfaces
     */
    RateLimitedMethods(Map<String, Limit> limits, boolean shadowMode, boolean proxyTargetClass) {
        this.limits = Map.copyOf(limits);
        this.interceptor = new RateLimitedInterceptor(this, shadowMode);
        // checkInherited: an annotation on an interface's or a superclass's method counts, as it does when found
        this.advisor =
                new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, RateLimited.class, true), interceptor);
        setBeforeExistingAdvisors(true);
        setProxyTargetClass(proxyTargetClass);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beanFactory = beanFactory;
        interceptor.setBeanFactory(beanFactory);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(bean, beanName)) {
            register(AopProxyUtils.ultimateTargetClass(bean));
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** Checks and records every annotated method of {@code targetClass}, its superclasses and interfaces. */
    void register(Class<?> targetClass) {
        Map<Method, RateLimited> annotated =
                MethodIntrospector.selectMethods(targetClass, (MethodIntrospector.MetadataLookup<RateLimited>)
                        m -> AnnotatedElementUtils.findMergedAnnotation(m, RateLimited.class));
        for (Map.Entry<Method, RateLimited> e : annotated.entrySet()) {
            Method m = e.getKey();
            RateLimitedMethod checked = found.computeIfAbsent(m, k -> RateLimitedMethod.of(k, e.getValue(), limits));
            byMethod.put(new MethodClassKey(m, targetClass), checked);
        }
    }

    /** The checked annotation of {@code method} as invoked on {@code targetClass}, or null. */
    @Nullable
    RateLimitedMethod find(Method method, Class<?> targetClass) {
        MethodClassKey k = new MethodClassKey(method, targetClass);
        RateLimitedMethod m = byMethod.get(k);
        if (m == null) {
            Method specific =
                    BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, targetClass));
            m = byMethod.get(new MethodClassKey(specific, targetClass));
            if (m == null) {
                RateLimited a = AnnotatedElementUtils.findMergedAnnotation(specific, RateLimited.class);
                if (a == null) {
                    return null; // the pointcut matched a method on another class of the hierarchy
                }
                m = found.computeIfAbsent(specific, s -> RateLimitedMethod.of(s, a, limits));
            }
            byMethod.put(k, m);
        }
        return m;
    }

    /** Every annotated method found, sorted by description. */
    List<RateLimitedMethod> methods() {
        List<RateLimitedMethod> all = new ArrayList<>(found.values());
        all.sort(Comparator.comparing(m -> m.description));
        return all;
    }

    /** With annotated beans, the limiter is looked up now, so that a missing or ambiguous one fails the start. */
    @Override
    public void afterSingletonsInstantiated() {
        if (!found.isEmpty() && beanFactory != null) {
            interceptor.limiter();
        }
    }
}
