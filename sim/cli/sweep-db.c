/*
 * sweep-db.c - a sweep's SQLite database.  See sweep.h and README
 * ("Design-space sweeps") for the schema.
 *
 * Every record is stored in its own transaction, and the journal is a
 * write-ahead log: a sweep killed at any moment (kill -9 included) leaves
 * the database with every point stored before that moment and nothing
 * half-written.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/cli.h"
#include "sim/cli/report-fields.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/param.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Columns after the metrics, in table order. */
static const char *const tail_cols[] = { "config_hash", "version", "wall_s", "threads",
                                         "result", NULL };

static gboolean
db_fail(sqlite3 *db, const char *what, GError **error)
{
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s (%s)",
                sqlite3_db_filename(db, "main"), what, sqlite3_errmsg(db));
    return FALSE;
}

static gboolean
exec(sqlite3 *db, const char *sql, GError **error)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: %s",
                    sqlite3_db_filename(db, "main"), msg ? msg : sqlite3_errmsg(db));
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
    /* host columns added after the first version */
    if (!has_col(cols, "threads") &&
        !exec(db, "ALTER TABLE points ADD COLUMN threads INTEGER", error)) {
        return FALSE;
    }
    return TRUE;
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
    g_string_append(create, ", config_hash TEXT, version TEXT, wall_s REAL, threads INTEGER, "
                            "result TEXT)");
    /* WAL: a commit is one append, so a killed writer leaves no torn page */
    if (!exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", error) ||
        !exec(db, "BEGIN IMMEDIATE", error) ||
        !exec(db, create->str, error) ||
        !exec(db, "CREATE TABLE IF NOT EXISTS settings (column TEXT PRIMARY KEY, name TEXT)",
              error) ||
        !add_setting_columns(db, names, error) ||
        !add_metric_columns(db, error) ||
        !exec(db, "COMMIT", error)) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

sqlite3 *
hs_sweep_db_open_read(const char *path, GError **error)
{
    sqlite3 *db = NULL;
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: cannot open (%s)", path,
                    db ? sqlite3_errmsg(db) : "no such file");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    g_autoptr(GPtrArray) cols = table_columns(db);
    if (!has_col(cols, "key") || !has_col(cols, "status")) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: not a sweep database (no points table)", path);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

GHashTable *
hs_sweep_db_done(sqlite3 *db, gboolean retry_errors, GError **error)
{
    GHashTable *done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    sqlite3_stmt *st = NULL;
    const char *sql = retry_errors ? "SELECT key FROM points WHERE status = 'ok'"
                                   : "SELECT key FROM points";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        g_hash_table_unref(done);
        db_fail(db, "cannot read the points", error);
        return NULL;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        g_hash_table_add(done, g_strdup((const char *) sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    return done;
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

gboolean
hs_sweep_db_insert(sqlite3 *db, const cJSON *rec, int point, GError **error)
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
    if (!exec(db, "BEGIN IMMEDIATE", error)) {
        return FALSE;
    }
    if (!add_setting_columns(db, names, error)) {
        exec(db, "ROLLBACK", NULL);
        return FALSE;
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
        db_fail(db, "cannot store a point", error);
        exec(db, "ROLLBACK", NULL);
        return FALSE;
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
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_fail(db, "cannot store a point", error);
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
            g_hash_table_insert(h, g_strdup((const char *) sqlite3_column_text(st, 0)),
                                g_strdup((const char *) sqlite3_column_text(st, 1)));
        }
    }
    sqlite3_finalize(st);
    return h;
}

/* A cell as text: integers as such, reals to 6 significant digits (text)
 * or 17 (CSV, exact). */
static char *
cell(sqlite3_stmt *st, int c, gboolean exact)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL:
        return g_strdup("");
    case SQLITE_INTEGER:
        return g_strdup_printf("%lld", (long long) sqlite3_column_int64(st, c));
    case SQLITE_FLOAT:
        return g_strdup_printf(exact ? "%.17g" : "%.6g", sqlite3_column_double(st, c));
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

gboolean
hs_sweep_db_show(sqlite3 *db, const char *where, const char *columns, int format,
                 gboolean all, GError **error)
{
    g_autoptr(GPtrArray) cols = table_columns(db);
    if (cols->len == 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: not a sweep database (no points table)",
                    sqlite3_db_filename(db, "main"));
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
                g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                            "--columns: no column \"%s\" in %s", *c,
                            sqlite3_db_filename(db, "main"));
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
        g_ptr_array_add(show, "config_hash");
        g_ptr_array_add(show, "version");
        g_ptr_array_add(show, "wall_s");
        if (has_col(cols, "threads")) {
            g_ptr_array_add(show, "threads");
        }
        g_ptr_array_add(show, "key");
        g_ptr_array_add(show, "result");
    }
    g_ptr_array_add(show, "error");
    }
    g_autoptr(GString) sql = g_string_new("SELECT ");
    for (guint i = 0; i < show->len; i++) {
        g_string_append_printf(sql, "%s\"%s\"", i ? ", " : "", (char *) show->pdata[i]);
    }
    g_string_append(sql, " FROM points");
    if (where && where[0]) {
        g_string_append_printf(sql, " WHERE (%s)", where);
    }
    g_string_append(sql, " ORDER BY point, key");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql->str, -1, &st, NULL) != SQLITE_OK) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION, "--where: %s",
                    sqlite3_errmsg(db));
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
        printf("%s\n", text);
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
                printf("%s%s", c ? "," : "", q);
            }
            printf("\n");
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
        printf("%s\n", line->str);
    }
    return TRUE;
}
