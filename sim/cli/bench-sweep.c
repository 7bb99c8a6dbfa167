/*
 * bench-sweep.c - timing-only sweep points per second with 1 and 2
 * workers: what a design-space grid costs, and what the workers' pipes
 * and storing each point in SQLite leave of the second core's gain; and
 * a checked sweep's CPU seconds, whose points share one worker's encoded
 * weights.
 */
#include "sim/cli/bench.h"
#include "sim/cli/sweep.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/resource.h>

/* sd8gen3, llama-3.2-1b, timing only: 2 policies x 3 TCM sizes x 4
 * prompts (--quick: x 1 prompt) */
static const char spec_text[] =
    "{\"base\": {\"soc\": \"sd8gen3\", \"model\": \"llama-3.2-1b\", \"functional\": \"off\","
    " \"decode\": 4},"
    " \"axes\": {\"policy\": [\"gpu-only\", \"hetero-tensor\"],"
    " \"npu.stationary_kib\": [360, 1024, 4096], \"prompt\": %s}}";

/* checked: the first layer's values computed, one policy, the DRAM
 * ceiling varied, so every point needs the same encoded weights: what a
 * worker's weight cache saves after its first point (--quick: 2 points) */
static const char checked_text[] =
    "{\"base\": {\"soc\": \"sd8gen3\", \"model\": \"llama-3.2-1b\","
    " \"functional\": \"layers=1\", \"prompt\": 128, \"decode\": 4,"
    " \"policy\": \"hetero-tensor\"},"
    " \"axes\": {\"memory.ceiling_gbps\": %s}}";

/* CPU seconds of this process and its reaped children (the workers). */
static double
cpu_s(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    const struct timeval t[] = { self.ru_utime, self.ru_stime, kids.ru_utime, kids.ru_stime };
    double s = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
        s += (double) t[i].tv_sec + (double) t[i].tv_usec * 1e-6;
    }
    return s;
}

/* The sweep spec @text, through a file in @dir (removed again).
 * (transfer full) */
static HsSweepSpec *
spec_of(const char *dir, const char *text, GError **error)
{
    g_autofree char *path = g_build_filename(dir, "spec.json", NULL);
    if (!g_file_set_contents(path, text, -1, error)) {
        return NULL;
    }
    HsSweepSpec *spec = hs_sweep_spec_load(path, NULL, error);
    g_unlink(path);
    return spec;
}

/* Close @db and remove its files (@path and SQLite's -wal and -shm). */
static void
db_discard(sqlite3 *db, const char *path)
{
    sqlite3_close(db);
    for (const char *const *sfx = (const char *const[]) { "", "-wal", "-shm", NULL }; *sfx;
         sfx++) {
        g_autofree char *f = g_strdup_printf("%s%s", path, *sfx);
        g_unlink(f);
    }
}

/* Every point of the spec @text into a new database in @dir on @jobs
 * workers: *wall_s and *cpu_s (this process and the workers). */
static gboolean
sweep_once(const char *dir, const char *text, int jobs, guint *points, double *wall,
           double *cpu, GError **error)
{
    g_autoptr(HsSweepSpec) spec = spec_of(dir, text, error);
    if (spec == NULL) {
        return FALSE;
    }
    g_autofree char *dbp = g_strdup_printf("%s/bench-%d.db", dir, jobs);
    sqlite3 *db = hs_sweep_db_open(dbp, spec->names, error);
    if (db == NULL) {
        return FALSE;
    }
    HsSweepRun r = { .spec = spec, .db = db, .todo = g_array_new(FALSE, FALSE, sizeof(int)),
                     .jobs = jobs };
    for (int i = 0; i < (int) spec->points->len; i++) {
        g_array_append_val(r.todo, i);
    }
    double t0 = hs_bench_now_s(), c0 = cpu_s();
    gboolean ok = hs_sweep_run_local(&r, error);
    *wall = hs_bench_now_s() - t0;
    *cpu = cpu_s() - c0;
    *points = spec->points->len;
    g_array_unref(r.todo);
    db_discard(db, dbp);
    return ok;
}

/* A grid of @n^3 x 2 timing-only points (prompt, decode and batch 1..n,
 * two seeds) on a fresh database: how long planning it takes (*plan_s)
 * and resolving one of its points (*point_ms, over the first 200), which
 * the plan did for every point before the first one ran. */
static gboolean
plan_once(const char *dir, int n, guint *points, double *plan_s, double *point_ms,
          GError **error)
{
    g_autoptr(GString) axis = g_string_new("[");
    for (int i = 1; i <= n; i++) {
        g_string_append_printf(axis, "%s%d", i > 1 ? ", " : "", i);
    }
    g_string_append(axis, "]");
    g_autofree char *text = g_strdup_printf("{\"base\": {\"functional\": \"off\"}, \"axes\": "
                                            "{\"prompt\": %s, \"decode\": %s, \"batch\": %s, "
                                            "\"seed\": [1, 2]}}", axis->str, axis->str,
                                            axis->str);
    g_autoptr(HsSweepSpec) spec = spec_of(dir, text, error);
    if (spec == NULL) {
        return FALSE;
    }
    g_autofree char *dbp = g_build_filename(dir, "grid.db", NULL);
    sqlite3 *db = hs_sweep_db_open(dbp, spec->names, error);
    if (db == NULL) {
        return FALSE;
    }
    HsSweepPolicy pol = { 0 };
    char **hashes = NULL;
    g_autofree guint8 *hashed = NULL;
    guint done = 0;
    double t0 = hs_bench_now_s();
    GArray *todo = hs_sweep_plan(spec, db, &pol, &hashes, &hashed, &done, error);
    *plan_s = hs_bench_now_s() - t0;
    const guint k = MIN(200u, spec->points->len);
    t0 = hs_bench_now_s();
    for (guint i = 0; i < k; i++) {
        g_free(hs_sweep_point_hash(spec->points->pdata[i], NULL, NULL));
    }
    *point_ms = (hs_bench_now_s() - t0) * 1e3 / MAX(k, 1);
    *points = spec->points->len;
    hs_sweep_hashes_free(hashes, spec->points->len);
    db_discard(db, dbp);
    if (todo == NULL) {
        return FALSE;
    }
    g_array_unref(todo);
    return TRUE;
}

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    g_autofree char *dir = g_dir_make_tmp("hs-bench-sweep-XXXXXX", error);
    if (dir == NULL) {
        return FALSE;
    }
    g_autofree char *text = g_strdup_printf(spec_text, quick ? "[64]" : "[64, 128, 256, 512]");
    g_autofree char *checked = g_strdup_printf(checked_text,
                                               quick ? "[40, 60]" : "[20, 30, 40, 50, 60, 68]");
    double rate[2] = { 0, 0 }, wall = 0, cpu = 0, c_wall = 0, c_cpu = 0;
    guint points = 0, c_points = 0;
    gboolean ok = TRUE;
    for (int jobs = 1; jobs <= 2 && ok; jobs++) {
        ok = sweep_once(dir, text, jobs, &points, &wall, &cpu, error);
        rate[jobs - 1] = points / wall;
    }
    ok = ok && sweep_once(dir, checked, 1, &c_points, &c_wall, &c_cpu, error);
    guint g_points = 0;
    double plan_s = 0, point_ms = 0;
    ok = ok && plan_once(dir, quick ? 10 : 30, &g_points, &plan_s, &point_ms, error);
    g_rmdir(dir);
    if (!ok) {
        return FALSE;
    }
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "sweep");
        cJSON_AddNumberToObject(root, "points", points);
        cJSON_AddNumberToObject(root, "points_per_s_1_worker", rate[0]);
        cJSON_AddNumberToObject(root, "points_per_s_2_workers", rate[1]);
        cJSON_AddNumberToObject(root, "checked_points", c_points);
        cJSON_AddNumberToObject(root, "checked_wall_s", c_wall);
        cJSON_AddNumberToObject(root, "checked_cpu_s", c_cpu);
        cJSON_AddNumberToObject(root, "grid_points", g_points);
        cJSON_AddNumberToObject(root, "grid_plan_s", plan_s);
        cJSON_AddNumberToObject(root, "point_resolve_ms", point_ms);
        g_autofree char *s = hs_json_print(root, FALSE);
        printf("%s\n", s);
    } else {
        printf("sweep, %u timing-only points (sd8gen3, llama-3.2-1b, prompt 64-512): "
               "%.1f points/s with 1 worker, %.1f with 2 (x%.2f; %u cores)\n",
               points, rate[0], rate[1], rate[1] / rate[0], g_get_num_processors());
        printf("sweep, %u checked points (layer 1's values, prompt 128 + decode 4, one "
               "worker sharing the weights): %.2f s wall, %.2f s CPU, %.2f s CPU a point\n",
               c_points, c_wall, c_cpu, c_cpu / c_points);
        printf("sweep, a fresh %u-point grid: planned in %.3f s; a point resolved in %.2f ms "
               "when it is claimed (all of them before the first ran: %.1f s)\n", g_points,
               plan_s, point_ms, point_ms * g_points / 1e3);
    }
    return TRUE;
}

const HsBench hs_bench_sweep = {
    "sweep", "timing-only sweep points per second with 1 and 2 workers; a checked sweep's CPU "
    "seconds; planning a fresh 54 000-point grid", run,
};
