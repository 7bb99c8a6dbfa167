/*
 * test-traces-perfetto.c - the Perfetto writer: valid JSON, exact
 * timestamps, slices on one track never overlap, flows for syncs, counters
 * for DRAM; written as a run goes: markers, submissions' args, a step
 * filter, several runs in one file.
 */
#include "traces/perfetto.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>

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
    /* a lone run's lanes are named after their processor too: Perfetto
     * titles them "npu lane 0", "npu lane 1" (not "lane 1 1") */
    g_assert_nonnull(strstr(text, "\"tid\":1,\"args\":{\"name\":\"npu lane\"}}"));
    g_assert_null(strstr(text, "\"name\":\"lane "));

    int slices = 0, flows_s = 0, flows_f = 0, counters = 0;
    int lane_of_wk = -1, lane_of_wq = -1;
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, events) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
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
    g_assert_cmpint(slices, ==, 5);                  /* 4 tasks and the prefill */
    g_assert_cmpint(lane_of_wq, !=, lane_of_wk);     /* overlapping -> two lanes */
    g_assert_cmpint(flows_s, ==, 3);                 /* 2 producers + 1 consumer */
    g_assert_cmpint(flows_f, ==, 3);
    g_assert_cmpint(counters, ==, 6);                /* per-initiator + total, x3 */
}

/* Count events of @ph (and @name if not NULL) in @root; the largest pid. */
static int
count(const cJSON *root, const char *ph, const char *name, int *max_pid)
{
    int n = 0;
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        const cJSON *pid = cJSON_GetObjectItem(e, "pid");
        if (max_pid && pid && pid->valueint > *max_pid) {
            *max_pid = pid->valueint;
        }
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, ph) == 0 &&
            (name == NULL || strcmp(cJSON_GetObjectItem(e, "name")->valuestring, name) == 0)) {
            n++;
        }
    }
    return n;
}

/* A run fed through the observer as it goes: a prefill task, then decode
 * steps 0..3 of one task each, each submitted by the host; two labelled
 * runs in one file (a comparison), the second keeping decode steps 1..2
 * only, each with processes named after its label. */
static void
test_streamed(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-trace-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "t.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(SimPlan) plan = sim_plan_new();
    SimTask t = { .kind = SIM_TASK_KERNEL, .proc = 0, .node = 1,
                  .slice = { 0, 1, 0, 8, 0 }, .name = "L0.wq" };
    for (uint32_t i = 0; i < 5; i++) {
        t.phase = i ? SIM_PHASE_DECODE : SIM_PHASE_PREFILL;
        t.step = i ? i - 1 : 0;
        t.n_deps = i ? 1 : 0;
        t.deps = (uint32_t[]) { i ? i - 1 : 0 };
        sim_plan_add(plan, &t);
    }
    const char *procs[] = { "gpu", "cpu" };
    TrcTrace *tr = trc_trace_open(path, &error);
    g_assert_no_error(error);
    for (int run = 0; run < 2; run++) {
        if (run == 1) {
            trc_trace_set_steps(tr, 1, 2, FALSE);
        }
        trc_trace_begin_run(tr, run ? "b" : "a", procs, 2, 1, 0);
        const SimExecObserver *o = &trc_trace_observer;
        for (uint32_t i = 0; i < 5; i++) {
            const SimTask *ti = sim_plan_task(plan, i);
            SimTime a = 10000000 * (SimTime) i, b = a + 5000000;
            o->span(tr, 1, a - 1000000, a, i, ti);
            o->task_start(tr, i, ti, a);
            SimBwSample bw = { a, 0, 10.0 * i };
            o->bw(tr, &bw);
            o->task_end(tr, plan, i, ti, a, b);
        }
        trc_trace_end_run(tr);
    }
    /* nothing in place before the close */
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    const char *keys[] = { "soc", NULL };
    const char *vals[] = { "tiny" };
    g_assert_true(trc_trace_close(tr, keys, vals, &error));
    g_assert_no_error(error);

    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    int max_pid = 0;
    /* run a: 5 tasks, 5 submissions, the prefill; run b: steps 1, 2 and
     * their submissions */
    g_assert_cmpint(count(root, "X", "L0.wq", &max_pid), ==, 5 + 2);
    g_assert_cmpint(count(root, "X", "submit", NULL), ==, 5 + 2);
    g_assert_cmpint(count(root, "X", "prefill", NULL), ==, 1);
    g_assert_cmpint(count(root, "i", NULL, NULL), ==, 4 + 2);
    g_assert_cmpint(count(root, "i", "decode step 2", NULL), ==, 2);
    /* each run a process per processor (gpu, cpu), sync, DRAM and
     * request: run a's pids 1-5, run b's 6-10 */
    g_assert_cmpint(max_pid, ==, 10);
    /* a submission names what it submits; it is on the cpu's
     * "submissions" track */
    g_assert_nonnull(strstr(text, "\"name\":\"submit\",\"cat\":\"control\",\"ph\":\"X\","
                                  "\"pid\":2,\"tid\":100000,\"ts\":9.000,\"dur\":1.000,"
                                  "\"args\":{\"task\":1,\"kind\":\"kernel\",\"on\":\"gpu\","
                                  "\"kernel\":\"L0.wq\"}"));
    /* processes named after the run's label and the track group */
    g_assert_nonnull(strstr(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                                  "\"args\":{\"name\":\"a gpu\"}}"));
    g_assert_nonnull(strstr(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,"
                                  "\"args\":{\"name\":\"b gpu\"}}"));
    g_assert_nonnull(strstr(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,"
                                  "\"args\":{\"name\":\"b request\"}}"));
    /* a lane's tid is its number and its name the processor's: Perfetto
     * titles the track "<name> <tid>", "gpu lane 0" */
    g_assert_nonnull(strstr(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":6,"
                                  "\"tid\":0,\"args\":{\"name\":\"gpu lane\"}}"));
    g_assert_nonnull(strstr(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,"
                                  "\"tid\":100000,\"args\":{\"name\":\"submissions\"}}"));
    /* every track's tid below the extra tracks' (no run-wide numbering) */
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        const cJSON *tid = cJSON_GetObjectItem(e, "tid");
        g_assert_true(tid == NULL || tid->valuedouble <= 100001);
    }
    /* the DRAM counters under the run's DRAM process */
    g_assert_nonnull(strstr(text, "{\"name\":\"dram_total_gbps\",\"ph\":\"C\",\"pid\":9,"));

    /* an aborted trace leaves no file */
    g_autofree char *gone = g_build_filename(dir, "gone.json", NULL);
    TrcTrace *ab = trc_trace_open(gone, &error);
    trc_trace_begin_run(ab, NULL, procs, 2, 1, 0);
    trc_trace_abort(ab);
    g_assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
    g_unlink(path);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/traces/perfetto/structure", test_structure);
    g_test_add_func("/traces/perfetto/streamed", test_streamed);
    return g_test_run();
}
