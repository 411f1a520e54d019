package dev.sluice.spring;

import dev.sluice.Limit;
import dev.sluice.Permit;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One {@link RateLimited} method, checked once when its bean is created: the limit it names exists, its SpEL parses
 * and refers only to arguments the method has, and it can be proxied. Per call it evaluates the key and the cost
 * against the arguments. Every failure names the method, the attribute and the fix.
 */
final class RateLimitedMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    /** How the method returns, and so how it is decided: on the caller's thread, or through the async path. */
    enum Returns {
        VALUE,
        COMPLETION_STAGE,
        MONO,
        FLUX
    }

    final Method method;
    /** {@code ExportService.export(User, List)}: for messages, logs and the endpoint. */
    final String description;

    final String limitName;
    final Limit limit;
    final String keySource;
    final String costSource;
    final String scope;
    /** {@code ExportService.export}: the {@code method} tag of the {@code sluice.calls} meter. */
    final String metricName;

    final Returns returns;
    final OutcomeCounts counts = new OutcomeCounts();
    /** Null: no {@code key} attribute, every call shares {@code *}. */
    private final @Nullable Expression key;
    /** Null: no {@code cost} attribute, every call spends 1. */
    private final @Nullable Expression cost;
    /** {@code <limit>:<scope>:}, the store key's prefix. */
    private final String keyPrefix;

    private RateLimitedMethod(Method method, RateLimited a, Limit limit) {
        this.method = method;
        this.description = describe(method);
        this.limitName = a.limit();
        this.limit = limit;
        this.keySource = a.key().strip();
        this.costSource = a.cost().strip();
        this.metricName = method.getDeclaringClass().getSimpleName() + '.' + method.getName();
        this.scope = a.scope().isBlank() ? metricName : a.scope().strip();
        this.returns = returns(method.getReturnType());
        this.key = keySource.isEmpty() ? null : parse("key", keySource);
        this.cost = costSource.isEmpty() ? null : parse("cost", costSource);
        this.keyPrefix = limitName + ':' + scope + ':';
    }

    /**
     * Checks {@code method}'s annotation against the named limits.
     *
     * @throws SluiceConfigException naming the method, the attribute and the fix
     */
    static RateLimitedMethod of(Method method, RateLimited a, Map<String, Limit> limits) {
        String where = describe(method);
        int mod = method.getModifiers();
        if (Modifier.isPrivate(mod) || Modifier.isStatic(mod) || Modifier.isFinal(mod)) {
            String what = Modifier.isPrivate(mod) ? "private" : Modifier.isStatic(mod) ? "static" : "final";
            throw new SluiceConfigException(
                    "@RateLimited on " + where,
                    "a " + what + " method cannot be"
                            + " intercepted, so it would never be limited: make it public (or protected), non-static and"
                            + " non-final, and call it through the bean");
        }
        Limit limit = limits.get(a.limit());
        if (limit == null) {
            throw new SluiceConfigException(
                    attribute("limit", a.limit(), where),
                    "unknown limit '" + a.limit()
                            + "': define it under sluice.limits." + (a.limit().isBlank() ? "<name>" : a.limit())
                            + (limits.isEmpty() ? " (there are none yet)" : " or use one of " + limits.keySet()));
        }
        RateLimitedMethod m = new RateLimitedMethod(method, a, limit);
        m.checkLiteralCost();
        return m;
    }

    private Expression parse(String attribute, String source) {
        String where = attribute(attribute, source, description);
        Expression e;
        try {
            e = PARSER.parseExpression(source);
        } catch (ParseException ex) {
            throw new SluiceConfigException(
                    where,
                    "the " + attribute + " expression does not parse ("
                            + ex.getMessage() + "): write SpEL over the arguments, such as "
                            + example(attribute));
        }
        List<String> variables = new ArrayList<>();
        collectVariables(((SpelExpression) e).getAST(), variables);
        Parameter[] params = method.getParameters();
        String[] names = NAMES.getParameterNames(method);
        for (String v : variables) {
            if (v.equals("this")
                    || v.equals("root")
                    || isPositional(v, params.length)
                    || (names != null && Arrays.asList(names).contains(v))) {
                continue;
            }
            String byPosition = params.length == 1 ? "#p0" : "#p0 to #p" + (params.length - 1);
            if (params.length == 0) {
                throw new SluiceConfigException(
                        where,
                        "#" + v + " is not known: " + description + " has no parameters; leave " + attribute
                                + " out or refer to a bean as @name");
            }
            if (names == null) {
                throw new SluiceConfigException(
                        where,
                        "#" + v + " is not known: the parameter names of "
                                + description + " are not in its class file; compile with -parameters (Spring Boot's"
                                + " Maven and Gradle plugins do) or refer to the arguments by position, " + byPosition);
            }
            throw new SluiceConfigException(
                    where,
                    "#" + v + " is not a parameter of " + description + ": use "
                            + Arrays.stream(names).map(n -> "#" + n).collect(Collectors.joining(" or ")) + ", or "
                            + byPosition + " by position");
        }
        return e;
    }

    private static String example(String attribute) {
        return attribute.equals("key") ? "#user.id, #p0 or #a0" : "#items.size() or #p1";
    }

    private static boolean isPositional(String v, int parameters) {
        if (v.length() < 2 || (v.charAt(0) != 'p' && v.charAt(0) != 'a')) {
            return false;
        }
        try {
            int i = Integer.parseInt(v.substring(1));
            return i >= 0 && i < parameters && v.substring(1).equals(Integer.toString(i));
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static void collectVariables(SpelNode node, List<String> into) {
        if (node instanceof VariableReference) {
            into.add(node.toStringAST().substring(1)); // "#user"
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collectVariables(node.getChild(i), into);
        }
    }

    /** A cost written as a number ({@code cost = "200"}) is checked against the capacity now. */
    private void checkLiteralCost() {
        if (cost instanceof SpelExpression s && s.getAST() instanceof Literal) {
            long c = costValue(s.getValue(), "cost");
            if (c > limit.capacity()) {
                throw new SluiceConfigException(
                        attribute("cost", costSource, description),
                        "cost " + c
                                + " exceeds capacity " + limit.capacity() + " of limit '" + limitName
                                + "': it can never be granted; lower the cost or raise sluice.limits." + limitName);
            }
        }
    }

    /** The context the expressions see: the arguments by name and position, and beans by {@code @name}. */
    MethodBasedEvaluationContext context(Object[] args, @Nullable BeanResolver beans) {
        MethodBasedEvaluationContext c = new MethodBasedEvaluationContext(null, method, args, NAMES);
        if (beans != null) {
            c.setBeanResolver(beans);
        }
        return c;
    }

    /** The caller's key as the expression gives it ({@code *} without one). */
    String key(MethodBasedEvaluationContext context) {
        if (key == null) {
            return "*";
        }
        Object v;
        try {
            v = key.getValue(context);
        } catch (EvaluationException e) {
            throw new IllegalArgumentException(
                    "@RateLimited key of " + description + ": '" + keySource + "' failed: " + e.getMessage(), e);
        }
        if (v == null) {
            throw new IllegalArgumentException("@RateLimited key of " + description + ": '" + keySource
                    + "' gave null; every call needs a key (use #user?.id ?: 'anonymous' to give one)");
        }
        return v.toString();
    }

    /** {@code <limit>:<scope>:<key>}; a key that would make it too long is replaced by its SHA-256. */
    String storeKey(String callerKey) {
        return Permit.boundedKey(keyPrefix, callerKey);
    }

    /**
     * The permits this call spends: a whole number from 0 to the limit's capacity.
     *
     * @throws IllegalArgumentException naming the method and the value otherwise
     */
    long cost(MethodBasedEvaluationContext context) {
        if (cost == null) {
            return 1;
        }
        Object v;
        try {
            v = cost.getValue(context);
        } catch (EvaluationException e) {
            throw new IllegalArgumentException(
                    "@RateLimited cost of " + description + ": '" + costSource + "' failed: " + e.getMessage(), e);
        }
        long c = costValue(v, "'" + costSource + "'");
        if (c > limit.capacity()) {
            throw new IllegalArgumentException("@RateLimited cost of " + description + ": '" + costSource + "' gave "
                    + c + ", which exceeds capacity " + limit.capacity() + " of limit '" + limitName
                    + "': it can never be granted; lower the cost or raise sluice.limits." + limitName);
        }
        return c;
    }

    private long costValue(@Nullable Object v, String source) {
        BigDecimal d = null;
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            d = BigDecimal.valueOf(((Number) v).longValue());
        } else if (v instanceof BigInteger b) {
            d = new BigDecimal(b);
        } else if (v instanceof BigDecimal b) {
            d = b;
        } else if ((v instanceof Double || v instanceof Float) && Double.isFinite(((Number) v).doubleValue())) {
            d = BigDecimal.valueOf(((Number) v).doubleValue());
        }
        if (d != null && d.signum() >= 0) {
            try {
                return d.stripTrailingZeros().longValueExact();
            } catch (ArithmeticException notWholeOrTooLarge) {
                // reported below
            }
        }
        String shown = v == null
                ? "null"
                : v instanceof CharSequence
                        ? "\"" + v + "\" (a " + v.getClass().getSimpleName() + ")"
                        : v + (v instanceof Number ? "" : " (a " + v.getClass().getSimpleName() + ")");
        throw new IllegalArgumentException("@RateLimited cost of " + description + ": " + source + " gave " + shown
                + "; a cost must be a whole number of permits, 0 or more");
    }

    private static Returns returns(Class<?> type) {
        if (type == CompletionStage.class || type == CompletableFuture.class) {
            return Returns.COMPLETION_STAGE;
        }
        if (type.getName().equals("reactor.core.publisher.Mono")) {
            return Returns.MONO;
        }
        if (type.getName().equals("reactor.core.publisher.Flux")) {
            return Returns.FLUX;
        }
        return Returns.VALUE;
    }

    private static String attribute(String attribute, String value, String where) {
        return "@RateLimited(" + attribute + " = \"" + value + "\") on " + where;
    }

    static String describe(Method m) {
        return m.getDeclaringClass().getSimpleName()
                + '.'
                + m.getName()
                + Arrays.stream(m.getParameterTypes())
                        .map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    @Override
    public String toString() {
        return "@RateLimited(limit = \"" + limitName + "\") on " + description;
    }
}
