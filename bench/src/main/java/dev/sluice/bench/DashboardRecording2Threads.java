package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link DashboardRecording} with two threads: each denial in its own stripe of the sketch, one hot key for both. */
@Threads(2)
public class DashboardRecording2Threads extends DashboardRecording {}
