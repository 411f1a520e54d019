package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link HotKey} with one thread: the cost of one decision, uncontended. */
@Threads(1)
public class HotKey1Thread extends HotKey {}
