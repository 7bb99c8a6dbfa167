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

static inline SimTime
sim_time_from_us(double us)
{
    g_assert(us >= 0);
    return (SimTime) (us * (double) SIM_PS_PER_US + 0.5);
}

static inline SimTime
sim_time_from_s(double s)
{
    g_assert(s >= 0);
    return (SimTime) (s * (double) SIM_PS_PER_S + 0.5);
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
    c->period_ps = (uint64_t) (1e6 / freq_mhz + 0.5);
    g_assert(c->period_ps > 0);
}

static inline SimTime
sim_clock_cycles_to_ps(const SimClock *c, uint64_t cycles)
{
    return cycles * c->period_ps;
}

#endif /* SIM_CLOCK_H */
