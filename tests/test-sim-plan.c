/*
 * test-sim-plan.c - plan structure: building, dependency checks, cycles,
 * topological order.
 */
#include "sim/plan.h"
#include "sim/util/error.h"

static uint32_t
add(SimPlan *plan, const char *name, uint32_t proc, uint32_t n_deps,
    const uint32_t *deps)
{
    SimTask t = {
        .kind = SIM_TASK_KERNEL, .proc = proc, .node = 0,
        .slice = { 0, 4, 0, 8, 0 }, .n_deps = n_deps, .deps = (uint32_t *) deps,
        .name = (char *) name,
    };
    return sim_plan_add(plan, &t);
}

static void
test_build_and_order(void)
{
    g_autoptr(SimPlan) plan = sim_plan_new();
    g_autoptr(GError) error = NULL;
    uint32_t a = add(plan, "a", 0, 0, NULL);
    uint32_t b = add(plan, "b", 1, 1, (uint32_t[]) { a });
    uint32_t c = add(plan, "c", 0, 1, (uint32_t[]) { a });
    uint32_t d = add(plan, "d", 2, 2, (uint32_t[]) { c, b });
    sim_plan_add_dep(plan, d, b);                   /* duplicate: no-op */
    g_assert_cmpuint(sim_plan_task(plan, d)->n_deps, ==, 2);
    g_assert_true(sim_plan_check(plan, 3, &error));
    g_assert_no_error(error);

    g_autofree uint32_t *order = sim_plan_topo_order(plan, &error);
    g_assert_no_error(error);
    uint32_t want[] = { a, b, c, d };
    for (int i = 0; i < 4; i++) {
        g_assert_cmpuint(order[i], ==, want[i]);
    }
    g_assert_cmpstr(sim_plan_task(plan, d)->name, ==, "d");

    /* The smallest ready id goes first, so a plan whose deps all point
     * back comes out in id order (a queue seeded with the roots would
     * give x, z, y): the host's program order. */
    g_autoptr(SimPlan) p2 = sim_plan_new();
    uint32_t x = add(p2, "x", 0, 0, NULL);
    uint32_t y = add(p2, "y", 1, 1, (uint32_t[]) { x });
    uint32_t z = add(p2, "z", 2, 0, NULL);
    g_autofree uint32_t *o2 = sim_plan_topo_order(p2, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(o2[0], ==, x);
    g_assert_cmpuint(o2[1], ==, y);
    g_assert_cmpuint(o2[2], ==, z);

    /* A forward dep (a hand-edited recording) still orders after it. */
    g_autoptr(SimPlan) p3 = sim_plan_new();
    uint32_t f = add(p3, "f", 0, 1, (uint32_t[]) { 2 });
    uint32_t g = add(p3, "g", 1, 0, NULL);
    uint32_t h = add(p3, "h", 2, 0, NULL);
    g_assert_true(sim_plan_check(p3, 3, &error));
    g_autofree uint32_t *o3 = sim_plan_topo_order(p3, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(o3[0], ==, g);
    g_assert_cmpuint(o3[1], ==, h);
    g_assert_cmpuint(o3[2], ==, f);
}

static void
test_errors(void)
{
    g_autoptr(GError) error = NULL;
    {
        g_autoptr(SimPlan) plan = sim_plan_new();
        add(plan, "a", 0, 1, (uint32_t[]) { 7 });
        g_assert_false(sim_plan_check(plan, 3, &error));
        g_assert_cmpstr(error->message, ==,
                        "task 0 (a): deps[0]: expected a task id below 1 other than "
                        "the task itself (got 7)");
        g_clear_error(&error);
    }
    {
        g_autoptr(SimPlan) plan = sim_plan_new();
        add(plan, "a", 0, 1, (uint32_t[]) { 0 });
        g_assert_false(sim_plan_check(plan, 3, &error));
        g_assert_cmpstr(error->message, ==,
                        "task 0 (a): deps[0]: expected a task id below 1 other than "
                        "the task itself (got 0)");
        g_clear_error(&error);
    }
    {
        g_autoptr(SimPlan) plan = sim_plan_new();
        add(plan, "x", 0, 0, NULL);
        add(plan, "a", 0, 1, (uint32_t[]) { 2 });
        add(plan, "b", 1, 1, (uint32_t[]) { 1 });
        g_assert_false(sim_plan_check(plan, 3, &error));
        g_assert_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_PLAN);
        g_assert_cmpstr(error->message, ==,
                        "task 1 (a): dependency cycle (2 tasks can never start)");
        g_clear_error(&error);
    }
    {
        g_autoptr(SimPlan) plan = sim_plan_new();
        add(plan, "a", 5, 0, NULL);
        g_assert_false(sim_plan_check(plan, 3, &error));
        g_assert_cmpstr(error->message, ==,
                        "task 0 (a): proc: expected a processor index below 3 (got 5)");
        g_clear_error(&error);
    }
    {
        g_autoptr(SimPlan) plan = sim_plan_new();
        SimTask t = { .kind = SIM_TASK_KERNEL, .slice = { 4, 4, 0, 8, 0 }, .name = "e" };
        sim_plan_add(plan, &t);
        g_assert_false(sim_plan_check(plan, 3, &error));
        g_assert_cmpstr(error->message, ==,
                        "task 0 (e): slice: expected tok0 < tok1, row0 < row1 and "
                        "pad_tokens 0 or >= tok1 - tok0 (got tokens [4, 4), rows [0, 8), pad 0)");
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/plan/build-and-order", test_build_and_order);
    g_test_add_func("/sim/plan/errors", test_errors);
    return g_test_run();
}
