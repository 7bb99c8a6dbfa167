/*
 * test-hw-memory.c - the shared-DRAM fluid model: max-min shares under
 * caps and ceiling, compute-bound flows leaving bandwidth to others, and
 * completion times rescheduled exactly when flows join and leave.
 */
#include "hw/memory.h"

#include <math.h>

static void
test_waterfill_basic(void)
{
    double dem[] = { 10, INFINITY, 30, INFINITY };
    double alloc[4];
    hw_mem_waterfill(dem, 4, 100, alloc);
    /* 10 is satisfied; 90 left for three: 30 each */
    g_assert_cmpfloat_with_epsilon(alloc[0], 10, 1e-9);
    g_assert_cmpfloat_with_epsilon(alloc[1], 30, 1e-9);
    g_assert_cmpfloat_with_epsilon(alloc[2], 30, 1e-9);
    g_assert_cmpfloat_with_epsilon(alloc[3], 30, 1e-9);
}

/* Property: for random demand sets, shares never exceed demand, sum to
 * min(cap, total demand), and no flow below another's share is left
 * unsatisfied (max-min fairness). */
static void
test_waterfill_property(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    for (int trial = 0; trial < 2000; trial++) {
        uint32_t n = (uint32_t) g_rand_int_range(rng, 1, 9);
        double dem[8], alloc[8], total = 0;
        for (uint32_t i = 0; i < n; i++) {
            dem[i] = g_rand_boolean(rng) ? INFINITY : g_rand_double_range(rng, 0.1, 50);
            total += dem[i];
        }
        double cap = g_rand_double_range(rng, 1, 100);
        hw_mem_waterfill(dem, n, cap, alloc);
        double sum = 0, top = 0;
        for (uint32_t i = 0; i < n; i++) {
            g_assert_cmpfloat(alloc[i], <=, dem[i] + 1e-9);
            sum += alloc[i];
            top = MAX(top, alloc[i]);
        }
        g_assert_cmpfloat(fabs(sum - MIN(cap, total)), <, 1e-6);
        for (uint32_t i = 0; i < n; i++) {
            /* an unsatisfied flow gets the largest share there is */
            if (alloc[i] < dem[i] - 1e-9) {
                g_assert_cmpfloat(alloc[i], >=, top - 1e-9);
            }
        }
    }
}

typedef struct Done {
    SimKernel *k;
    SimTime at[4];
    int n;
} Done;

typedef struct Tag {
    Done *d;
    int i;
    HwMem *mem;
} Tag;

static void
flow_done(void *opaque)
{
    Tag *t = opaque;
    t->d->at[t->i] = sim_kernel_now(t->d->k);
    t->d->n++;
}

/*
 * tiny.json-like numbers: ceiling 16 GB/s, caps gpu 12, npu 12.
 * Flow A (gpu, 12000 B, unbounded) alone runs at 12 GB/s.  At t = 500 ns
 * flow B (npu, 4000 B, unbounded) joins: 16 GB/s are split 8 / 8.
 *   A: 6000 B moved by 500 ns, 6000 left at 8 GB/s
 *   B: 4000 B at 8 GB/s -> ends at 500 + 500 = 1000 ns
 *   A: by 1000 ns moved 4000 more (2000 left), alone again at 12 GB/s
 *      -> ends at 1000 + 166.667 ns = 1166667 ps (rounded up)
 */
static void
start_b(SimKernel *k, void *opaque)
{
    Tag *t = opaque;
    hw_mem_start(t->mem, 1, 4000, 0, flow_done, t);
}

static void
test_join_and_leave_exact(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    double caps[] = { 12, 12 };
    g_autoptr(HwMem) m = hw_mem_new(k, 16, caps, 2);
    Done d = { k, { 0 }, 0 };
    Tag ta = { &d, 0, m }, tb = { &d, 1, m };
    hw_mem_start(m, 0, 12000, 0, flow_done, &ta);
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 0), ==, 12);
    sim_kernel_schedule(k, 500000, SIM_PRIO_NORMAL, start_b, &tb);
    sim_kernel_run_until(k, 600000);
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 0), ==, 8);
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 1), ==, 8);
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpint(d.n, ==, 2);
    g_assert_cmpuint(d.at[1], ==, 1000000);
    g_assert_cmpuint(d.at[0], ==, 1166667);
    g_assert_cmpfloat_with_epsilon(hw_mem_initiator_bytes(m, 0), 12000, 1e-6);
    g_assert_cmpfloat_with_epsilon(hw_mem_initiator_bytes(m, 1), 4000, 1e-6);
}

/* A compute-bound flow (demand 2 GB/s) next to a memory-bound one: the
 * memory-bound one keeps its full cap. */
static void
test_compute_bound_leaves_cap(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    double caps[] = { 12, 12 };
    g_autoptr(HwMem) m = hw_mem_new(k, 16, caps, 2);
    Done d = { k, { 0 }, 0 };
    Tag ta = { &d, 0, m }, tb = { &d, 1, m };
    hw_mem_start(m, 0, 1000000, 0, flow_done, &ta);
    hw_mem_start(m, 1, 1000000, 2.0, flow_done, &tb);
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 0), ==, 12);
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 1), ==, 2);
    /* and never more than the ceiling together */
    g_assert_cmpfloat(hw_mem_initiator_gbps(m, 0) + hw_mem_initiator_gbps(m, 1), <=, 16);
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpint(d.n, ==, 2);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hw/memory/waterfill-basic", test_waterfill_basic);
    g_test_add_func("/hw/memory/waterfill-property", test_waterfill_property);
    g_test_add_func("/hw/memory/join-and-leave-exact", test_join_and_leave_exact);
    g_test_add_func("/hw/memory/compute-bound-leaves-cap", test_compute_bound_leaves_cap);
    return g_test_run();
}
