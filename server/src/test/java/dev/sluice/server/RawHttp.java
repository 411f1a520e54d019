package dev.sluice.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A deliberately dumb HTTP/1.1 client for fuzzing: it writes exactly the bytes it is given (any method, framing,
 * header or body, however broken — what {@code java.net.http} refuses to send) on a fresh connection and reads one
 * answer, skipping interim 1xx answers, within a deadline. It tells a hang (nothing within the deadline) from a
 * silent close (the server hung up without answering).
 */
final class RawHttp {
    /** What came back: an answer, a silent close, or nothing within the deadline. */
    record Answer(int status, Map<String, String> headers, String body, Outcome outcome, long millis) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    enum Outcome {
        ANSWERED,
        CLOSED_WITHOUT_ANSWER,
        TIMED_OUT
    }

    private RawHttp() {}

    /**
     * Sends {@code request} to 127.0.0.1:{@code port} and reads one final answer.
     *
     * @param headRequest true when the request is a HEAD (its answer has a Content-Length but no body)
     */
    static Answer exchange(int port, byte[] request, boolean headRequest, long deadlineMillis) throws IOException {
        long start = System.nanoTime();
        long deadline = start + deadlineMillis * 1_000_000L;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), (int) deadlineMillis);
            try {
                s.getOutputStream().write(request);
                s.getOutputStream().flush();
            } catch (IOException e) {
                // the server may answer (413, 400) and close before it has read everything: read what it said
            }
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            while (true) {
                Answer a = parse(got.toByteArray(), headRequest, start);
                if (a != null) {
                    return a;
                }
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return new Answer(
                            0, Map.of(), got.toString(StandardCharsets.ISO_8859_1), Outcome.TIMED_OUT, elapsed(start));
                }
                s.setSoTimeout((int) left);
                int n;
                try {
                    n = in.read(buf);
                } catch (SocketTimeoutException e) {
                    continue;
                } catch (IOException e) {
                    n = -1; // reset by the server: same as a close for what was (not) answered
                }
                if (n < 0) {
                    Answer last = parse(got.toByteArray(), headRequest, start);
                    return last != null
                            ? last
                            : new Answer(
                                    0,
                                    Map.of(),
                                    got.toString(StandardCharsets.ISO_8859_1),
                                    Outcome.CLOSED_WITHOUT_ANSWER,
                                    elapsed(start));
                }
                got.write(buf, 0, n);
            }
        }
    }

    private static long elapsed(long start) {
        return (System.nanoTime() - start) / 1_000_000L;
    }

    /** The first complete final answer in {@code b}, or null while it is incomplete. */
    private static Answer parse(byte[] b, boolean headRequest, long start) {
        int from = 0;
        while (true) {
            int end = indexOf(b, from, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            if (end < 0) {
                return null;
            }
            String head = new String(b, from, end - from, StandardCharsets.ISO_8859_1);
            String[] lines = head.split("\r\n", -1);
            String[] statusLine = lines[0].split(" ", 3);
            int status = Integer.parseInt(statusLine[1]);
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int c = lines[i].indexOf(':');
                headers.put(
                        lines[i].substring(0, c).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(c + 1).trim());
            }
            int bodyStart = end + 4;
            if (status >= 100 && status < 200) {
                from = bodyStart; // 100 Continue: the real answer follows
                continue;
            }
            int len = headRequest || status == 204 || status == 304
                    ? 0
                    : Integer.parseInt(headers.getOrDefault("content-length", "0"));
            if (b.length - bodyStart < len) {
                return null;
            }
            return new Answer(
                    status,
                    headers,
                    new String(b, bodyStart, len, StandardCharsets.UTF_8),
                    Outcome.ANSWERED,
                    elapsed(start));
        }
    }

    private static int indexOf(byte[] b, int from, byte[] what) {
        outer:
        for (int i = from; i + what.length <= b.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (b[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** A well-framed POST of {@code body} with the given content type (null: none). */
    static byte[] post(String path, String contentType, byte[] body) {
        StringBuilder h = new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (contentType != null) {
            h.append("Content-Type: ").append(contentType).append("\r\n");
        }
        h.append("Content-Length: ").append(body.length).append("\r\nConnection: close\r\n\r\n");
        byte[] head = h.toString().getBytes(StandardCharsets.ISO_8859_1);
        return Mutations.splice(head, head.length, 0, body);
    }
}
