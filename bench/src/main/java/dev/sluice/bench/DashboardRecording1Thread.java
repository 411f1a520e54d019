package dev.sluice.bench;

import org.openjdk.jmh.annotations.Threads;

/** {@link DashboardRecording} with one thread: the uncontended cost. */
@Threads(1)
public class DashboardRecording1Thread extends DashboardRecording {}
