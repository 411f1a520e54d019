package dev.sluice.algorithm;

/**
 * The state of one (key, limit), as the pure algorithm steps see it. Stores may pack it differently
 * (one {@code long} in memory, a hash in Redis, columns in SQL) but must load and save exactly this.
 */
public sealed interface State permits TatState, WindowState, SlidingWindowState, LogState {}
