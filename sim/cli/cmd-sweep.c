/*
 * cmd-sweep.c - `hetero-sim sweep SPEC`: a design-space grid into SQLite.
 *
 *   sweep SPEC [--db DB] [--jobs N]   run the points DB does not have yet
 *   sweep SPEC --list                 one command line per point to run
 *   sweep SPEC --point N              run point N, print its record
 *   sweep SPEC --merge FILE...        store records printed by --point
 *   sweep --show DB [--where SQL]     print the rows
 *
 * See sweep.h for the spec and README ("Design-space sweeps") for the
 * database schema.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3, sqlite3_close)

typedef struct Opts {
    char *db, *show, *where, *format, *columns;
    char **set;
    int jobs, point;
    gboolean list, merge, retry, all, quiet;
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
    g_autoptr(GHashTable) done = NULL;
    if (g_file_test(o->db, G_FILE_TEST_EXISTS)) {
        g_autoptr(sqlite3) db = hs_sweep_db_open_read(o->db, error);
        if (db == NULL || (done = hs_sweep_db_done(db, o->retry, error)) == NULL) {
            return FALSE;
        }
    }
    g_autofree char *exe = self_path();
    g_autofree char *sp = g_shell_quote(spec->path);
    g_autoptr(GString) sets = g_string_new(NULL);
    for (char **a = o->set; a && *a; a++) {
        g_autofree char *q = g_shell_quote(*a);
        g_string_append_printf(sets, " --set %s", q);
    }
    for (guint i = 0; i < spec->points->len; i++) {
        const HsSweepPoint *p = spec->points->pdata[i];
        if (done == NULL || !g_hash_table_contains(done, p->key)) {
            printf("%s sweep %s%s --point %u\n", exe, sp, sets->str, i);
        }
    }
    return TRUE;
}

static gboolean
do_merge(const HsSweepSpec *spec, const Opts *o, int argc, char **argv, GError **error)
{
    g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < spec->points->len; i++) {
        const HsSweepPoint *p = spec->points->pdata[i];
        g_hash_table_insert(index, p->key, GUINT_TO_POINTER(i + 1));
    }
    g_autoptr(sqlite3) db = hs_sweep_db_open(o->db, spec->names, error);
    if (db == NULL) {
        return FALSE;
    }
    guint stored = 0;
    for (int f = 2; f < argc; f++) {
        g_autofree char *text = NULL;
        if (!g_file_get_contents(argv[f], &text, NULL, NULL)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: cannot read", argv[f]);
            return FALSE;
        }
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (int l = 0; lines[l]; l++) {
            if (g_strstrip(lines[l])[0] == '\0') {
                continue;
            }
            g_autoptr(cJSON) rec = cJSON_Parse(lines[l]);
            const cJSON *key = cJSON_GetObjectItemCaseSensitive(rec, "key");
            guint idx = cJSON_IsString(key)
                        ? GPOINTER_TO_UINT(g_hash_table_lookup(index, key->valuestring)) : 0;
            if (idx == 0) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s:%d: expected a record of a point of %s, as 'sweep --point' "
                            "prints it (got %s)", argv[f], l + 1, spec->path,
                            rec ? "another point's" : "no JSON");
                return FALSE;
            }
            if (!hs_sweep_db_insert(db, rec, (int) idx - 1, error)) {
                g_prefix_error(error, "%s:%d: ", argv[f], l + 1);
                return FALSE;
            }
            stored++;
        }
    }
    printf("%s: merged %u records\n", o->db, stored);
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
    g_autoptr(GHashTable) done = db ? hs_sweep_db_done(db, o->retry, error) : NULL;
    if (done == NULL) {
        if (mpi) {
            /* the other ranks wait for work: tell them there is none */
            HsSweepRun none = { spec, NULL, g_array_new(FALSE, FALSE, sizeof(int)), 0, FALSE };
            hs_sweep_mpi_coordinate(&none, size, NULL);
            g_array_unref(none.todo);
            hs_sweep_mpi_finish();
        }
        return FALSE;
    }
    HsSweepRun r = { spec, db, g_array_new(FALSE, FALSE, sizeof(int)),
                     o->jobs > 0 ? o->jobs : (int) g_get_num_processors(),
                     !o->quiet && isatty(fileno(stderr)) };
    for (guint i = 0; i < spec->points->len; i++) {
        const HsSweepPoint *p = spec->points->pdata[i];
        if (!g_hash_table_contains(done, p->key)) {
            int idx = (int) i;
            g_array_append_val(r.todo, idx);
        }
    }
    guint todo = r.todo->len;
    gboolean ok = mpi ? hs_sweep_mpi_coordinate(&r, size, error)
                      : hs_sweep_run_local(&r, error);
    g_array_unref(r.todo);
    if (mpi) {
        hs_sweep_mpi_finish();
    }
    if (!ok) {
        return FALSE;
    }
    sqlite3_stmt *st = NULL;
    int failed = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM points WHERE status != 'ok'", -1, &st,
                           NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        failed = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    g_autofree char *where = mpi ? g_strdup_printf(" on %d MPI ranks", size - 1) : g_strdup("");
    printf("%s: %u points, %u run now%s, %u already there; %d failed in all\n", o->db,
           spec->points->len, todo, where, spec->points->len - todo, failed);
    return TRUE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    Opts o = { .point = -1 };
    gboolean help = FALSE;
    g_autofree char *db = NULL, *show = NULL, *where = NULL, *format = NULL, *columns = NULL;
    g_autofree char *point = NULL;
    g_auto(GStrv) set = NULL;
    GOptionEntry entries[] = {
        { "db", 0, 0, G_OPTION_ARG_FILENAME, &db,
          "SQLite database of the results (default sweep.db)", "DB" },
        { "jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
          "Points run at once (default: the number of cores)", "N" },
        { "retry-errors", 0, 0, G_OPTION_ARG_NONE, &o.retry,
          "Run again the points stored with an error", NULL },
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
    if (!hs_cli_parse("sweep", "SPEC | --show DB",
                      "Run a design-space grid (a JSON spec of settings and axes, see README) "
                      "into an SQLite database, one row per point.  Points already in the "
                      "database are skipped, so an interrupted sweep resumes.  Under "
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
        return sdb && hs_sweep_db_show(sdb, where, columns, (int) f, o.all, error);
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
    if (o.jobs < 0 || o.jobs > 4096) {
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
