"""The one timing routine.

For one workload, every approach is sampled in turn within the same round
(round-robin, order rotated each round), so that load from other processes
on a shared machine hits all approaches alike and ratios stay meaningful.

A sample times `loops` back-to-back runs and records ns per run, less the
cost of reading the clock.  Inputs are made before the clock starts:
approaches marked `fresh` get a new copy of every string for every run (see
fresh_copies), the others the same list.  The fresh copies of one sample
are capped at MAX_FRESH_BYTES: an uncapped fast approach got ~45 loops of
copies (26 MB, out of cache) where a slow one got 2, and the no-op floor
came out 3x slower per string on 40-character strings than on 8-character
ones.  The cyclic GC is off inside the timed region (as timeit does).

The clock is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall
time: on a machine shared with other jobs, time spent descheduled would
otherwise land in whichever sample was running, and with 2 cores and
compilers running that is most samples.  CPU time still counts page faults
and cache misses caused by the run; set_clock("wall") switches to
perf_counter (for an idle machine).
"""
import gc
import math
import statistics
import sys
import time

# Fresh copies per sample, in bytes of str objects (about an L2 cache).
MAX_FRESH_BYTES = 1 << 20
MAX_LOOPS = 1000


def fresh_copies(strings):
    """New str objects equal to `strings`, with no cached UTF-8 or hash.

    s + "\\0" is a new object (CPython may resize the left operand in place
    only when it holds the sole reference; here the list holds one more),
    and slicing that back builds a new compact str of the same PEP 393 kind.
    Exception: 1-character strings below U+0100 are CPython singletons and
    come back as themselves.
    """
    return [(s + "\0")[:-1] for s in strings]


def _inputs(approach, strings, loops):
    if approach.fresh:
        make = approach.make_input or fresh_copies
        return [make(strings) for _ in range(loops)]
    return [strings] * loops


CLOCKS = {"cpu": time.thread_time_ns, "wall": time.perf_counter_ns}
_clock = CLOCKS["cpu"]


_overhead = 0


def set_clock(name):
    """Choose the clock and measure what reading it twice costs."""
    global _clock, _overhead
    _clock = CLOCKS[name]
    reads = []
    for _ in range(201):
        t0 = _clock()
        reads.append(_clock() - t0)
    _overhead = statistics.median(reads)


def _time(run, inputs):
    clock = _clock
    gc.disable()
    try:
        t0 = clock()
        for x in inputs:
            run(x)
        t1 = clock()
    finally:
        gc.enable()
    return max(t1 - t0 - _overhead, 0) / len(inputs)


def calibrate(approach, run, strings, min_time_ns):
    """Loops per sample so that one sample lasts about min_time_ns, within
    the MAX_FRESH_BYTES budget for approaches that get fresh copies."""
    once = _time(run, _inputs(approach, strings, 1))  # also a first warm-up
    loops = max(1, math.ceil(min_time_ns / max(once, 1.0)))
    if approach.fresh:
        size = sum(map(sys.getsizeof, strings))
        loops = min(loops, max(1, MAX_FRESH_BYTES // size))
    return min(loops, MAX_LOOPS)


class Rounds:
    """Samples of several approaches on one workload, one round at a time:
    each round takes one sample of every approach, in an order rotated by
    the round number.  Loops are calibrated when the object is made."""

    def __init__(self, runners, strings, min_time_ns):
        self.runners, self.strings = runners, strings
        self.loops = {a.key: calibrate(a, run, strings, min_time_ns)
                      for a, run in runners}

    def round(self, rnd):
        """{key: ns per run} for one round."""
        k = rnd % len(self.runners)
        return {a.key: _time(run, _inputs(a, self.strings, self.loops[a.key]))
                for a, run in self.runners[k:] + self.runners[:k]}


def collect(take_round, loops, warmup, repeats):
    """{key: {"loops", "samples"}} from warmup + repeats rounds, the warm-up
    rounds dropped.  take_round(rnd) -> {key: ns}."""
    out = {k: {"loops": n, "samples": []} for k, n in loops.items()}
    for rnd in range(warmup + repeats):
        got = take_round(rnd)
        if rnd >= warmup:
            for k, t in got.items():
                out[k]["samples"].append(t)
    return out


def sample_workload(runners, strings, *, warmup, repeats, min_time_ns):
    """runners: list of (approach, run).  Returns {key: {"loops", "samples"}}
    with samples in ns per run (one run = the whole workload)."""
    r = Rounds(runners, strings, min_time_ns)
    return collect(r.round, r.loops, warmup, repeats)


def summary(samples):
    """Median and spread of a list of samples (ns)."""
    med = statistics.median(samples)
    if len(samples) >= 4:
        q = statistics.quantiles(samples, n=4)
        iqr = q[2] - q[0]
    else:
        iqr = max(samples) - min(samples)
    return {"median": med, "min": min(samples), "max": max(samples),
            "iqr": iqr, "spread_pct": 100.0 * iqr / (2 * med) if med else 0.0,
            "n": len(samples)}


def interleaved(fns, rounds, warmup, clock=time.perf_counter_ns, gc_off=False):
    """Samples (ns, one call each) of every callable in `fns`, `rounds`
    rounds after `warmup` untimed ones; each round starts at the next row,
    so that the rows share the same time windows.  A collection runs before
    each call; gc_off keeps the collector off during it."""
    keys = list(fns)
    samples = {k: [] for k in keys}
    for rnd in range(warmup + rounds):
        k0 = rnd % len(keys)
        for k in keys[k0:] + keys[:k0]:
            gc.collect()
            if gc_off:
                gc.disable()
            t0 = clock()
            fns[k]()
            t1 = clock()
            if gc_off:
                gc.enable()
            if rnd >= warmup:
                samples[k].append(t1 - t0)
    return samples
