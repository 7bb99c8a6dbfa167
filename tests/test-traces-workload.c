/*
 * test-traces-workload.c - the workload's field table (traces/
 * workload-json.h): it writes the "workload" member of a recording byte
 * for byte as recordings have always had it (record.c writes it through
 * the table), reads it back to the same workload, and refuses bad values
 * with the JSON path.
 */
#include "traces/record.h"
#include "traces/workload-json.h"
#include "sim/util/error.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
src_path(const char *rel)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, rel, NULL);
}

/* The "workload" member of each case below as recordings have always had
 * it (written by record.c's hand-written code before it used the table):
 * recordings in the wild must keep loading and byteid keeps its bytes. */
static const char *const pinned[] = {
    "{\"prompt\":256,\"decode\":32,\"batch\":1,\"sync\":\"fast\",\"functional\":\"off\","
    "\"seed\":1,\"options\":{\"chunk_tokens\":256,\"row_align\":256,\"tok_align\":32,"
    "\"min_npu_shape\":32,\"max_npu_shape\":1024}}",
    "{\"prompt\":50,\"decode\":3,\"batch\":2,\"sync\":\"driver\",\"functional\":\"full\","
    "\"seed\":1,\"options\":{\"chunk_tokens\":256,\"row_align\":256,\"tok_align\":32,"
    "\"min_npu_shape\":32,\"max_npu_shape\":1024},\"render\":{\"fps\":60,\"frame_ms\":8.5,"
    "\"frame_mb\":48,\"llm_priority\":\"low\"}}",
    "{\"prompt\":256,\"decode\":32,\"batch\":1,\"sync\":\"fast\",\"functional\":\"layers=3\","
    "\"seed\":123456789012,\"options\":{\"chunk_tokens\":96,\"row_align\":256,"
    "\"tok_align\":32,\"min_npu_shape\":32,\"max_npu_shape\":1024}}",
    "{\"prompt\":256,\"decode\":32,\"batch\":1,\"sync\":\"fast\",\"functional\":\"off\","
    "\"seed\":1,\"options\":{\"chunk_tokens\":256,\"row_align\":256,\"tok_align\":32,"
    "\"min_npu_shape\":32,\"max_npu_shape\":1024},\"render\":{\"fps\":30,\"frame_ms\":4,"
    "\"frame_mb\":0,\"llm_priority\":\"normal\"}}",
};

/* The "workload" member trc_record_write() writes for @w, printed compactly. */
static char *
recorded_workload(const SimWorkload *w)
{
    g_autofree char *cdir = src_path("configs"), *mdir = src_path("models");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("tiny", cdir, &error);
    g_autoptr(MdlSpec) spec = mdl_spec_load("tiny", mdir, &error);
    g_assert_no_error(error);
    SimWorkload small = *w;
    small.decode = MIN(w->decode, 2);      /* the plan's size does not matter here */
    g_autoptr(SimPlan) plan = sim_run_plan(soc, spec, sim_policy_find("gpu-only"), &small,
                                           NULL, &error);
    g_assert_no_error(error);
    g_autofree char *dir = g_dir_make_tmp("hs-wl-XXXXXX", &error);
    g_autofree char *file = g_build_filename(dir, "rec.json", NULL);
    g_assert_true(trc_record_write(file, soc, spec, "gpu-only", w, plan, &error));
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
    g_unlink(file);
    g_rmdir(dir);
    g_autoptr(cJSON) root = cJSON_Parse(text);
    return cJSON_PrintUnformatted(cJSON_GetObjectItem(root, "workload"));
}

static void
test_same_as_record(void)
{
    SimWorkload cases[4];
    for (int i = 0; i < 4; i++) {
        sim_workload_init(&cases[i]);
    }
    cases[1].prompt = 50;
    cases[1].decode = 3;
    cases[1].batch = 2;
    cases[1].check_layers = 0;
    cases[1].sync = SIM_SYNC_DRIVER;
    cases[1].render = (SimRender) { .fps = 60, .frame_ms = 8.5, .frame_mb = 48,
                                    .llm_priority = HW_PRIO_LOW };
    cases[2].check_layers = 3;
    cases[2].seed = 123456789012ull;
    cases[2].opts.chunk_tokens = 96;
    cases[3].check_layers = -1;
    cases[3].render = (SimRender) { .fps = 30, .frame_ms = 4, .frame_mb = 0,
                                    .llm_priority = HW_PRIO_NORMAL };
    for (int i = 0; i < 4; i++) {
        g_autoptr(cJSON) j = trc_workload_to_json(&cases[i]);
        g_autofree char *got = cJSON_PrintUnformatted(j);
        g_assert_cmpstr(got, ==, pinned[i]);
        g_autofree char *rec = recorded_workload(&cases[i]);
        g_assert_cmpstr(rec, ==, pinned[i]);

        /* and back */
        g_autoptr(GError) error = NULL;
        SimWorkload w;
        sim_workload_init(&w);
        g_assert_true(trc_workload_from_json(j, "$.workload", &w, &error));
        g_assert_no_error(error);
        g_assert_cmpuint(w.prompt, ==, cases[i].prompt);
        g_assert_cmpuint(w.decode, ==, cases[i].decode);
        g_assert_cmpuint(w.batch, ==, cases[i].batch);
        g_assert_cmpint(w.sync, ==, cases[i].sync);
        g_assert_cmpint(w.check_layers, ==, cases[i].check_layers);
        g_assert_cmpuint(w.seed, ==, cases[i].seed);
        g_assert_true(memcmp(&w.opts, &cases[i].opts, sizeof(w.opts)) == 0);
        g_assert_cmpfloat(w.render.fps, ==, cases[i].render.fps);
        if (cases[i].render.fps > 0) {
            g_assert_cmpfloat(w.render.frame_ms, ==, cases[i].render.frame_ms);
            g_assert_cmpfloat(w.render.frame_mb, ==, cases[i].render.frame_mb);
            g_assert_cmpint(w.render.llm_priority, ==, cases[i].render.llm_priority);
        }
    }
}

static void
test_bad(void)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        { "3", "$.workload: expected an object (got 3)" },
        { "{\"prompt\":0,\"decode\":1,\"batch\":1,\"sync\":\"fast\",\"functional\":\"off\","
          "\"seed\":1,\"options\":{\"chunk_tokens\":1,\"row_align\":1,\"tok_align\":1,"
          "\"min_npu_shape\":1,\"max_npu_shape\":1}}",
          "$.workload.prompt: expected an integer in [1, 32768] (got 0)" },
        { "{\"prompt\":1,\"decode\":1,\"batch\":1,\"sync\":\"fast\",\"functional\":\"some\","
          "\"seed\":1,\"options\":{\"chunk_tokens\":1,\"row_align\":1,\"tok_align\":1,"
          "\"min_npu_shape\":1,\"max_npu_shape\":1}}",
          "$.workload.functional: expected off, full or layers=N (got \"some\")" },
        { "{\"prompt\":1,\"decode\":1,\"batch\":1,\"sync\":\"fast\",\"functional\":\"off\","
          "\"seed\":1,\"options\":{\"chunk_tokens\":1,\"row_align\":1,\"tok_align\":1,"
          "\"min_npu_shape\":1,\"max_npu_shape\":1},\"render\":{\"fps\":60,\"frame_ms\":8,"
          "\"frame_mb\":1,\"llm_priority\":\"high\"}}",
          "$.workload.render.llm_priority: expected one of low, normal (got \"high\")" },
        { "{\"prompt\":1,\"decode\":1,\"batch\":1,\"sync\":\"fast\",\"seed\":1,"
          "\"options\":{\"chunk_tokens\":1,\"row_align\":1,\"tok_align\":1,"
          "\"min_npu_shape\":1,\"max_npu_shape\":1}}",
          "$.workload: missing key \"functional\"" },
        { "{\"prompt\":1,\"decode\":65537,\"batch\":1,\"sync\":\"fast\",\"functional\":\"off\","
          "\"seed\":1,\"options\":{\"chunk_tokens\":1,\"row_align\":1,\"tok_align\":1,"
          "\"min_npu_shape\":1,\"max_npu_shape\":1}}",
          "$.workload.decode: expected an integer in [0, 65536] (got 65537)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(cJSON) j = cJSON_Parse(cases[i].json);
        g_autoptr(GError) error = NULL;
        SimWorkload w;
        sim_workload_init(&w);
        g_assert_false(trc_workload_from_json(j, "$.workload", &w, &error));
        g_assert_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE);
        g_assert_cmpstr(error->message, ==, cases[i].msg);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/traces/workload/same-as-record", test_same_as_record);
    g_test_add_func("/traces/workload/bad", test_bad);
    return g_test_run();
}
