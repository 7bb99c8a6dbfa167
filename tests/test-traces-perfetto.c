/*
 * test-traces-perfetto.c - the Perfetto writer: valid JSON, exact
 * timestamps, slices on one track never overlap, sorted by time, flows for
 * syncs, counters for DRAM.
 */
#include "traces/perfetto.h"
#include "sim/util/json.h"

#include <string.h>

static void
test_structure(void)
{
    g_autoptr(SimPlan) plan = sim_plan_new();
    /* two overlapping NPU tasks (must land on two lanes), a GPU task, a sync */
    SimTask k = { .kind = SIM_TASK_KERNEL, .proc = 1, .node = 3,
                  .slice = { 0, 256, 0, 4096, 0 }, .name = "L0.wq[rows 0:4096]",
                  .work = { .m = 256, .k = 4096, .n = 4096, .flops = 8589934592ull } };
    uint32_t a = sim_plan_add(plan, &k);
    k.name = "L0.wk";
    uint32_t b = sim_plan_add(plan, &k);
    SimTask s = { .kind = SIM_TASK_SYNC, .proc = 2, .node = -1, .sync = SIM_SYNC_FAST,
                  .sync_from = 1, .sync_to = 0, .n_deps = 2,
                  .deps = (uint32_t[]) { a, b }, .name = "sync npu->gpu" };
    uint32_t c = sim_plan_add(plan, &s);
    SimTask g = { .kind = SIM_TASK_KERNEL, .proc = 0, .node = 4,
                  .slice = { 0, 256, 0, 4096, 0 }, .n_deps = 1,
                  .deps = (uint32_t[]) { c }, .name = "L0.rope" };
    sim_plan_add(plan, &g);

    SimTaskTime times[] = {
        { 1000000, 3500001 },          /* 1.000000 .. 3.500001 us */
        { 2000000, 4000000 },
        { 4000000, 4003000 },
        { 4003000, 5123457 },
    };
    const char *procs[] = { "gpu", "npu", "cpu" };
    SimBwSample bw[] = { { 1000000, 1, 30.5 }, { 2000000, 1, 40.0 }, { 4000000, 1, 0 } };
    const char *keys[] = { "soc", NULL };
    const char *vals[] = { "tiny" };
    TrcInput in = { plan, times, procs, 3, bw, 3, keys, vals, NULL, 0, 0, NULL, 0, 0, NULL, 0 };

    g_autofree char *text = trc_perfetto_to_string(&in);
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    g_assert_true(cJSON_IsArray(events));
    g_assert_cmpstr(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "otherData"), "soc")
                    ->valuestring, ==, "tiny");

    /* whole nanoseconds, each end-point rounded once from ps (3500001 ps
     * ends at 3500 ns, 5123457 ps at 5123 ns), never through a double */
    g_assert_nonnull(strstr(text, "\"ts\":1.000,\"dur\":2.500"));
    g_assert_nonnull(strstr(text, "\"ts\":4.003,\"dur\":1.120"));

    int slices = 0, flows_s = 0, flows_f = 0, counters = 0;
    double last_ts = -1;
    int lane_of_wk = -1, lane_of_wq = -1;
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, events) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        const cJSON *ts = cJSON_GetObjectItem(e, "ts");
        if (ts) {
            g_assert_cmpfloat(ts->valuedouble, >=, last_ts);   /* sorted */
            last_ts = ts->valuedouble;
        }
        if (strcmp(ph, "X") == 0) {
            slices++;
            const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
            int tid = cJSON_GetObjectItem(e, "tid")->valueint;
            if (strcmp(name, "L0.wk") == 0) {
                lane_of_wk = tid;
            } else if (g_str_has_prefix(name, "L0.wq")) {
                lane_of_wq = tid;
                const cJSON *args = cJSON_GetObjectItem(e, "args");
                g_assert_cmpint(cJSON_GetObjectItem(args, "task")->valueint, ==, 0);
                g_assert_cmpfloat(cJSON_GetObjectItem(args, "flops")->valuedouble, ==,
                                  8589934592.0);
            }
        } else if (strcmp(ph, "s") == 0) {
            flows_s++;
        } else if (strcmp(ph, "f") == 0) {
            flows_f++;
        } else if (strcmp(ph, "C") == 0) {
            counters++;
        }
    }
    g_assert_cmpint(slices, ==, 4);
    g_assert_cmpint(lane_of_wq, !=, lane_of_wk);     /* overlapping -> two lanes */
    g_assert_cmpint(flows_s, ==, 3);                 /* 2 producers + 1 consumer */
    g_assert_cmpint(flows_f, ==, 3);
    g_assert_cmpint(counters, ==, 6);                /* per-initiator + total, x3 */
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/traces/perfetto/structure", test_structure);
    return g_test_run();
}
