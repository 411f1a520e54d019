package dev.sluice.servlet;

import java.net.InetAddress;

/**
 * An address block such as {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address is a block of one. IPv4
 * blocks match IPv4 addresses (and IPv4-mapped IPv6 ones, which the JDK reads as IPv4); IPv6 blocks match IPv6.
 */
public final class Cidr {
    private final byte[] network;
    private final int prefixBits;
    private final String text;

    private Cidr(byte[] network, int prefixBits, String text) {
        this.network = network;
        this.prefixBits = prefixBits;
        this.text = text;
    }

    /**
     * Parses {@code 10.0.0.0/8}, {@code 127.0.0.1}, {@code ::1/128}.
     *
     * @throws IllegalArgumentException naming the text and the accepted form
     */
    public static Cidr parse(String text) {
        String s = text == null ? "" : text.strip();
        int slash = s.indexOf('/');
        InetAddress address = IpLiteral.parse(slash < 0 ? s : s.substring(0, slash));
        if (address == null) {
            throw new IllegalArgumentException("trusted proxy '" + text
                    + "' is not an address block: write an IP literal with an optional prefix length, e.g."
                    + " 10.0.0.0/8, 192.0.2.7 or fd00::/8 (host names are not resolved)");
        }
        byte[] bytes = address.getAddress();
        int max = bytes.length * 8;
        int bits = max;
        if (slash >= 0) {
            String length = s.substring(slash + 1);
            // 0-9 only: Integer.parseInt would also read other scripts' digits
            bits = length.matches("[0-9]{1,3}") ? Integer.parseInt(length) : -1;
            if (bits < 0 || bits > max) {
                throw new IllegalArgumentException("trusted proxy '" + text + "' has prefix length '"
                        + s.substring(slash + 1) + "': use 0 to " + max + " for an IPv" + (max == 32 ? 4 : 6)
                        + " block");
            }
        }
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] &= mask(bits, i);
        }
        return new Cidr(bytes, bits, s);
    }

    /** Whether {@code address} is inside this block. */
    public boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        if (a.length != network.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if ((a[i] & mask(prefixBits, i)) != network[i]) {
                return false;
            }
        }
        return true;
    }

    private static byte mask(int bits, int byteIndex) {
        int rest = bits - byteIndex * 8;
        return rest >= 8 ? (byte) 0xff : rest <= 0 ? 0 : (byte) (0xff << (8 - rest));
    }

    @Override
    public String toString() {
        return text;
    }
}
