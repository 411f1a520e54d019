package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link HotKey} with two threads on the same key: the cost of contention on one cache line. */
@Threads(2)
public class HotKey2Threads extends HotKey {}
