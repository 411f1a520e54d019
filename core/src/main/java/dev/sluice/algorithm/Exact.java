package dev.sluice.algorithm;

import java.math.BigInteger;

/**
 * Integer arithmetic without silent overflow, for the algorithms' exact formulas. Products of two longs
 * are compared in 128 bits; the rare quotient whose product does not fit 63 bits falls back to
 * {@link BigInteger} (allocation only on that path).
 */
public final class Exact {
    private Exact() {}

    /** {@code ceil(a / b)} for {@code a >= 0}, {@code b > 0}. */
    public static long ceilDiv(long a, long b) {
        long q = a / b;
        return (a % b == 0) ? q : q + 1;
    }

    /** {@code floor(a * b / c)} for non-negative {@code a}, {@code b} and positive {@code c}; the result must fit a long. */
    public static long mulDivFloor(long a, long b, long c) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) {
            return lo / c;
        }
        return BigInteger.valueOf(a)
                .multiply(BigInteger.valueOf(b))
                .divide(BigInteger.valueOf(c))
                .longValueExact();
    }

    /** {@code ceil(a * b / c)} for non-negative {@code a}, {@code b} and positive {@code c}; the result must fit a long. */
    public static long mulDivCeil(long a, long b, long c) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) {
            return ceilDiv(lo, c);
        }
        BigInteger[] qr =
                BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divideAndRemainder(BigInteger.valueOf(c));
        return qr[1].signum() == 0 ? qr[0].longValueExact() : qr[0].longValueExact() + 1;
    }

    /** {@code a * b <= c * d} for non-negative operands, compared in 128 bits. */
    public static boolean productLessOrEqual(long a, long b, long c, long d) {
        long h1 = Math.multiplyHigh(a, b);
        long h2 = Math.multiplyHigh(c, d);
        if (h1 != h2) {
            return h1 < h2;
        }
        return Long.compareUnsigned(a * b, c * d) <= 0;
    }

    /** {@code a * b}, or {@link Long#MAX_VALUE} when it would overflow (operands non-negative). */
    public static long saturatingMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return (hi != 0 || lo < 0) ? Long.MAX_VALUE : lo;
    }
}
