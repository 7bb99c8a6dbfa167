/*
 * sweep-db.c - a sweep's SQLite database.  See sweep.h and README
 * ("Design-space sweeps") for the schema.
 *
 * Every record is stored in its own transaction, and the journal is a
 * write-ahead log: a sweep killed at any moment (kill -9 included) leaves
 * the database with every point stored before that moment and nothing
 * half-written.
 *
 * A database is checked whenever it is opened (PRAGMA quick_check, its
 * application_id and schema version, the columns it must have, each row's
 * status and key): a damaged or foreign file is refused in one line,
 * never shown as empty rows nor resumed as "already there".  A point is
 * claimed in a transaction before it runs (status 'claimed', claimed_by
 * host:pid:start), so sweeps sharing a database never run a point twice.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/cli.h"
#include "sim/cli/report-fields.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/param.h"
#include "sim/util/version-info.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A database is input: its schema may hold views and triggers written by
 * anyone, so none of them may call a function with side effects
 * (trusted_schema off), and the defensive flag refuses writes that
 * corrupt it on purpose; cell_size_check finds torn cells on read. */
static void
harden(sqlite3 *db)
{
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_exec(db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
}

/* Columns after the metrics, in table order. */
static const char *const tail_cols[] = { "config_hash", "version", "wall_s", "threads",
                                         "result", "point_hash", "runs", "claimed_by",
                                         "claimed_at", "command", NULL };
/* ... and their types, for a database made before a column existed */
static const char *const tail_types[] = { "TEXT", "TEXT", "REAL", "INTEGER", "TEXT", "TEXT",
                                          "INTEGER", "TEXT", "REAL", "TEXT", NULL };

/* The file a message names: the path as given (a database opened from
 * bytes in memory has no file name). */
static const char *
db_name(sqlite3 *db)
{
    const char *f = sqlite3_db_filename(db, "main");
    return f && f[0] ? f : "(database in memory)";
}

static gboolean
db_fail(sqlite3 *db, const char *what, GError **error)
{
    g_autofree char *msg = hs_escape(sqlite3_errmsg(db));
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s (%s)", db_name(db), what,
                msg);
    return FALSE;
}

static gboolean
exec(sqlite3 *db, const char *sql, GError **error)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        g_autofree char *esc = hs_escape(msg ? msg : sqlite3_errmsg(db));
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s", db_name(db), esc);
        sqlite3_free(msg);
        return FALSE;
    }
    return TRUE;
}

/* Columns of the points table, in order.  (transfer full) */
static GPtrArray *
table_columns(sqlite3 *db)
{
    GPtrArray *cols = g_ptr_array_new_with_free_func(g_free);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA table_info(points)", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            g_ptr_array_add(cols, g_strdup((const char *) sqlite3_column_text(st, 1)));
        }
    }
    sqlite3_finalize(st);
    return cols;
}

static gboolean
has_col(GPtrArray *cols, const char *name)
{
    for (guint i = 0; i < cols->len; i++) {
        if (strcmp(cols->pdata[i], name) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

/* A column (and its settings row) for each of @names the table lacks. */
static gboolean
add_setting_columns(sqlite3 *db, GPtrArray *names, GError **error)
{
    g_autoptr(GPtrArray) cols = table_columns(db);
    for (guint i = 0; names && i < names->len; i++) {
        g_autofree char *col = hs_sweep_column(names->pdata[i]);
        if (!has_col(cols, col)) {
            g_autofree char *sql = g_strdup_printf("ALTER TABLE points ADD COLUMN \"%s\"", col);
            if (!exec(db, sql, error)) {
                return FALSE;
            }
            g_ptr_array_add(cols, g_strdup(col));
        }
        char *ins = sqlite3_mprintf("INSERT OR IGNORE INTO settings(column, name) "
                                    "VALUES (%Q, %Q)", col, (const char *) names->pdata[i]);
        gboolean ok = exec(db, ins, error);
        sqlite3_free(ins);
        if (!ok) {
            return FALSE;
        }
    }
    return TRUE;
}

/* A column for each metric of the report's field table the table lacks
 * (a database made by an older version): a field added to the table
 * becomes a column there too, filled in the rows stored before from
 * their result. */
static gboolean
add_metric_columns(sqlite3 *db, GError **error)
{
    g_autoptr(GPtrArray) cols = table_columns(db);
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        if (m->metric && hs_report_field_is_column(m) && !has_col(cols, m->name)) {
            g_autofree char *sql = g_strdup_printf("ALTER TABLE points ADD COLUMN %s %s",
                                                   m->name, hs_report_field_sql_type(m));
            /* the rows already there hold the value in their result */
            g_autofree char *fill = g_strdup_printf(
                "UPDATE points SET %s = json_extract(result, '$.%s') WHERE result IS NOT NULL",
                m->name, m->json_path);
            if (!exec(db, sql, error) || !exec(db, fill, error)) {
                return FALSE;
            }
        }
    }
    /* host and bookkeeping columns added after the first version */
    for (int c = 0; tail_cols[c]; c++) {
        if (!has_col(cols, tail_cols[c])) {
            g_autofree char *sql = g_strdup_printf("ALTER TABLE points ADD COLUMN %s %s",
                                                   tail_cols[c], tail_types[c]);
            if (!exec(db, sql, error)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* An integer PRAGMA of @db, -1 if it cannot be read. */
static sqlite3_int64
pragma_int(sqlite3 *db, const char *name)
{
    g_autofree char *sql = g_strdup_printf("PRAGMA %s", name);
    sqlite3_stmt *st = NULL;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

/* SELECT count(*) ... of @db; -1 on an error. */
static sqlite3_int64
count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

static gboolean
refuse(sqlite3 *db, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static gboolean
refuse(sqlite3 *db, GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE, "%s: %s", db_name(db), why);
    return FALSE;
}

/*
 * Is @db a sweep database this build can trust?  @create: it may be a new
 * (empty) file, made a sweep database next.  PRAGMA quick_check reads
 * every page (a database of 10 000 rows is a few MB: milliseconds), so a
 * zeroed or torn page is found here, not served as empty settings.
 */
gboolean
hs_sweep_db_check(sqlite3 *db, gboolean create, GError **error)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_ROW) {
        g_autofree char *msg = hs_escape(sqlite3_errmsg(db));
        int code = sqlite3_errcode(db) & 0xff;
        gboolean hot = sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK;
        sqlite3_finalize(st);
        if (hot) {
            /* a writer died mid-transaction (kill -9 while a sweep made the
             * file): only a connection that may write rolls it back */
            return refuse(db, error, "left mid-transaction by a writer that was stopped (a hot "
                          "journal, %s-journal): run the sweep on it again to roll it back",
                          db_name(db));
        }
        return refuse(db, error, "%s (%s)",
                      code == SQLITE_NOTADB ? "not an SQLite database"
                      : code == SQLITE_CORRUPT ? "corrupt database, refused"
                      : "cannot read the database", msg);
    }
    const char *verdict = (const char *) sqlite3_column_text(st, 0);
    if (verdict == NULL || strcmp(verdict, "ok") != 0) {
        g_autofree char *flat = g_strdup(verdict ? verdict : "(no verdict)");
        g_strdelimit(flat, "\n\r", ' ');
        g_autofree char *msg = hs_escape(flat);
        sqlite3_finalize(st);
        return refuse(db, error, "corrupt database, refused (quick_check: %s); restore a "
                      "copy, or delete it to run the sweep again", msg);
    }
    sqlite3_finalize(st);

    sqlite3_int64 app = pragma_int(db, "application_id");
    sqlite3_int64 schema = pragma_int(db, "user_version");
    sqlite3_int64 tables = count(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
    sqlite3_int64 points = count(db, "SELECT count(*) FROM sqlite_schema "
                                     "WHERE type = 'table' AND name = 'points'");
    if (app < 0 || schema < 0 || tables < 0 || points < 0) {
        return db_fail(db, "cannot read the schema", error);
    }
    if (app != HS_SWEEP_APP_ID && app != 0) {
        return refuse(db, error, "not a sweep database (application_id 0x%08x, a sweep's is "
                      "0x%08x)", (unsigned) app, (unsigned) HS_SWEEP_APP_ID);
    }
    if (points == 0) {
        /* an empty file is a new database; anything else is someone else's */
        if (create && tables == 0 && app == 0) {
            return TRUE;
        }
        return refuse(db, error, "not a sweep database (no points table)");
    }
    if (schema > HS_SWEEP_SCHEMA) {
        return refuse(db, error, "made by a newer hetero-sim (schema version %lld; this one "
                      "knows up to %d)", (long long) schema, HS_SWEEP_SCHEMA);
    }
    g_autoptr(GPtrArray) cols = table_columns(db);
    static const char *const need[] = { "key", "point", "status", "error", NULL };
    for (const char *const *c = need; *c; c++) {
        if (!has_col(cols, *c)) {
            return refuse(db, error, "not a sweep database (table points has no column %s)",
                          *c);
        }
    }
    if (count(db, "SELECT count(*) FROM pragma_table_info('settings') "
                  "WHERE name IN ('column', 'name')") != 2) {
        return refuse(db, error, "not a sweep database (no settings(column, name) table)");
    }
    /* every setting names its column and its dotted name, as text */
    if (count(db, "SELECT count(*) FROM settings WHERE typeof(column) != 'text' OR "
                  "typeof(name) != 'text'") != 0) {
        return refuse(db, error, "corrupt database, refused (a settings row without a text "
                      "column and name)");
    }
    /* each row: a key that is a point's settings, a status this build knows */
    rc = sqlite3_prepare_v2(db, "SELECT key, status FROM points WHERE key IS NULL OR "
                                "typeof(key) != 'text' OR NOT json_valid(key) OR "
                                "json_type(key) != 'object' OR status IS NULL OR status NOT IN "
                                "('ok', 'error', 'claimed') LIMIT 1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        g_autofree char *key = hs_escape((const char *) sqlite3_column_text(st, 0));
        g_autofree char *status = hs_escape((const char *) sqlite3_column_text(st, 1));
        sqlite3_finalize(st);
        return refuse(db, error, "row with key %s: expected a key that is a JSON object of "
                      "settings and a status ok, error or claimed (got status %s)", key,
                      status);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return db_fail(db, "cannot read the points", error);
    }
    return TRUE;
}

/*
 * Put @db in WAL mode.  Leaving a rollback journal takes an exclusive
 * lock, which SQLite asks for once, without the busy handler: two sweeps
 * opening a new database at once saw "database is locked" while the other
 * read it.  So the change is retried for as long as the busy timeout
 * (10 s) would have waited.
 */
static gboolean
set_wal(sqlite3 *db, GError **error)
{
    for (int tries = 0; tries < 1000; tries++) {
        int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            return TRUE;
        }
        if ((rc & 0xff) != SQLITE_BUSY) {
            break;
        }
        g_usleep(10000);
    }
    return exec(db, "PRAGMA journal_mode=WAL", error);     /* once more, for the message */
}

sqlite3 *
hs_sweep_db_open(const char *path, GPtrArray *names, GError **error)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: cannot open (%s)", path,
                    db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    harden(db);
    if (!hs_sweep_db_check(db, TRUE, error)) {
        sqlite3_close(db);
        return NULL;
    }
    g_autoptr(GString) create = g_string_new("CREATE TABLE IF NOT EXISTS points ("
                                             "key TEXT PRIMARY KEY, point INTEGER");
    for (guint i = 0; names && i < names->len; i++) {
        g_autofree char *col = hs_sweep_column(names->pdata[i]);
        g_string_append_printf(create, ", \"%s\"", col);
    }
    g_string_append(create, ", status TEXT NOT NULL, error TEXT");
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        if (m->metric && hs_report_field_is_column(m)) {
            g_string_append_printf(create, ", %s %s", m->name, hs_report_field_sql_type(m));
        }
    }
    for (int c = 0; tail_cols[c]; c++) {
        g_string_append_printf(create, ", %s %s", tail_cols[c], tail_types[c]);
    }
    g_string_append(create, ")");
    g_autofree char *stamp = g_strdup_printf("PRAGMA application_id = %d; PRAGMA user_version "
                                             "= %d", HS_SWEEP_APP_ID, HS_SWEEP_SCHEMA);
    /* WAL: a commit is one append, so a killed writer leaves no torn page */
    if (!set_wal(db, error) || !exec(db, "PRAGMA synchronous=NORMAL", error) ||
        !exec(db, "BEGIN IMMEDIATE", error) ||
        !exec(db, create->str, error) ||
        !exec(db, "CREATE TABLE IF NOT EXISTS settings (column TEXT PRIMARY KEY, name TEXT)",
              error) ||
        !add_setting_columns(db, names, error) ||
        !add_metric_columns(db, error) ||
        !exec(db, stamp, error) ||
        !exec(db, "COMMIT", error)) {
        exec(db, "ROLLBACK", NULL);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

sqlite3 *
hs_sweep_db_open_read(const char *path, GError **error)
{
    sqlite3 *db = NULL;
    /* Read-write where the file and its folder allow it, though nothing is
     * written: a read-only connection to a WAL database cannot remove the
     * -wal and -shm files it makes beside it, so every --show and plot
     * left two files behind; the last read-write connection to close
     * removes them. */
    g_autofree char *dir = g_path_get_dirname(path);
    const int flags = access(path, W_OK) == 0 && access(dir, W_OK) == 0
                      ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) ||
        sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: cannot open (%s)", path,
                    db ? sqlite3_errmsg(db) : "no such file");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    harden(db);
    if (!hs_sweep_db_check(db, FALSE, error)) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void
row_free(HsSweepRow *r)
{
    g_free(r->status);
    g_free(r->point_hash);
    g_free(r->version);
    g_free(r->claimed_by);
    g_free(r);
}

static char *
col_text(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t ? g_strdup((const char *) t) : NULL;
}

static const char row_sql[] = "SELECT key, status, point_hash, version, claimed_by FROM points";

static HsSweepRow *
row_read(sqlite3_stmt *st)
{
    HsSweepRow *r = g_new0(HsSweepRow, 1);
    r->status = col_text(st, 1);
    r->point_hash = col_text(st, 2);
    r->version = col_text(st, 3);
    r->claimed_by = col_text(st, 4);
    return r;
}

GHashTable *
hs_sweep_db_rows(sqlite3 *db, GError **error)
{
    GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) row_free);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, row_sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *key = sqlite3_column_text(st, 0);
        if (key) {
            g_hash_table_insert(rows, g_strdup((const char *) key), row_read(st));
        }
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        g_hash_table_unref(rows);
        db_fail(db, "cannot read the points", error);
        return NULL;
    }
    return rows;
}

/* --- claims --- */

/* Start time of process @pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), and whether it is a zombie; FALSE if there is no such
 * process (or no /proc: then a claim of this host is trusted by pid). */
static gboolean
proc_start(long pid, unsigned long long *start, gboolean *zombie)
{
    g_autofree char *path = g_strdup_printf("/proc/%ld/stat", pid);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return FALSE;
    }
    /* the command name (field 2) is in parentheses and may hold spaces */
    const char *p = strrchr(text, ')');
    if (p == NULL) {
        return FALSE;
    }
    g_auto(GStrv) f = g_strsplit(p + 2, " ", 0);
    if (g_strv_length(f) < 20) {
        return FALSE;
    }
    *zombie = f[0][0] == 'Z' || f[0][0] == 'X';
    *start = g_ascii_strtoull(f[19], NULL, 10);
    return TRUE;
}

char *
hs_sweep_claimant(void)
{
    unsigned long long start = 0;
    gboolean zombie = FALSE;
    long pid = (long) getpid();
    if (!proc_start(pid, &start, &zombie)) {
        start = 0;
    }
    return g_strdup_printf("%s:%ld:%llu", g_get_host_name(), pid, start);
}

HsSweepClaim
hs_sweep_claim_state(const char *who)
{
    /* host:pid:start, the host name may hold colons of its own */
    g_auto(GStrv) parts = g_strsplit(who ? who : "", ":", -1);
    guint n = g_strv_length(parts);
    if (n < 3) {
        return HS_SWEEP_CLAIM_DEAD;          /* not a claim this code wrote */
    }
    g_autofree char *host = g_strjoinv(":", (char **) parts);
    host[strlen(host) - strlen(parts[n - 1]) - strlen(parts[n - 2]) - 2] = '\0';
    if (strcmp(host, g_get_host_name()) != 0) {
        return HS_SWEEP_CLAIM_ELSEWHERE;
    }
    char *end = NULL;
    long pid = strtol(parts[n - 2], &end, 10);
    unsigned long long start = g_ascii_strtoull(parts[n - 1], NULL, 10);
    if (end == parts[n - 2] || *end || pid <= 0) {
        return HS_SWEEP_CLAIM_DEAD;
    }
    unsigned long long now_start = 0;
    gboolean zombie = FALSE;
    if (proc_start(pid, &now_start, &zombie)) {
        /* the same pid started at another time is another process */
        return !zombie && (start == 0 || now_start == start) ? HS_SWEEP_CLAIM_LIVE
                                                             : HS_SWEEP_CLAIM_DEAD;
    }
    return kill((pid_t) pid, 0) == 0 || errno == EPERM ? HS_SWEEP_CLAIM_LIVE
                                                       : HS_SWEEP_CLAIM_DEAD;
}

HsSweepState
hs_sweep_row_state(const HsSweepRow *row, const char *hash_now, const HsSweepPolicy *pol)
{
    if (row == NULL) {
        return HS_SWEEP_NEW;
    }
    if (g_strcmp0(row->status, "claimed") == 0) {
        if (pol->me && g_strcmp0(row->claimed_by, pol->me) == 0) {
            return HS_SWEEP_CLAIMED_DEAD;       /* our own claim: ours to run */
        }
        switch (hs_sweep_claim_state(row->claimed_by)) {
        case HS_SWEEP_CLAIM_LIVE:
            return HS_SWEEP_CLAIMED;
        case HS_SWEEP_CLAIM_ELSEWHERE:
            return pol->reclaim ? HS_SWEEP_CLAIMED_DEAD : HS_SWEEP_CLAIMED_ELSEWHERE;
        default:
            return HS_SWEEP_CLAIMED_DEAD;
        }
    }
    if (g_strcmp0(row->point_hash, hash_now) != 0) {
        return HS_SWEEP_STALE_CONFIG;
    }
    if (g_strcmp0(row->version, hs_version()) != 0) {
        return HS_SWEEP_STALE_VERSION;
    }
    if (g_strcmp0(row->status, "ok") == 0) {
        return HS_SWEEP_DONE;
    }
    return pol->retry_errors ? HS_SWEEP_RETRY : HS_SWEEP_DONE;
}

gboolean
hs_sweep_state_runs(HsSweepState s)
{
    return s != HS_SWEEP_DONE && s != HS_SWEEP_CLAIMED && s != HS_SWEEP_CLAIMED_ELSEWHERE;
}

static gboolean store(sqlite3 *db, const cJSON *rec, int point, const char *claimed_by,
                      GError **error);

gboolean
hs_sweep_db_claim(sqlite3 *db, const char *key, int point, const char *hash_now,
                  const HsSweepPolicy *pol, HsSweepState *found, gboolean *claimed,
                  GError **error)
{
    *claimed = FALSE;
    /* BEGIN IMMEDIATE takes the write lock first: between reading the row
     * and claiming it no other sweep can claim it too */
    if (!exec(db, "BEGIN IMMEDIATE", error)) {
        return FALSE;
    }
    g_autofree char *sql = g_strdup_printf("%s WHERE key = ?", row_sql);
    sqlite3_stmt *st = NULL;
    HsSweepRow *row = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            row = row_read(st);
            rc = SQLITE_DONE;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_fail(db, "cannot read a point", error);
        exec(db, "ROLLBACK", NULL);
        return FALSE;
    }
    *found = hs_sweep_row_state(row, hash_now, pol);
    g_clear_pointer(&row, row_free);
    if (!hs_sweep_state_runs(*found)) {
        return exec(db, "COMMIT", error);
    }
    g_autoptr(cJSON) rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "key", key);
    cJSON_AddStringToObject(rec, "status", "claimed");
    if (!store(db, rec, point, pol->me, error)) {
        exec(db, "ROLLBACK", NULL);
        return FALSE;
    }
    *claimed = TRUE;
    return exec(db, "COMMIT", error);
}

gboolean
hs_sweep_db_release(sqlite3 *db, const char *key, const char *me, GError **error)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "DELETE FROM points WHERE key = ? AND status = 'claimed' AND "
                               "claimed_by = ?", -1, &st, NULL) != SQLITE_OK) {
        return db_fail(db, "cannot release a claim", error);
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, me, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || db_fail(db, "cannot release a claim", error);
}

static const cJSON *
json_at(const cJSON *root, const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    const cJSON *j = root;
    for (char **p = parts; *p && j; p++) {
        j = cJSON_GetObjectItemCaseSensitive(j, *p);
    }
    return j;
}

static void
bind_value(sqlite3_stmt *st, int i, const cJSON *v)
{
    if (cJSON_IsString(v)) {
        sqlite3_bind_text(st, i, v->valuestring, -1, SQLITE_TRANSIENT);
    } else if (cJSON_IsBool(v)) {
        sqlite3_bind_int(st, i, cJSON_IsTrue(v));
    } else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
               fabs(v->valuedouble) < 9e15) {
        sqlite3_bind_int64(st, i, (sqlite3_int64) v->valuedouble);
    } else if (cJSON_IsNumber(v)) {
        sqlite3_bind_double(st, i, v->valuedouble);
    } else {
        sqlite3_bind_null(st, i);
    }
}

/* Write @rec as the row of its key, in the caller's transaction: a
 * record (runs + 1), or with @claimed_by a claim (runs kept). */
static gboolean
store(sqlite3 *db, const cJSON *rec, int point, const char *claimed_by, GError **error)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(rec, "key");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(rec, "status");
    g_autoptr(cJSON) settings = cJSON_IsString(key) ? cJSON_Parse(key->valuestring) : NULL;
    if (!cJSON_IsObject(settings) || !cJSON_IsString(status)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$: expected a sweep record with key and status");
        return FALSE;
    }
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(rec, "result");
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, settings) {
        g_ptr_array_add(names, g_strdup(it->string));
    }
    if (!add_setting_columns(db, names, error)) {
        return FALSE;
    }
    /* how often the point was computed: kept across claims, +1 per result */
    sqlite3_int64 runs = 0;
    sqlite3_stmt *rs = NULL;
    if (sqlite3_prepare_v2(db, "SELECT runs FROM points WHERE key = ?", -1, &rs, NULL) !=
        SQLITE_OK) {
        return db_fail(db, "cannot read a point", error);
    }
    sqlite3_bind_text(rs, 1, key->valuestring, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(rs) == SQLITE_ROW) {
        runs = sqlite3_column_int64(rs, 0);
    }
    sqlite3_finalize(rs);
    if (claimed_by == NULL) {
        runs++;
    }
    g_autoptr(GString) sql = g_string_new("INSERT OR REPLACE INTO points (key, point");
    g_autoptr(GString) qs = g_string_new("?, ?");
    cJSON_ArrayForEach(it, settings) {
        g_autofree char *col = hs_sweep_column(it->string);
        g_string_append_printf(sql, ", \"%s\"", col);
        g_string_append(qs, ", ?");
    }
    g_string_append(sql, ", status, error");
    g_string_append(qs, ", ?, ?");
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        if (m->metric && hs_report_field_is_column(m)) {
            g_string_append_printf(sql, ", %s", m->name);
            g_string_append(qs, ", ?");
        }
    }
    for (const char *const *c = tail_cols; *c; c++) {
        g_string_append_printf(sql, ", %s", *c);
        g_string_append(qs, ", ?");
    }
    g_string_append_printf(sql, ") VALUES (%s)", qs->str);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql->str, -1, &st, NULL) != SQLITE_OK) {
        return db_fail(db, "cannot store a point", error);
    }
    int i = 1;
    sqlite3_bind_text(st, i++, key->valuestring, -1, SQLITE_TRANSIENT);
    if (point >= 0) {
        sqlite3_bind_int(st, i++, point);
    } else {
        sqlite3_bind_null(st, i++);
    }
    cJSON_ArrayForEach(it, settings) {
        bind_value(st, i++, it);
    }
    bind_value(st, i++, status);
    bind_value(st, i++, cJSON_GetObjectItemCaseSensitive(rec, "error"));
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        if (m->metric && hs_report_field_is_column(m)) {
            bind_value(st, i++, result ? json_at(result, m->json_path) : NULL);
        }
    }
    bind_value(st, i++, result ? json_at(result, "config.hash") : NULL);
    bind_value(st, i++, cJSON_GetObjectItemCaseSensitive(rec, "version"));
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(rec, "wall_s");
    if (cJSON_IsNumber(wall)) {
        sqlite3_bind_double(st, i++, wall->valuedouble);
    } else {
        sqlite3_bind_null(st, i++);
    }
    bind_value(st, i++, cJSON_GetObjectItemCaseSensitive(rec, "threads"));
    g_autofree char *text = result ? hs_json_print(result, FALSE) : NULL;
    if (text) {
        sqlite3_bind_text(st, i++, text, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, i++);
    }
    bind_value(st, i++, cJSON_GetObjectItemCaseSensitive(rec, "point_hash"));
    sqlite3_bind_int64(st, i++, runs);
    if (claimed_by) {
        sqlite3_bind_text(st, i++, claimed_by, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, i++, (double) g_get_real_time() * 1e-6);
    } else {
        sqlite3_bind_null(st, i++);
        sqlite3_bind_null(st, i++);
    }
    bind_value(st, i++, cJSON_GetObjectItemCaseSensitive(rec, "command"));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return db_fail(db, "cannot store a point", error);
    }
    return TRUE;
}

gboolean
hs_sweep_db_insert(sqlite3 *db, const cJSON *rec, int point, GError **error)
{
    if (!exec(db, "BEGIN IMMEDIATE", error)) {
        return FALSE;
    }
    if (!store(db, rec, point, NULL, error)) {
        exec(db, "ROLLBACK", NULL);
        return FALSE;
    }
    return exec(db, "COMMIT", error);
}

char *
hs_sweep_label(const char *name)
{
    /* the run options' units (a config key's come from its name) */
    static const struct {
        const char *name, *unit;
    } opts[] = {
        { "prompt", "tokens" }, { "decode", "steps" }, { "batch", "sequences" },
        { "chunk", "tokens" }, { "render", "FPS" }, { "frame_ms", "ms" }, { "frame_mb", "MiB" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
        if (strcmp(name, opts[i].name) == 0) {
            return g_strdup_printf("%s (%s)", name, opts[i].unit);
        }
    }
    const char *unit = hs_param_unit(name);
    return unit && unit[0] ? g_strdup_printf("%s (%s)", name, unit) : g_strdup(name);
}

/* "npu_sram_kib" -> "npu.sram_kib" from the settings table.  (transfer full) */
static GHashTable *
setting_names(sqlite3 *db)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT column, name FROM settings", -1, &st, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *col = (const char *) sqlite3_column_text(st, 0);
            const char *name = (const char *) sqlite3_column_text(st, 1);
            if (col && name) { /* the open check refuses others; belt and braces */
                g_hash_table_insert(h, g_strdup(col), g_strdup(name));
            }
        }
    }
    sqlite3_finalize(st);
    return h;
}

/* The shortest of %.15g, %.16g, %.17g that strtod reads back to @v
 * exactly: %.17g always round-trips but prints 43.095075256999998 for the
 * 43.095075257 a run stored; %.15g alone would lose bits of some values. */
static char *
shortest_double(double v)
{
    for (int digits = 15; digits < 17; digits++) {
        char *t = g_strdup_printf("%.*g", digits, v);
        if (g_ascii_strtod(t, NULL) == v) {
            return t;
        }
        g_free(t);
    }
    return g_strdup_printf("%.17g", v);
}

/* A cell as text: integers as such, reals to 6 significant digits (text)
 * or the shortest text that reads back to the same double (CSV, exact). */
static char *
cell(sqlite3_stmt *st, int c, gboolean exact)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL:
        return g_strdup("");
    case SQLITE_INTEGER:
        return g_strdup_printf("%lld", (long long) sqlite3_column_int64(st, c));
    case SQLITE_FLOAT:
        return exact ? shortest_double(sqlite3_column_double(st, c))
                     : g_strdup_printf("%.6g", sqlite3_column_double(st, c));
    default:
        return g_strdup((const char *) sqlite3_column_text(st, c));
    }
}

static char *
csv_quote(const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        return g_strdup(s);
    }
    g_autoptr(GString) q = g_string_new("\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"') {
            g_string_append_c(q, '"');
        }
        g_string_append_c(q, *p);
    }
    g_string_append_c(q, '"');
    return g_string_free(g_steal_pointer(&q), FALSE);
}

/*
 * --where as the user wrote it, with the dotted setting names --x and
 * --columns take (npu.sram_kib) put as the quoted identifiers of their
 * columns ("npu_sram_kib"): SQLite would read a bare npu.sram_kib as
 * column sram_kib of a table npu.  String literals are left alone; a
 * quoted identifier naming a setting ("npu.sram_kib") is mapped too.  A
 * word that names no column is left as written, for SQLite to refuse.
 */
static char *
where_columns(const char *where, GPtrArray *cols)
{
    GString *out = g_string_new(NULL);
    const char *p = where;
    while (*p) {
        if (*p == '\'') {                       /* a string literal, '' inside */
            const char *q = p + 1;
            while (*q && !(*q == '\'' && q[1] != '\'')) {
                q += *q == '\'' ? 2 : 1;
            }
            q += *q ? 1 : 0;
            g_string_append_len(out, p, q - p);
            p = q;
        } else if (*p == '"' || g_ascii_isalpha(*p) || *p == '_') {
            const char *q = p;
            g_autofree char *word = NULL;
            if (*p == '"') {
                q = strchr(p + 1, '"');
                if (!q) {
                    g_string_append(out, p);
                    break;
                }
                word = g_strndup(p + 1, (gsize) (q - p - 1));
                q++;
            } else {
                while (g_ascii_isalnum(*q) || *q == '_' || *q == '.') {
                    q++;
                }
                word = g_strndup(p, (gsize) (q - p));
            }
            g_autofree char *col = hs_sweep_column(word);
            if (strcmp(col, word) != 0 && has_col(cols, col)) {
                g_string_append_printf(out, "\"%s\"", col);
            } else {
                g_string_append_len(out, p, q - p);
            }
            p = q;
        } else if (g_ascii_isdigit(*p)) {        /* 1.5e3: not a name */
            const char *q = p;
            while (g_ascii_isalnum(*q) || *q == '.') {
                q++;
            }
            g_string_append_len(out, p, q - p);
            p = q;
        } else {
            g_string_append_c(out, *p++);
        }
    }
    return g_string_free(out, FALSE);
}

char *
hs_sweep_db_where(sqlite3 *db, const char *where)
{
    g_autoptr(GPtrArray) cols = table_columns(db);
    return where_columns(where, cols);
}

/* Under the text table: which versions made the rows shown ("13 rows by
 * hetero-sim 0.1.0+g1234abcd"), and where each row's command and config
 * hash are. */
static gboolean
show_versions(sqlite3 *db, GPtrArray *cols, const char *where_sql, FILE *out, GError **error)
{
    if (!has_col(cols, "version")) {
        return TRUE;
    }
    g_autofree char *sql = g_strdup_printf("SELECT version, count(*) FROM points%s GROUP BY "
                                           "version ORDER BY version", where_sql ? where_sql
                                                                                 : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        return db_fail(db, "cannot read the points", error);
    }
    g_autoptr(GString) s = g_string_new(NULL);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *v = (const char *) sqlite3_column_text(st, 0);
        g_autofree char *esc = v ? hs_escape(v) : NULL;
        sqlite3_int64 n = sqlite3_column_int64(st, 1);
        g_string_append_printf(s, "%s%lld row%s by %s%s", s->len ? ", " : "", (long long) n,
                               n == 1 ? "" : "s", esc ? "hetero-sim " : "",
                               esc ? esc : "an unknown version");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return db_fail(db, "cannot read the points", error);
    }
    if (s->len) {
        fprintf(out, "%s (each row's command and config hash: --columns command,config_hash "
                "or --all)\n", s->str);
    }
    return TRUE;
}

gboolean
hs_sweep_db_show(sqlite3 *db, const char *where, const char *columns, int format,
                 gboolean all, FILE *out, GError **error)
{
    g_autoptr(GPtrArray) cols = table_columns(db);
    if (cols->len == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: not a sweep database (no points table)", db_name(db));
        return FALSE;
    }
    g_autoptr(GHashTable) names = setting_names(db);
    /* point, the settings, status, the headline metrics, error; --all: every
     * metric and the rest */
    g_autoptr(GPtrArray) show = g_ptr_array_new();
    g_autoptr(GPtrArray) chosen = g_ptr_array_new_with_free_func(g_free);
    if (columns) {
        g_auto(GStrv) list = g_strsplit(columns, ",", -1);
        for (char **c = list; *c; c++) {
            g_autofree char *col = hs_sweep_column(g_strstrip(*c));
            if (!has_col(cols, col)) {
                g_autofree char *esc = hs_escape(*c);
                g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                            "--columns: no column \"%s\" in %s", esc, db_name(db));
                return FALSE;
            }
            g_ptr_array_add(chosen, g_steal_pointer(&col));
        }
        for (guint i = 0; i < chosen->len; i++) {
            g_ptr_array_add(show, chosen->pdata[i]);
        }
    }
    if (!columns) {
        g_ptr_array_add(show, "point");
    for (guint i = 0; i < cols->len; i++) {
        if (g_hash_table_contains(names, cols->pdata[i])) {
            g_ptr_array_add(show, cols->pdata[i]);
        }
    }
    g_ptr_array_add(show, "status");
    for (const HsReportField *m = hs_report_fields; m->name; m++) {
        /* (a database from an older version may lack a newer metric) */
        if ((m->headline || (all && m->metric && hs_report_field_is_column(m))) &&
            has_col(cols, m->name)) {
            g_ptr_array_add(show, (gpointer) m->name);
        }
    }
    if (all) {
        /* (a database from an older version may lack the later ones) */
        for (int c = 0; tail_cols[c]; c++) {
            if (strcmp(tail_cols[c], "result") != 0 && has_col(cols, tail_cols[c])) {
                g_ptr_array_add(show, (gpointer) tail_cols[c]);
            }
        }
        g_ptr_array_add(show, "key");
        g_ptr_array_add(show, "result");
    }
    g_ptr_array_add(show, "error");
    /* each row's provenance last, as every CSV of a run ends: the version
     * that made it, its point's `run` command line and its config hash
     * (text says them under the table: they would make it too wide) */
    if (!all && format != HS_FORMAT_TEXT) {
        const char *const prov[] = { "version", "command", "config_hash" };
        for (size_t i = 0; i < G_N_ELEMENTS(prov); i++) {
            if (has_col(cols, prov[i])) {
                g_ptr_array_add(show, (gpointer) prov[i]);
            }
        }
    }
    }
    g_autoptr(GString) sql = g_string_new("SELECT ");
    for (guint i = 0; i < show->len; i++) {
        g_string_append_printf(sql, "%s\"%s\"", i ? ", " : "", (char *) show->pdata[i]);
    }
    g_string_append(sql, " FROM points");
    g_autofree char *where_sql = NULL;
    if (where && where[0]) {
        g_autofree char *w = where_columns(where, cols);
        where_sql = g_strdup_printf(" WHERE (%s)", w);
        g_string_append(sql, where_sql);
    }
    g_string_append(sql, " ORDER BY point, key");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql->str, -1, &st, NULL) != SQLITE_OK) {
        g_autofree char *esc = hs_escape(sqlite3_errmsg(db));
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION, "--where: %s", esc);
        return FALSE;
    }
    guint nc = show->len;
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
    g_autoptr(cJSON) json = cJSON_CreateArray();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (format == HS_FORMAT_JSON) {
            cJSON *o = cJSON_CreateObject();
            for (guint c = 0; c < nc; c++) {
                const char *name = show->pdata[c];
                const char *label = g_hash_table_lookup(names, name);
                label = label ? label : name;
                switch (sqlite3_column_type(st, (int) c)) {
                case SQLITE_NULL:
                    cJSON_AddNullToObject(o, label);
                    break;
                case SQLITE_INTEGER:
                case SQLITE_FLOAT:
                    cJSON_AddNumberToObject(o, label, sqlite3_column_double(st, (int) c));
                    break;
                default: {
                    const char *t = (const char *) sqlite3_column_text(st, (int) c);
                    cJSON *parsed = strcmp(name, "result") == 0 ? cJSON_Parse(t) : NULL;
                    cJSON_AddItemToObject(o, label, parsed ? parsed : cJSON_CreateString(t));
                }
                }
            }
            cJSON_AddItemToArray(json, o);
            continue;
        }
        char **row = g_new0(char *, nc + 1);
        for (guint c = 0; c < nc; c++) {
            row[c] = cell(st, (int) c, format == HS_FORMAT_CSV);
        }
        g_ptr_array_add(rows, row);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return db_fail(db, "cannot read the points", error);
    }
    if (format == HS_FORMAT_JSON) {
        g_autofree char *text = hs_json_print(json, TRUE);
        fprintf(out, "%s\n", text);
        return TRUE;
    }
    /* header: the setting names as written in the spec */
    g_auto(GStrv) head = g_new0(char *, nc + 1);
    for (guint c = 0; c < nc; c++) {
        const char *label = g_hash_table_lookup(names, show->pdata[c]);
        head[c] = g_strdup(label ? label : show->pdata[c]);
    }
    if (format == HS_FORMAT_CSV) {
        for (guint r = 0; r <= rows->len; r++) {
            char **row = r == 0 ? head : rows->pdata[r - 1];
            for (guint c = 0; c < nc; c++) {
                g_autofree char *q = csv_quote(row[c]);
                fprintf(out, "%s%s", c ? "," : "", q);
            }
            fprintf(out, "\n");
        }
        return TRUE;
    }
    g_autofree int *width = g_new0(int, nc);
    for (guint r = 0; r <= rows->len; r++) {
        char **row = r == 0 ? head : rows->pdata[r - 1];
        for (guint c = 0; c < nc; c++) {
            width[c] = MAX(width[c], (int) g_utf8_strlen(row[c], -1));
        }
    }
    for (guint r = 0; r <= rows->len; r++) {
        char **row = r == 0 ? head : rows->pdata[r - 1];
        g_autoptr(GString) line = g_string_new(NULL);
        for (guint c = 0; c < nc; c++) {
            /* the error, last, is not padded */
            if (c + 1 < nc) {
                g_string_append_printf(line, "%-*s  ", width[c], row[c]);
            } else {
                g_string_append(line, row[c]);
            }
        }
        while (line->len && line->str[line->len - 1] == ' ') {
            g_string_truncate(line, line->len - 1);
        }
        fprintf(out, "%s\n", line->str);
    }
    return show_versions(db, cols, where_sql, out, error);
}
