package dev.sluice.tck;

/**
 * A cost known only afterwards ({@code tryAcquireEstimate}, then {@code settle}), on every store alike: what each
 * algorithm charges and gives back ({@link SettleAlgorithmsTck}), the contract around it — once only, expiry, denied
 * and duplicate reservations, bad input ({@link SettleContractTck}) — and, against {@link ReferenceRateLimiter} and
 * under contention, exactness ({@link SettleExactnessTck}). Every case runs through the synchronous and the
 * asynchronous view. Part of {@link RateLimiterTck}: every store runs it.
 */
public interface SettleTck extends SettleAlgorithmsTck, SettleContractTck, SettleExactnessTck {}
