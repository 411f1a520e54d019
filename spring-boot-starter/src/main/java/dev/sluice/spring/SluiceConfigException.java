package dev.sluice.spring;

/**
 * A {@code sluice.*} setting that cannot work. The message starts with the property path and ends with the fix,
 * e.g. {@code sluice.rules[1].limit: unknown limit 'pro-user': define it under sluice.limits.pro-user or use one
 * of [per-ip, free-user]}; {@link SluiceConfigFailureAnalyzer} prints it as Spring Boot's startup report.
 */
public class SluiceConfigException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String property;
    private final String problem;

    public SluiceConfigException(String property, String problem) {
        super(property + ": " + problem);
        this.property = property;
        this.problem = problem;
    }

    /**
     * The property path, such as {@code sluice.rules[0].tiers.pro}; for an annotation, the annotation and its
     * method, such as {@code @RateLimited(limit = "gold") on ExportService.export(User, List)}.
     */
    public String property() {
        return property;
    }

    /** What is wrong and how to fix it. */
    public String problem() {
        return problem;
    }
}
