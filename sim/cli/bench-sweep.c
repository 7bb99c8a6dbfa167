/*
 * bench-sweep.c - timing-only sweep points per second with 1 and 2
 * workers: what a design-space grid costs, and what forking a process
 * per point and storing it in SQLite leave of the second core's gain.
 */
#include "sim/cli/bench.h"
#include "sim/cli/sweep.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <stdio.h>

/* sd8gen3, llama-3.2-1b, timing only: 2 policies x 3 TCM sizes x 4
 * prompts (--quick: x 1 prompt) */
static const char spec_text[] =
    "{\"base\": {\"soc\": \"sd8gen3\", \"model\": \"llama-3.2-1b\", \"functional\": \"off\","
    " \"decode\": 4},"
    " \"axes\": {\"policy\": [\"gpu-only\", \"hetero-tensor\"],"
    " \"npu.stationary_kib\": [360, 1024, 4096], \"prompt\": %s}}";

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    g_autofree char *dir = g_dir_make_tmp("hs-bench-sweep-XXXXXX", error);
    if (dir == NULL) {
        return FALSE;
    }
    g_autofree char *path = g_build_filename(dir, "spec.json", NULL);
    g_autofree char *text = g_strdup_printf(spec_text, quick ? "[64]" : "[64, 128, 256, 512]");
    if (!g_file_set_contents(path, text, -1, error)) {
        return FALSE;
    }
    g_autoptr(HsSweepSpec) spec = hs_sweep_spec_load(path, NULL, error);
    if (spec == NULL) {
        return FALSE;
    }
    double rate[2] = { 0, 0 };
    gboolean ok = TRUE;
    for (int jobs = 1; jobs <= 2 && ok; jobs++) {
        g_autofree char *dbp = g_strdup_printf("%s/bench-%d.db", dir, jobs);
        sqlite3 *db = hs_sweep_db_open(dbp, spec->names, error);
        if (db == NULL) {
            ok = FALSE;
            break;
        }
        HsSweepRun r = { .spec = spec, .db = db, .todo = g_array_new(FALSE, FALSE, sizeof(int)),
                         .jobs = jobs };
        for (int i = 0; i < (int) spec->points->len; i++) {
            g_array_append_val(r.todo, i);
        }
        double t0 = hs_bench_now_s();
        ok = hs_sweep_run_local(&r, error);
        rate[jobs - 1] = spec->points->len / (hs_bench_now_s() - t0);
        g_array_unref(r.todo);
        sqlite3_close(db);
        for (const char *const *sfx = (const char *const[]) { "", "-wal", "-shm", NULL };
             *sfx; sfx++) {
            g_autofree char *f = g_strdup_printf("%s%s", dbp, *sfx);
            g_unlink(f);
        }
    }
    g_unlink(path);
    g_rmdir(dir);
    if (!ok) {
        return FALSE;
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "sweep");
        cJSON_AddNumberToObject(root, "points", spec->points->len);
        cJSON_AddNumberToObject(root, "points_per_s_1_worker", rate[0]);
        cJSON_AddNumberToObject(root, "points_per_s_2_workers", rate[1]);
        g_autofree char *s = hs_json_print(root, FALSE);
        printf("%s\n", s);
    } else {
        printf("sweep, %u timing-only points (sd8gen3, llama-3.2-1b, prompt 64-512): "
               "%.1f points/s with 1 worker, %.1f with 2 (x%.2f; %u cores)\n",
               spec->points->len, rate[0], rate[1], rate[1] / rate[0],
               g_get_num_processors());
    }
    return TRUE;
}

const HsBench hs_bench_sweep = {
    "sweep", "timing-only sweep points per second with 1 and 2 workers", run,
};
