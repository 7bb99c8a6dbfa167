/*
 * cmd-sweep.c - `hetero-sim sweep SPEC`: a design-space grid into SQLite.
 *
 *   sweep SPEC [--db DB] [--jobs N]   run the points DB does not have yet
 *                                     (or has stale: their configuration or
 *                                     hetero-sim's version changed since)
 *   sweep SPEC --list                 one command line per point to run
 *   sweep SPEC --point N              run point N, print its record
 *   sweep SPEC --merge FILE...        store records printed by --point
 *   sweep --show DB [--where SQL]     print the rows
 *
 * See sweep.h for the spec and README ("Design-space sweeps") for the
 * database schema.  Each point is claimed in the database before it runs
 * (sweep-db.c), so sweeps started together on one database share the
 * points; a claim whose process died is taken over, one of another host
 * only with --reclaim.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/cli.h"
#include "sim/cli/report-fields.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/infile.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"
#include "sim/util/version-info.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3, sqlite3_close)

typedef struct Opts {
    char *db, *show, *where, *format, *columns;
    char **set;
    int jobs, point;
    gboolean list, merge, retry, reclaim, all, quiet;
} Opts;

/* The executable's own path, so --list lines run without PATH. */
static char *
self_path(void)
{
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    return exe ? g_shell_quote(exe) : g_strdup("hetero-sim");
}

static gboolean
do_list(const HsSweepSpec *spec, const Opts *o, GError **error)
{
    g_autoptr(GArray) todo = NULL;
    char **hashes = NULL;
    if (g_file_test(o->db, G_FILE_TEST_EXISTS)) {
        g_autoptr(sqlite3) db = hs_sweep_db_open_read(o->db, error);
        HsSweepPolicy pol = { NULL, o->retry, o->reclaim };
        guint done = 0;
        g_autofree guint8 *hashed = NULL;
        if (db == NULL ||
            (todo = hs_sweep_plan(spec, db, &pol, &hashes, &hashed, &done, error)) == NULL) {
            return FALSE;
        }
        hs_sweep_hashes_free(hashes, spec->points->len);
    }
    g_autofree char *exe = self_path();
    g_autofree char *sp = g_shell_quote(spec->path);
    g_autoptr(GString) sets = g_string_new(NULL);
    for (char **a = o->set; a && *a; a++) {
        g_autofree char *q = g_shell_quote(*a);
        g_string_append_printf(sets, " --set %s", q);
    }
    for (guint i = 0; i < (todo ? todo->len : spec->points->len); i++) {
        printf("%s sweep %s%s --point %d\n", exe, sp, sets->str,
               todo ? g_array_index(todo, int, i) : (int) i);
    }
    return TRUE;
}

static void
hashes3_free(char **h)
{
    hs_sweep_hashes_free(h, 3);
}

/* Is @v of JSON type for SQL column type @sql? */
static gboolean
json_fits(const cJSON *v, const char *sql)
{
    if (strcmp(sql, "TEXT") == 0) {
        return cJSON_IsString(v);
    }
    if (strcmp(sql, "INTEGER") == 0) {
        return cJSON_IsBool(v) || (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble));
    }
    return cJSON_IsNumber(v);
}

static const cJSON *
member_at(const cJSON *root, const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    const cJSON *j = root;
    for (char **p = parts; *p && j; p++) {
        j = cJSON_GetObjectItemCaseSensitive(j, *p);
    }
    return j;
}

/* What is wrong with @rec as the record of point @p (hash now @hash,
 * config hash @config, policy @policy; NULL if it does not resolve), or
 * NULL.  (transfer full) */
static char *
record_fault(const cJSON *rec, const HsSweepPoint *p, const char *hash, const char *config,
             const char *policy)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(rec, "status");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(rec, "error");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(rec, "result");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(rec, "version");
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(rec, "point_hash");
    gboolean ok = cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0;
    if (!ok && !(cJSON_IsString(status) && strcmp(status->valuestring, "error") == 0)) {
        g_autofree char *got = hs_json_describe(status);
        return g_strdup_printf("$.status: expected \"ok\" or \"error\" (got %s)", got);
    }
    if (ok && !cJSON_IsObject(result)) {
        return g_strdup("$.result: expected the run's result object with status ok (got none)");
    }
    if (ok && err) {
        return g_strdup("$.error: expected none with status ok (the record says both)");
    }
    if (!ok && result) {
        return g_strdup("$.result: expected none with status error (the record says both)");
    }
    if (!ok && !(cJSON_IsString(err) && err->valuestring[0])) {
        return g_strdup("$.error: expected the error's message with status error");
    }
    if (!cJSON_IsString(version) || strcmp(version->valuestring, hs_version()) != 0) {
        g_autofree char *got = version ? hs_json_describe(version) : g_strdup("none");
        return g_strdup_printf("$.version: expected this hetero-sim's, %s (got %s): a result "
                               "of another version is stale, run the point again",
                               hs_version(), got);
    }
    for (const char *n = "wall_s"; n; n = strcmp(n, "wall_s") == 0 ? "threads" : NULL) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, n);
        if (v && !cJSON_IsNumber(v)) {
            g_autofree char *got = hs_json_describe(v);
            return g_strdup_printf("$.%s: expected a number (got %s)", n, got);
        }
    }
    if (ph || hash) {
        if (!cJSON_IsString(ph) || g_strcmp0(ph->valuestring, hash) != 0) {
            g_autofree char *got = ph ? hs_json_describe(ph) : g_strdup("none");
            return g_strdup_printf("$.point_hash: expected the hash of the point's "
                                   "configuration now, %s (got %s): a file it names changed "
                                   "since it ran, or it is another point's", hash ? hash
                                   : "none (its settings do not resolve)", got);
        }
    }
    if (!ok) {
        return NULL;
    }
    /* the result: of this point, with the report's members and types */
    const cJSON *ch = member_at(result, "config.hash");
    if (!cJSON_IsString(ch) || g_strcmp0(ch->valuestring, config) != 0) {
        g_autofree char *got = ch ? hs_json_describe(ch) : g_strdup("none");
        return g_strdup_printf("$.result.config.hash: expected the point's, %s (got %s)",
                               config ? config : "none", got);
    }
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(result, "policy");
    if (!cJSON_IsString(pol) || g_strcmp0(pol->valuestring, policy) != 0) {
        g_autofree char *got = pol ? hs_json_describe(pol) : g_strdup("none");
        return g_strdup_printf("$.result.policy: expected the point's, \"%s\" (got %s)",
                               policy, got);
    }
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        if (!hs_report_field_is_column(m)) {
            continue;
        }
        const cJSON *v = member_at(result, m->json_path);
        gboolean required = m->when != HS_WHEN_HOT && m->when != HS_WHEN_CHECKED &&
                            m->when != HS_WHEN_RENDER && m->when != HS_WHEN_CAVEAT;
        if ((v == NULL && required) || (v && !json_fits(v, hs_report_field_sql_type(m)))) {
            g_autofree char *got = v ? hs_json_describe(v) : g_strdup("none");
            const char *sql = hs_report_field_sql_type(m);
            return g_strdup_printf("$.result.%s: expected %s (got %s)", m->json_path,
                                   strcmp(sql, "TEXT") == 0 ? "a string"
                                   : strcmp(sql, "INTEGER") == 0 ? "an integer or boolean"
                                   : "a number", got);
        }
    }
    (void) p;
    return NULL;
}

static gboolean
do_merge(const HsSweepSpec *spec, const Opts *o, int argc, char **argv, GError **error)
{
    g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < spec->points->len; i++) {
        const HsSweepPoint *p = spec->points->pdata[i];
        g_hash_table_insert(index, p->key, GUINT_TO_POINTER(i + 1));
    }
    /* every record checked before any is stored: a bad file stores nothing */
    g_autoptr(GPtrArray) recs = g_ptr_array_new_with_free_func((GDestroyNotify) cJSON_Delete);
    g_autoptr(GArray) idxs = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GHashTable) hashes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                                         (GDestroyNotify) hashes3_free);
    for (int f = 2; f < argc; f++) {
        g_autofree char *text = NULL;
        if (!hs_infile_read(argv[f], "a records file", HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, &text,
                            NULL, error)) {
            return FALSE;
        }
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (int l = 0; lines[l]; l++) {
            if (g_strstrip(lines[l])[0] == '\0') {
                continue;
            }
            cJSON *rec = cJSON_Parse(lines[l]);
            const cJSON *key = cJSON_GetObjectItemCaseSensitive(rec, "key");
            guint idx = cJSON_IsString(key)
                        ? GPOINTER_TO_UINT(g_hash_table_lookup(index, key->valuestring)) : 0;
            if (idx == 0) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s:%d: expected a record of a point of %s, as 'sweep --point' "
                            "prints it (got %s)", argv[f], l + 1, spec->path,
                            !cJSON_IsObject(rec) ? "no JSON object"
                            : cJSON_IsString(key) ? "another point's" : "no key");
                cJSON_Delete(rec);
                return FALSE;
            }
            const HsSweepPoint *p = spec->points->pdata[idx - 1];
            char **h = g_hash_table_lookup(hashes, GUINT_TO_POINTER(idx));
            if (h == NULL) {
                /* [point hash, config hash, policy] of the point now */
                h = g_new0(char *, 4);
                h[0] = hs_sweep_point_hash(p, &h[1], NULL);
                g_autoptr(cJSON) settings = hs_sweep_point_settings(p);
                const cJSON *pol = cJSON_GetObjectItemCaseSensitive(settings, "policy");
                h[2] = g_strdup(cJSON_IsString(pol) ? pol->valuestring : "hetero-tensor");
                g_hash_table_insert(hashes, GUINT_TO_POINTER(idx), h);
            }
            g_autofree char *why = record_fault(rec, p, h[0], h[1], h[2]);
            if (why) {
                g_autofree char *k = hs_escape(key->valuestring);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s:%d: record of point %u %s: %s", argv[f], l + 1, idx - 1, k,
                            why);
                cJSON_Delete(rec);
                return FALSE;
            }
            g_ptr_array_add(recs, rec);
            int i = (int) idx - 1;
            g_array_append_val(idxs, i);
        }
    }
    g_autoptr(sqlite3) db = hs_sweep_db_open(o->db, spec->names, error);
    if (db == NULL) {
        return FALSE;
    }
    for (guint r = 0; r < recs->len; r++) {
        if (!hs_sweep_db_insert(db, recs->pdata[r], g_array_index(idxs, int, r), error)) {
            return FALSE;
        }
    }
    printf("%s: merged %u records\n", o->db, recs->len);
    return TRUE;
}

static gboolean
do_run(const HsSweepSpec *spec, const Opts *o, GError **error)
{
    int rank = 0, size = 1;
    gboolean mpi = hs_sweep_mpi_start(&rank, &size);
#ifndef HS_HAVE_MPI
    const char *ranks = g_getenv("OMPI_COMM_WORLD_SIZE");
    if (ranks && atoi(ranks) > 1) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "sweep: this hetero-sim was built without MPI (libopenmpi-dev), so "
                    "under mpirun every rank would run the whole sweep; rebuild with MPI");
        return FALSE;
    }
#endif
    if (mpi && rank != 0) {
        hs_sweep_mpi_work(spec);
        hs_sweep_mpi_finish();
        return TRUE;
    }
    g_autoptr(sqlite3) db = hs_sweep_db_open(o->db, spec->names, error);
    HsSweepRun r = { .spec = spec, .db = db,
                     .jobs = o->jobs > 0 ? o->jobs : (int) g_get_num_processors(),
                     .progress = !o->quiet && isatty(fileno(stderr)) };
    g_autofree char *me = hs_sweep_claimant();
    r.pol = (HsSweepPolicy) { me, o->retry, o->reclaim };
    guint already = 0;
    r.todo = db ? hs_sweep_plan(spec, db, &r.pol, &r.hashes, &r.hashed, &already, error) : NULL;
    if (r.todo == NULL) {
        if (mpi) {
            /* the other ranks wait for work: tell them there is none */
            HsSweepRun none = { .spec = spec, .todo = g_array_new(FALSE, FALSE, sizeof(int)) };
            hs_sweep_mpi_coordinate(&none, size, NULL);
            g_array_unref(none.todo);
            hs_sweep_mpi_finish();
        }
        return FALSE;
    }
    gboolean ok = mpi ? hs_sweep_mpi_coordinate(&r, size, error)
                      : hs_sweep_run_local(&r, error);
    g_array_unref(r.todo);
    hs_sweep_hashes_free(r.hashes, spec->points->len);
    g_free(r.hashed);
    if (mpi) {
        hs_sweep_mpi_finish();
    }
    if (!ok) {
        return FALSE;
    }
    sqlite3_stmt *st = NULL;
    int failed = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM points WHERE status = 'error'", -1, &st,
                           NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        failed = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    g_autofree char *where = mpi ? g_strdup_printf(" on %d MPI ranks", size - 1) : g_strdup("");
    g_autoptr(GString) line = g_string_new(NULL);
    g_string_printf(line, "%s: %u points, %u run now%s, %u already there", o->db,
                    spec->points->len, r.run_now, where, already + r.done_meanwhile);
    if (r.claimed_by_others) {
        g_string_append_printf(line, ", %u left to another sweep running them",
                               r.claimed_by_others);
    }
    if (r.claimed_elsewhere) {
        g_string_append_printf(line, ", %u claimed by a sweep on another host (--reclaim "
                               "runs them)", r.claimed_elsewhere);
    }
    /* why points that were there ran again */
    g_autoptr(GString) why = g_string_new(NULL);
    if (r.stale_config) {
        g_string_append_printf(why, "%u stale (config changed)", r.stale_config);
    }
    if (r.stale_version) {
        g_string_append_printf(why, "%s%u stale (made by another version)",
                               why->len ? ", " : "", r.stale_version);
    }
    if (r.reclaimed) {
        g_string_append_printf(why, "%s%u claimed by a sweep that died", why->len ? ", " : "",
                               r.reclaimed);
    }
    if (why->len) {
        g_string_append_printf(line, "; %s: re-run", why->str);
    }
    printf("%s; %d failed in all\n", line->str, failed);
    return TRUE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    /* jobs G_MININT: not given (one per core); 0 or less given is refused */
    Opts o = { .point = -1, .jobs = G_MININT };
    gboolean help = FALSE;
    g_autofree char *db = NULL, *show = NULL, *where = NULL, *format = NULL, *columns = NULL;
    g_autofree char *point = NULL;
    g_auto(GStrv) set = NULL;
    GOptionEntry entries[] = {
        { "db", 0, 0, G_OPTION_ARG_FILENAME, &db,
          "SQLite database of the results (default sweep.db)", "DB" },
        { "jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
          "Points run at once (default: the number of cores), by as many worker processes, "
          "each keeping up to HS_WEIGHT_CACHE_MB (512) MiB of encoded weights and 96 MiB of "
          "buffers from one point to the next", "N" },
        { "retry-errors", 0, 0, G_OPTION_ARG_NONE, &o.retry,
          "Run again the points stored with an error", NULL },
        { "reclaim", 0, 0, G_OPTION_ARG_NONE, &o.reclaim,
          "Run the points claimed by a sweep on another host too (it is known to be gone)",
          NULL },
        { "list", 0, 0, G_OPTION_ARG_NONE, &o.list,
          "Print one command line per point not yet in DB (for GNU parallel, job arrays)",
          NULL },
        { "point", 0, 0, G_OPTION_ARG_STRING, &point,
          "Run point N of SPEC here and print its record (a JSON line)", "N" },
        { "merge", 0, 0, G_OPTION_ARG_NONE, &o.merge,
          "Store the records in FILE... (printed by --point) into DB", NULL },
        { "show", 0, 0, G_OPTION_ARG_FILENAME, &show,
          "Print the rows of a sweep database", "DB" },
        { "where", 'w', 0, G_OPTION_ARG_STRING, &where,
          "--show: only rows matching this SQL condition (e.g. \"policy = 'gpu-only'\")",
          "SQL" },
        { "columns", 'c', 0, G_OPTION_ARG_STRING, &columns,
          "--show: these columns (settings or metrics, comma-separated)", "A,B,.." },
        { "all", 'a', 0, G_OPTION_ARG_NONE, &o.all,
          "--show: every column (every metric, config hash, version, wall time, the full result)", NULL },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
          "--show: text, csv or json (default text)", "FMT" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "No progress line", NULL },
        HS_SET_OPTION(&set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    hs_provenance_command(argc, argv);
    if (!hs_cli_parse("sweep", "SPEC | --show DB",
                      "Run a design-space grid (a JSON spec of settings and axes, see README) "
                      "into an SQLite database, one row per point.  Points already in the "
                      "database are skipped, so an interrupted sweep resumes; a row whose "
                      "configuration (a file it names) or hetero-sim version changed since "
                      "is stale and runs again.  Sweeps sharing a database split the "
                      "points.  Under "
                      "'mpirun -n N' the points spread over the ranks.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    o.db = db ? db : "sweep.db";
    o.set = set;
    /* a string, so that -1 (the "not given" of o.point) is refused, not
     * taken for "run the whole sweep" */
    guint64 pv = 0;
    if (point && !g_ascii_string_to_unsigned(point, 10, 0, G_MAXINT, &pv, NULL)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--point: expected a point number, an integer from 0 (got \"%s\")", point);
        return FALSE;
    }
    if (point) {
        o.point = (int) pv;
    }
    if (show) {
        HsFormat f;
        if (!hs_cli_format(format, HS_FORMATS_ALL, &f, error) ||
            !hs_cli_no_extra_args(argc, argv, 0, error)) {
            return FALSE;
        }
        g_autoptr(sqlite3) sdb = hs_sweep_db_open_read(show, error);
        if (!sdb || !hs_sweep_db_show(sdb, where, columns, (int) f, o.all, stdout, error)) {
            return FALSE;
        }
        if (f == HS_FORMAT_TEXT) {
            printf("%s\n", hs_provenance_line());      /* what printed it, as run's text */
        }
        return TRUE;
    }
    if (format || where || columns || o.all || (set && o.merge)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "sweep: --format, --where, --columns and --all go with --show DB, "
                    "--set with running a SPEC");
        return FALSE;
    }
    if (argc < 2) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "sweep: missing SPEC (see 'hetero-sim sweep --help')");
        return FALSE;
    }
    if ((o.list ? 1 : 0) + (o.merge ? 1 : 0) + (o.point >= 0 ? 1 : 0) > 1) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "sweep: --list, --point and --merge exclude each other");
        return FALSE;
    }
    if (o.jobs != G_MININT && (o.jobs < 1 || o.jobs > 4096)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--jobs: expected an integer in [1, 4096] (got %d)", o.jobs);
        return FALSE;
    }
    if (!o.merge && !hs_cli_no_extra_args(argc, argv, 1, error)) {
        return FALSE;
    }
    g_autoptr(HsSweepSpec) spec = hs_sweep_spec_load(argv[1], (const char *const *) set, error);
    if (spec == NULL) {
        return FALSE;
    }
    /* the database is written in place: never over the spec or a record */
    for (int f = 2; o.merge && f < argc; f++) {
        hs_input_note(argv[f]);
    }
    if (!o.list && o.point < 0 && !hs_outfile_check(o.db, error)) {
        return FALSE;
    }
    if (o.list) {
        return do_list(spec, &o, error);
    }
    if (o.merge) {
        return do_merge(spec, &o, argc, argv, error);
    }
    if (o.point >= 0) {
        if ((guint) o.point >= spec->points->len) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--point: expected an integer in [0, %u] (got %d)",
                        spec->points->len - 1, o.point);
            return FALSE;
        }
        g_autoptr(cJSON) rec = hs_sweep_point_run(spec->points->pdata[o.point]);
        g_autofree char *text = hs_json_print(rec, FALSE);
        printf("%s\n", text);
        return TRUE;
    }
    return do_run(spec, &o, error);
}

const HsCommand hs_cmd_sweep = {
    "sweep", "SPEC | --show DB", "a design-space grid into SQLite (resumable; MPI)", run,
};
