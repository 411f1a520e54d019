package dev.sluice.algorithm;

import dev.sluice.Decision;

/** The result of one pure step: the decision, and the state to save (unchanged when denied). */
public record Step(Decision decision, State state) {}
