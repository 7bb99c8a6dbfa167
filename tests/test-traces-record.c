/*
 * test-traces-record.c - recordings: a run recorded and replayed gives the
 * same results; the same plan re-times on another SoC; and a corpus of
 * broken recordings (tests/data/bad-traces, made by make.py there) each
 * fails with its message — never a crash or a hang (CI runs this under
 * AddressSanitizer and UndefinedBehaviorSanitizer too).
 */
#include "traces/record.h"
#include "sim/util/error.h"

#include <glib/gstdio.h>
#include <string.h>


/* Field by field, every field of SimWork (sim/plan.h): the struct has
 * padding, which a copy need not keep (clang's ASan build did not). */
static gboolean
work_equal(const SimWork *a, const SimWork *b)
{
    return a->op == b->op && a->prec == b->prec && a->m == b->m && a->k == b->k &&
           a->n == b->n && a->weight_lhs == b->weight_lhs && a->flops == b->flops &&
           a->read_bytes == b->read_bytes && a->write_bytes == b->write_bytes &&
           a->serial_elems == b->serial_elems;
}
static char *
src_path(const char *rel)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, rel, NULL);
}

static HwSoc *
soc(const char *name)
{
    g_autofree char *dir = src_path("configs");
    g_autoptr(GError) error = NULL;
    HwSoc *s = hw_soc_load(name, dir, &error);
    g_assert_no_error(error);
    return s;
}

static MdlSpec *
tiny_model(void)
{
    g_autofree char *mdir = src_path("models");
    g_autoptr(GError) error = NULL;
    MdlSpec *spec = mdl_spec_load("tiny", mdir, &error);
    g_assert_no_error(error);
    return spec;
}

/* A plan with shadow tasks (mllm-npu: FFN-down's shadow linear, whose
 * scalar scan is a work field of its own) recorded and read back: the
 * same work, to the scan's element count, and the same times. */
static void
test_round_trip_shadow(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) tiny = soc("tiny");
    g_autoptr(MdlSpec) spec = tiny_model();
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 40;
    w.decode = 1;
    SimRunReport r1 = { 0 }, r2 = { 0 };
    SimExecResult x1 = { 0 }, x2 = { 0 };
    g_autoptr(SimPlan) plan = NULL;
    g_assert_true(sim_run(tiny, spec, sim_policy_find("mllm-npu"), &w, NULL, &r1, &x1, &plan,
                          &error));
    g_autofree char *dir = g_dir_make_tmp("hs-rec-XXXXXX", &error);
    g_autofree char *file = g_build_filename(dir, "rec.json", NULL);
    g_assert_true(trc_record_write(file, tiny, spec, "mllm-npu", &w, plan, &error));
    g_autoptr(TrcRecording) rec = trc_record_read(file, &error);
    g_assert_no_error(error);
    g_autoptr(SimPlan) again = trc_record_plan_for(rec, tiny, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(sim_plan_len(again), ==, sim_plan_len(plan));
    uint32_t scans = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *a = sim_plan_task(plan, i), *b = sim_plan_task(again, i);
        g_assert_true(work_equal(&a->work, &b->work));
        scans += a->kind == SIM_TASK_SHADOW && a->work.serial_elems > 0;
    }
    g_assert_cmpuint(scans, >, 0);
    g_assert_true(sim_run_execute(tiny, rec->spec, rec->policy, again, &rec->workload, NULL,
                                  &r2, &x2, &error));
    g_assert_cmpint(memcmp(x1.times, x2.times, sizeof(SimTaskTime) * x1.n_tasks), ==, 0);

    /* a scan longer than its node's inputs and outputs is refused */
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(file, &text, NULL, &error));
    g_autoptr(cJSON) j = cJSON_Parse(text);
    cJSON *tasks = cJSON_GetObjectItem(j, "tasks"), *t;
    int idx = 0;
    cJSON_ArrayForEach(t, tasks) {
        if (g_strcmp0(cJSON_GetStringValue(cJSON_GetObjectItem(t, "kind")), "shadow") == 0) {
            break;
        }
        idx++;
    }
    g_assert_nonnull(t);
    cJSON_SetNumberValue(cJSON_GetObjectItem(t, "serial_elems"), 1e12);
    g_autofree char *edited = cJSON_PrintUnformatted(j);
    g_assert_true(g_file_set_contents(file, edited, -1, &error));
    g_autoptr(TrcRecording) bad = trc_record_read(file, &error);
    g_assert_null(bad);
    g_autofree char *want = g_strdup_printf("$.tasks[%d].serial_elems: expected at most", idx);
    g_assert_nonnull(strstr(error->message, want));

    sim_exec_result_clear(&x1);
    sim_exec_result_clear(&x2);
    sim_run_report_clear(&r1);
    sim_run_report_clear(&r2);
    g_unlink(file);
    g_rmdir(dir);
}

static void
test_round_trip(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) tiny = soc("tiny");
    g_autoptr(MdlSpec) spec = tiny_model();
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 50;
    w.decode = 3;
    w.batch = 2;
    w.check_layers = 0;
    w.render = (SimRender) { .fps = 1000, .frame_ms = 0.01, .frame_mb = 1,
                             .llm_priority = HW_PRIO_LOW };
    SimRunReport r1 = { 0 }, r2 = { 0 };
    SimExecResult x1 = { 0 }, x2 = { 0 };
    g_autoptr(SimPlan) plan = NULL;
    g_assert_true(sim_run(tiny, spec, sim_policy_find("hetero-tensor"), &w, NULL, &r1, &x1,
                          &plan, &error));
    g_autofree char *dir = g_dir_make_tmp("hs-rec-XXXXXX", &error);
    g_autofree char *file = g_build_filename(dir, "rec.json", NULL);
    g_assert_true(trc_record_write(file, tiny, spec, "hetero-tensor", &w, plan, &error));
    g_assert_no_error(error);

    g_autoptr(TrcRecording) rec = trc_record_read(file, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(rec->policy, ==, "hetero-tensor");
    g_assert_cmpuint(rec->workload.prompt, ==, 50);
    g_assert_cmpint(rec->workload.check_layers, ==, 0);
    g_assert_cmpint(memcmp(&rec->workload.render, &w.render, sizeof(SimRender)), ==, 0);
    g_autoptr(SimPlan) again = trc_record_plan_for(rec, tiny, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(sim_plan_len(again), ==, sim_plan_len(plan));
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *a = sim_plan_task(plan, i), *b = sim_plan_task(again, i);
        g_assert_cmpstr(a->name, ==, b->name);
        g_assert_cmpuint(a->proc, ==, b->proc);
        g_assert_cmpuint(a->n_deps, ==, b->n_deps);
        g_assert_true(work_equal(&a->work, &b->work));
        g_assert_cmpint(memcmp(&a->slice, &b->slice, sizeof(SimSlice)), ==, 0);
    }
    /* the recorded plan re-executed: the very same times and values */
    g_assert_true(sim_run_execute(tiny, rec->spec, rec->policy, again, &rec->workload, NULL,
                                  &r2, &x2, &error));
    g_assert_cmpint(memcmp(x1.times, x2.times, sizeof(SimTaskTime) * x1.n_tasks), ==, 0);
    g_assert_cmpuint(x1.frames->len, >=, 1);                 /* and the game's frames */
    g_assert_cmpuint(x1.frames->len, ==, x2.frames->len);
    g_assert_cmpint(memcmp(x1.frames->data, x2.frames->data,
                           sizeof(SimFrame) * x1.frames->len), ==, 0);
    g_assert_true(r2.check.match);
    g_assert_cmpfloat(r1.check.max_abs_err, ==, r2.check.max_abs_err);

    /* the same plan on another phone: re-timed, values unchanged */
    g_autoptr(HwSoc) d9300 = soc("dimensity9300");
    g_autoptr(SimPlan) other = trc_record_plan_for(rec, d9300, &error);
    g_assert_no_error(error);
    SimRunReport r3 = { 0 };
    g_assert_true(sim_run_execute(d9300, rec->spec, rec->policy, other, &rec->workload, NULL,
                                  &r3, NULL, &error));
    g_assert_cmpfloat(r3.prefill.time_ms, !=, r1.prefill.time_ms);
    g_assert_true(r3.check.match);

    sim_exec_result_clear(&x1);
    sim_exec_result_clear(&x2);
    sim_run_report_clear(&r1);
    sim_run_report_clear(&r2);
    sim_run_report_clear(&r3);
    g_unlink(file);
    g_rmdir(dir);
}

static void
test_write_fails_cleanly(void)
{
    g_autoptr(HwSoc) tiny = soc("tiny");
    g_autoptr(GError) error = NULL;
    g_autofree char *mdir = src_path("models");
    g_autoptr(MdlSpec) spec = mdl_spec_load("tiny", mdir, &error);
    SimWorkload w;
    sim_workload_init(&w);
    g_autoptr(SimPlan) plan = sim_plan_new();
    g_assert_false(trc_record_write("/nonexistent/dir/rec.json", tiny, spec, "x", &w, plan,
                                    &error));
    g_assert_true(g_str_has_prefix(error->message, "/nonexistent/dir/rec.json: cannot create file"));
}

typedef struct Bad {
    const char *file;
    const char *message;     /* after "PATH: " */
} Bad;

static const Bad bad[] = {
    { "array-root.json",
      "$: expected an object (got an array)" },
    { "bad-model-config.json",
      "$.model.config.hidden_size: expected an integer in [1, 65536] (got \"x\")" },
    { "bad-sync-mechanism.json",
      "$.tasks[2].sync: expected one of driver, fast (got \"telepathy\")" },
    { "bad-workload.json",
      "$.workload.prompt: expected an integer in [1, 32768] (got 0)" },
    { "cycle.json",
      "$.tasks: task 3 (L0.wq[pad 32]): dependency cycle (81 tasks can never start)" },
    { "dangling-dep.json",
      "$.tasks[3].deps[0]: expected a task id in [0, 89) other than 3 (got 999999)" },
    { "empty.json",
      "empty file" },
    { "functional-bad.json",
      "$.workload.functional: expected off, full or layers=N (got \"sometimes\")" },
    { "render-bad.json",
      "$.workload.render.llm_priority: expected one of low, normal (got \"urgent\")" },
    /* its rows halved, its work not: the work is checked against the
     * slice first (a hole alone: hostile/record/batch-mismatch.json) */
    { "hole.json",
      "$.tasks[3].n: expected 32, the slice's 32 rows (got 64)" },
    { "huge-number.json",
      "$.tasks[3].m: expected an integer in [0, 1073741824] (got 1e+30)" },
    { "id-mismatch.json",
      "$.tasks[3].id: expected 3 (got 103)" },
    { "missing-deps.json",
      "$.tasks[3]: missing key \"deps\"" },
    { "negative-size.json",
      "$.tasks[3].tokens: expected a pair of integers 0 <= start < end <= 8 (got [-4, 8])" },
    { "node-out-of-range.json",
      "$.tasks[3].node: expected an integer in [0, 32] (got 99999)" },
    { "not-json.json",
      "invalid JSON at line 1, column 1" },
    { "op-mismatch.json",
      "$.tasks[3].op: expected \"matmul\", the op of node 2 (L0.wq) (got \"attention\")" },
    { "overlap.json",
      "$.tasks[89]: slice overlaps task 3's (both write node 2, L0.wq)" },
    { "pad-too-small.json",
      "$.tasks[3].pad: expected 0 or at least the slice's 8 tokens (got 2)" },
    { "processors-empty.json",
      "$.processors: expected an array of 1 to 64 processors (got an array)" },
    { "self-dep.json",
      "$.tasks[3].deps[0]: expected a task id in [0, 89) other than 3 (got 3)" },
    { "step-out-of-range.json",
      "$.tasks[56].step: expected 0 (got 5)" },
    { "tasks-empty.json",
      "$.tasks: expected at least one task (got an empty array)" },
    { "tasks-not-array.json",
      "$.tasks: expected an array of tasks (got an object)" },
    { "tokens-not-pair.json",
      "$.tasks[3].tokens: expected a pair [start, end] (got an array)" },
    { "truncated.json",
      "invalid JSON at line 1, column 284" },
    { "unknown-kind.json",
      "$.tasks[3].kind: expected one of kernel, sync, prepare, shadow (got \"magic\")" },
    { "unknown-processor.json",
      "$.tasks[3].proc: expected a processor of $.processors (cpu, gpu, npu) (got \"dsp\")" },
    { "version-2.json",
      "$.hs_record_version: expected 1, the version this hetero-sim reads (got 2)" },
    { "version-missing.json",
      "$: missing key \"hs_record_version\"" },
    { "wrong-type.json",
      "$.tasks[3].flops: expected an integer in [0, 1000000000000000000] (got \"many\")" },
};

static void
test_bad(gconstpointer data)
{
    const Bad *b = data;
    g_autofree char *rel = g_build_filename("tests/data/bad-traces", b->file, NULL);
    g_autofree char *path = src_path(rel);
    g_autoptr(GError) error = NULL;
    g_autoptr(TrcRecording) r = trc_record_read(path, &error);
    g_assert_null(r);
    g_assert_nonnull(error);
    g_autofree char *want = g_strdup_printf("%s: %s", path, b->message);
    g_assert_cmpstr(error->message, ==, want);
}

static void
test_base_is_valid(void)
{
    g_autofree char *path = src_path("tests/data/bad-traces/base.json");
    g_autoptr(GError) error = NULL;
    g_autoptr(TrcRecording) r = trc_record_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(sim_plan_len(r->plan), >, 20);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/traces/record/round-trip", test_round_trip);
    g_test_add_func("/traces/record/round-trip-shadow", test_round_trip_shadow);
    g_test_add_func("/traces/record/write-fails-cleanly", test_write_fails_cleanly);
    g_test_add_func("/traces/record/base-is-valid", test_base_is_valid);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *p = g_strdup_printf("/traces/record/bad/%s", bad[i].file);
        g_test_add_data_func(p, &bad[i], test_bad);
    }
    return g_test_run();
}
