package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link RandomKeys} with two threads. */
@Threads(2)
public class RandomKeys2Threads extends RandomKeys {}
