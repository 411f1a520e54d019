package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link RandomKeys} with one thread. */
@Threads(1)
public class RandomKeys1Thread extends RandomKeys {}
