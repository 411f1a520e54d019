package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link HotKey} with four threads on the same key (on a 2-core machine: two per core, preempting each other). */
@Threads(4)
public class HotKey4Threads extends HotKey {}
