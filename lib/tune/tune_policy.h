/* SPDX-License-Identifier: MIT */
/*
 * The tuning loop's policy, every figure in one place: how often a side
 * is measured, what counts as near the bound, below which floors errors
 * are taken, when a knob is said to have no effect, the report's bounds
 * and its latency levels. Headers and the README describe the behaviour;
 * the numbers are these.
 */
#ifndef DITTO_TUNE_POLICY_H
#define DITTO_TUNE_POLICY_H

/* The original's figures are the mean of TARGET_RUNS runs: one run of
 * redis-server also moves its system calls per request by about 1%, the
 * size of their bound. */
#define TARGET_RUNS 3

/* A clone whose largest error is within this factor of the bound, above
 * or below, is measured twice. */
#define NEAR_FACTOR 1.5

/* Each side's calls are measured CALL_ROUNDS times, the sides taking
 * turns, and averaged: pinned (measure_pin.c), one redis-server's system
 * calls per request still move by about 1% between runs, its clone's by
 * 2-3%, through how many requests each epoll_wait gathers. The original
 * also takes a second turn in each round, averaged apart: the
 * syscalls_per_request_noise row sets it against itself. */
#define CALL_ROUNDS 3

/* Rates (names ending in "_rate") are compared relative to at least
 * RATE_FLOOR (0.05%): a service whose data fits the caches has a miss rate
 * of a few in a million, where a relative error says nothing, and the
 * clone's runtime alone misses some 1e-5 of its references. */
#define RATE_FLOOR 5e-4

/* Background calls per request are compared relative to at least
 * CALLS_FLOOR: at the 5% bound that allows one call in 100 requests, a
 * third of the 1% the report allows memcached's 3 syscalls per request;
 * finer would chase the noise of a few dozen timer wake-ups per run. */
#define CALLS_FLOOR 0.2

/* The bound for system calls and bytes per request. */
#define TUNE_CALLS_BOUND 0.01

/* The loop may end with CPU time per request (tune_targets.c) off by
 * this: it is measured natively, and runs of one clone under the same
 * load spread by several percent with what else the host runs. */
#define TUNE_CPU_TIME_BOUND 0.10

/* Secant steps look for a bracket of the goal among a knob's last
 * BRACKET_POINTS (knob, metric) points (tune_knobs.c). */
#define BRACKET_POINTS 4

/* A step is idle when the knob moved by more than KNOB_MOVED of its size
 * or range and its metric by less than NO_EFFECT relative to itself
 * (tune_knobs.c says why these); a knob idle STALL_STEPS steps in a row
 * (the last of them a step to the knob's limit) had no effect: the loop
 * stops stepping it and the report says so. */
#define NO_EFFECT 0.01
#define KNOB_MOVED 0.05
#define STALL_STEPS 3

/* The p99 rows' bound (p50 rows are informational). */
#define P99_BOUND 0.10
/* Seconds of one latency round: the tail of a round moves by tens of
 * percent with what else the VM ran then, so a longer --latency-seconds
 * buys more rounds rather than longer ones. */
#define ROUND_S 1.0
/* The latency levels, as shares of the original's saturation throughput. */
#define LATENCY_LOW 0.25
#define LATENCY_MEDIUM 0.5
#define LATENCY_HIGH 0.75

/* CPU windows of the best clone (and of the original, when it can be
 * run) for the report's mix and dependency rows. */
#define CPU_ROW_WINDOWS 8

#endif /* DITTO_TUNE_POLICY_H */
