/*
 * loaders.c - see loaders.h.
 */
#include "fuzz/loaders.h"
#include "engine/safetensors.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "sim/cli/points.h"
#include "sim/cli/sweep.h"
#include "models/spec.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/record.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gboolean
hs_load_soc(const uint8_t *data, size_t size, const char *what, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse((const char *) data, size, what, 0, error);
    if (root == NULL) {
        return FALSE;
    }
    /* hw_soc_load's steps after reading the file */
    g_autoptr(HwSoc) soc = hw_soc_from_json(root, what, error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(GString) text = g_string_new(NULL);
    hw_soc_dump_text(soc, text);
    g_autoptr(cJSON) back = hw_soc_to_json(soc);
    return back != NULL;
}

gboolean
hs_load_model(const uint8_t *data, size_t size, const char *what, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse((const char *) data, size, what, 0, error);
    if (root == NULL) {
        return FALSE;
    }
    /* mdl_spec_load's steps after reading the file */
    g_autoptr(MdlSpec) spec = mdl_spec_from_json(root, "fuzz", error);
    if (spec == NULL) {
        g_prefix_error(error, "%s: ", what);
        return FALSE;
    }
    (void) mdl_spec_param_count(spec);
    g_autoptr(cJSON) back = mdl_spec_to_json(spec);
    return back != NULL;
}

gboolean
hs_load_points(const uint8_t *data, size_t size, const char *what, GError **error)
{
    HsPoints *p = hs_points_parse((const char *) data, size, what, error);
    hs_points_free(p);
    return p != NULL;
}

gboolean
hs_load_stack(const uint8_t *data, size_t size, const char *what, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse((const char *) data, size, what, 0, error);
    if (root == NULL) {
        return FALSE;
    }
    /* hw_stack_load's steps after reading the file */
    HwStack *st = hw_stack_from_json(root, what, error);
    if (st == NULL) {
        return FALSE;
    }
    g_autoptr(GString) text = g_string_new(NULL);
    hw_stack_dump_text(st, text);
    cJSON *back = hw_stack_to_json(st);
    cJSON_Delete(back);
    hw_stack_free(st);
    return TRUE;
}

gboolean
hs_load_sweep(const uint8_t *data, size_t size, const char *what, GError **error)
{
    /* at most 4096 points, not the CLI's 10^6: a spec the CLI accepts may
     * take a minute to expand under ASan (65536 points took 14 s), a
     * timeout for libFuzzer; the code that expands is the same */
    g_autoptr(HsSweepSpec) s = hs_sweep_spec_parse((const char *) data, size, what, NULL, 4096,
                                                   error);
    if (s == NULL) {
        return FALSE;
    }
    /* what `sweep --list` and each worker do with a point */
    for (guint i = 0; i < s->points->len; i++) {
        g_strfreev(hs_sweep_point_argv(s->points->pdata[i]));
    }
    for (guint i = 0; i < s->names->len; i++) {
        g_free(hs_sweep_column(s->names->pdata[i]));
    }
    return TRUE;
}

/* The directory fuzz-sweep-db writes each input to, removed at exit. */
static char *db_dir;

static void
db_files_remove(void)
{
    static const char *const sfx[] = { "", "-wal", "-shm", "-journal", NULL };
    for (const char *const *x = sfx; *x; x++) {
        g_autofree char *f = g_strdup_printf("%s/fuzz.db%s", db_dir, *x);
        g_unlink(f);
    }
}

static void
db_dir_remove(void)
{
    db_files_remove();
    g_rmdir(db_dir);
}

/* The error names the file as @what, not the scratch file's path. */
static void
db_error_as(GError *error, const char *path, const char *what)
{
    if (error && g_str_has_prefix(error->message, path)) {
        char *m = g_strconcat(what, error->message + strlen(path), NULL);
        g_free(error->message);
        error->message = m;
    }
}

gboolean
hs_load_sweep_db(const uint8_t *data, size_t size, const char *what, GError **error)
{
    /* the bytes as a file, opened by the CLI's own paths: an SQLite file
     * is read through its VFS (journal and WAL files included), not from
     * memory */
    if (db_dir == NULL) {
        /* on tmpfs if there is one: SQLite's fsyncs cost nothing there */
        db_dir = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR)
                 ? g_mkdtemp(g_strdup("/dev/shm/hs-fuzz-db-XXXXXX")) : NULL;
        if (db_dir == NULL) {
            db_dir = g_dir_make_tmp("hs-fuzz-db-XXXXXX", NULL);
        }
        g_assert_nonnull(db_dir);
        atexit(db_dir_remove);
    }
    static FILE *devnull;
    if (devnull == NULL) {
        devnull = fopen("/dev/null", "w");
        g_assert_nonnull(devnull);
    }
    g_autofree char *path = g_build_filename(db_dir, "fuzz.db", NULL);
    db_files_remove();
    FILE *f = fopen(path, "wb");
    g_assert_nonnull(f);
    g_assert_true(fwrite(data, 1, size, f) == size || size == 0);
    fclose(f);
    GError *err = NULL;
    gboolean ok = FALSE;
    /* sweep --show DB --all, and what a resumed sweep reads */
    sqlite3 *db = hs_sweep_db_open_read(path, &err);
    if (db) {
        ok = hs_sweep_db_show(db, NULL, NULL, 0, TRUE, devnull, &err);
        GHashTable *rows = ok ? hs_sweep_db_rows(db, &err) : NULL;
        ok = rows != NULL;
        if (rows) {
            g_hash_table_unref(rows);
        }
        sqlite3_close(db);
    }
    /* resuming it: opened to write, upgraded, a setting column added, a
     * point claimed (its row read and written) and released */
    if (ok) {
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        g_ptr_array_add(names, "npu.sram_kib");
        db = hs_sweep_db_open(path, names, &err);
        ok = db != NULL;
        const HsSweepPolicy pol = { "fuzz.example:1:1", FALSE, FALSE };
        const char *key = "{\"npu.sram_kib\":64}";
        HsSweepState found;
        gboolean claimed = FALSE;
        ok = ok && hs_sweep_db_claim(db, key, 0, "0", &pol, &found, &claimed, &err) &&
             (!claimed || hs_sweep_db_release(db, key, pol.me, &err));
        sqlite3_close(db);
    }
    db_files_remove();
    db_error_as(err, path, what);
    if (err) {
        g_propagate_error(error, err);
    }
    return ok;
}

gboolean
hs_load_record(const uint8_t *data, size_t size, const char *what, GError **error)
{
    g_autoptr(TrcRecording) r = trc_record_parse((const char *) data, size, what, error);
    return r != NULL;
}

/* The recorded SoC from configs/, loaded once per name: only a plain name
 * (a fuzz input names no file to read). */
static const HwSoc *
replay_soc(const char *name, GError **error)
{
    static GHashTable *socs;     /* name -> HwSoc, for the process's life */
    if (name[0] == '\0' || strlen(name) > 64 ||
        strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(name)) {
        g_set_error(error, HS_TRACE_ERROR, HS_TRACE_ERROR_BAD_VALUE,
                    "$.soc: expected the name of a SoC of configs/");
        return NULL;
    }
    if (socs == NULL) {
        socs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) hw_soc_free);
    }
    HwSoc *soc = g_hash_table_lookup(socs, name);
    if (soc == NULL) {
        soc = hw_soc_load(name, HS_SOURCE_ROOT "/configs", error);
        if (soc == NULL) {
            return NULL;
        }
        g_hash_table_insert(socs, g_strdup(name), soc);
    }
    return soc;
}

/* Plans longer than this are checked, not timed: the timing of a long
 * decode is the same code many times, and would time libFuzzer out. */
#define REPLAY_MAX_TASKS 4096

gboolean
hs_load_replay(const uint8_t *data, size_t size, const char *what, GError **error)
{
    /* read: every task against the model's graph (traces/record.c) */
    g_autoptr(TrcRecording) r = trc_record_parse((const char *) data, size, what, error);
    if (r == NULL) {
        return FALSE;
    }
    /* then what `replay FILE` does with it: the plan on the recorded SoC,
     * checked, and timed (values off: the engine is not this target's) */
    const HwSoc *soc = replay_soc(r->soc, error);
    g_autoptr(SimPlan) plan = soc ? trc_record_plan_for(r, soc, error) : NULL;
    if (plan == NULL || !sim_plan_check(plan, soc->devs->len, error)) {
        g_prefix_error(error, "%s: ", what);
        return FALSE;
    }
    g_free(trc_plan_unsynced(plan, soc));
    if (sim_plan_len(plan) > REPLAY_MAX_TASKS) {
        return TRUE;
    }
    SimWorkload w = r->workload;
    w.check_layers = -1;
    w.progress = NULL;
    SimRunReport rep = { 0 };
    gboolean ok = sim_run_execute(soc, r->spec, r->policy, plan, &w, NULL, &rep, NULL, error);
    sim_run_report_clear(&rep);
    if (!ok) {
        g_prefix_error(error, "%s: ", what);
    }
    return ok;
}

/* Tensors larger than this are not converted: the reader's checks come
 * before the copy, and a fuzz input is small anyway. */
#define LOAD_MAX_VALUES (1u << 20)

gboolean
hs_load_safetensors(const uint8_t *data, size_t size, const char *what, GError **error)
{
    g_autoptr(EngSafetensors) st = eng_safetensors_open_bytes(data, size, what, error);
    if (st == NULL) {
        return FALSE;
    }
    g_auto(GStrv) names = eng_safetensors_names(st);
    for (char **n = names; *n; n++) {
        uint64_t shape[8];
        int rank = eng_safetensors_shape(st, *n, shape);
        uint64_t count = 1;
        for (int i = 0; i < rank && count <= LOAD_MAX_VALUES; i++) {
            count = shape[i] ? count * shape[i] : 0;
        }
        if (count > LOAD_MAX_VALUES) {
            continue;
        }
        g_autofree float *out = g_new(float, MAX(count, 1));
        if (!eng_safetensors_read_f32(st, *n, shape, rank, out, error)) {
            return FALSE;
        }
    }
    return TRUE;
}
