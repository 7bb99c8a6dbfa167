/*
 * clock.h - simulated time and per-device clocks.
 *
 * Simulated time is uint64_t picoseconds (SST's default timebase, ChampSim's
 * clock): 64 bits cover about 213 days.  Devices convert cycles with their
 * own SimClock, never with a float frequency at the call site.
 */
#ifndef SIM_CLOCK_H
#define SIM_CLOCK_H

#include <glib.h>
#include <stdint.h>

typedef uint64_t SimTime;                 /* picoseconds */

#define SIM_TIME_MAX UINT64_MAX
#define SIM_PS_PER_NS 1000ull
#define SIM_PS_PER_US 1000000ull
#define SIM_PS_PER_MS 1000000000ull
#define SIM_PS_PER_S  1000000000000ull

/*
 * The horizon: every duration a model computes and every event time lies
 * below 1e6 s (11.6 days) of simulated time; the horizon itself is what a
 * longer time saturates to, and the kernel refuses it.  The longest request a phone model
 * is asked for (a CPU-only decode of ten thousand tokens) takes an hour or
 * two, so a time beyond the horizon is a config value far outside what a
 * phone does (a rate of 1e-9 somewhere), not a long run.  The horizon is
 * 18 times below UINT64_MAX, so the kernel's now + delay (each at most the
 * horizon) and a planner's sum of a few saturated estimates cannot wrap.
 */
#define SIM_TIME_HORIZON_PS 1000000000000000000ull
#define SIM_TIME_HORIZON_S  1e6

/*
 * The one conversion of a computed duration, @ps picoseconds as a double,
 * to SimTime: rounded to the nearest ps.  FALSE if @ps is not finite, is
 * negative or does not lie below SIM_TIME_HORIZON_PS; *@t is then
 * saturated, at the horizon (too long, +inf, NaN) or 0 (negative), so that a caller
 * that reports the failure later holds a time that cannot overflow.
 * (A plain (uint64_t) cast of a double beyond 2^64, of inf or of NaN is
 * undefined behaviour, and on x86 gives 0: a rate of 0 made a task free.)
 */
static inline gboolean
sim_time_from_ps_checked(double ps, SimTime *t)
{
    /* written so that NaN fails every comparison into the error branch */
    if (ps >= 0 && ps < (double) SIM_TIME_HORIZON_PS - 1.0) {
        *t = (SimTime) (ps + 0.5);
        return TRUE;
    }
    *t = ps < 0 ? 0 : SIM_TIME_HORIZON_PS;
    return FALSE;
}

/* A duration in ps, saturated at the horizon (0 if negative): for times
 * whose inputs are range-checked config values, or whose excess the
 * kernel reports (an event beyond the horizon fails the run). */
static inline SimTime
sim_time_from_ps(double ps)
{
    SimTime t;
    sim_time_from_ps_checked(ps, &t);
    return t;
}

static inline SimTime
sim_time_from_us(double us)
{
    return sim_time_from_ps(us * (double) SIM_PS_PER_US);
}

static inline SimTime
sim_time_from_s(double s)
{
    return sim_time_from_ps(s * (double) SIM_PS_PER_S);
}

/* a + b, saturated at SIM_TIME_MAX (sums of times that may be saturated) */
static inline SimTime
sim_time_add(SimTime a, SimTime b)
{
    return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

static inline double
sim_time_to_us(SimTime t)
{
    return (double) t / (double) SIM_PS_PER_US;
}

static inline double
sim_time_to_ms(SimTime t)
{
    return (double) t / (double) SIM_PS_PER_MS;
}

static inline double
sim_time_to_s(SimTime t)
{
    return (double) t / (double) SIM_PS_PER_S;
}

/* A device clock: the cycle period is rounded to whole picoseconds once. */
typedef struct SimClock {
    uint64_t period_ps;                   /* one cycle */
} SimClock;

static inline void
sim_clock_init(SimClock *c, double freq_mhz)
{
    g_assert(freq_mhz > 0);
    c->period_ps = sim_time_from_ps(1e6 / freq_mhz);
    g_assert(c->period_ps > 0);
}

/* saturated at the horizon: a cycle count times the period may not wrap */
static inline SimTime
sim_clock_cycles_to_ps(const SimClock *c, uint64_t cycles)
{
    return cycles > SIM_TIME_HORIZON_PS / c->period_ps ? SIM_TIME_HORIZON_PS
                                                        : cycles * c->period_ps;
}

#endif /* SIM_CLOCK_H */
