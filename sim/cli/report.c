/*
 * report.c - printing one run (text, JSON, CSV: each written from the field
 * table, report-fields.h) and writing its trace; shared by run, compare and
 * replay.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/report-fields.h"
#include "sim/cli/config.h"
#include "sim/util/version-info.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"
#include "traces/perfetto.h"

#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <glib/gstdio.h>

void
hs_run_print_text(const HwSoc *soc, const SimRunReport *r)
{
    g_autofree char *text = hs_report_text(soc, r);
    fputs(text, stdout);
}

/* A CSV cell: quoted (RFC 4180) when it holds a comma, a quote or a line
 * break.  (transfer full) */
static char *
csv_cell(const char *text)
{
    if (strpbrk(text, ",\"\r\n") == NULL) {
        return g_strdup(text);
    }
    g_autoptr(GString) s = g_string_new("\"");
    for (const char *c = text; *c; c++) {
        if (*c == '"') {
            g_string_append_c(s, '"');
        }
        g_string_append_c(s, *c);
    }
    g_string_append_c(s, '"');
    return g_string_free(g_steal_pointer(&s), FALSE);
}

char *
hs_csv_with_provenance(const char *line, gboolean header)
{
    g_autofree char *base = g_strdup(line);
    g_strchomp(base);
    if (header) {
        return g_strdup_printf("%s,version,command,config_hash\n", base);
    }
    g_autofree char *v = csv_cell(hs_version());
    g_autofree char *c = csv_cell(hs_provenance_command_line());
    const char *h = hs_provenance_hash();
    return g_strdup_printf("%s,%s,%s,%s\n", base, v, c, h ? h : "");
}

char *
hs_run_csv_text(const SimRunReport *r, gboolean header)
{
    g_autoptr(GString) out = g_string_new(NULL);
    if (header) {
        g_autofree char *h = hs_report_csv_header();
        g_autofree char *hp = hs_csv_with_provenance(h, TRUE);
        g_string_append(out, hp);
    }
    g_autofree char *row = hs_report_csv_row(r);
    g_autofree char *rp = hs_csv_with_provenance(row, FALSE);
    g_string_append(out, rp);
    return g_string_free(g_steal_pointer(&out), FALSE);
}

/* One CSV row, after the header line if @header. */
void
hs_run_print_csv(const SimRunReport *r, gboolean header)
{
    g_autofree char *text = hs_run_csv_text(r, header);
    fputs(text, stdout);
}

TrcTrace *
hs_run_trace_open(const char *path, GError **error)
{
    return trc_trace_open(path, error);
}

void
hs_run_trace_begin(TrcTrace *tr, const char *label, const HwSoc *soc, SimWorkload *w)
{
    g_autofree const char **names = g_new0(const char *, soc->devs->len + 1);
    for (guint i = 0; i < soc->devs->len; i++) {
        names[i] = ((HwDev *) g_ptr_array_index(soc->devs, i))->name;
    }
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    trc_trace_begin_run(tr, label, names, soc->devs->len, soc->control_cpu,
                        gpu ? gpu->index : UINT32_MAX);
    w->observer = &trc_trace_observer;
    w->observer_opaque = tr;
}

void
hs_run_trace_end(TrcTrace *tr, SimWorkload *w)
{
    trc_trace_end_run(tr);
    w->observer = NULL;
    w->observer_opaque = NULL;
}

gboolean
hs_run_trace_close(TrcTrace *tr, const HwSoc *soc, const char *model, const char *policy,
                   SimSyncMech sync, GError **error)
{
    const char *soc_label = hs_provenance_soc(), *hash = hs_provenance_hash();
    const char *keys[] = { "soc", "model", "policy", "sync", "version", "command",
                           "config_hash", NULL };
    const char *vals[] = { soc_label ? soc_label : soc->name, model, policy,
                           sim_sync_name[sync], hs_version(), hs_provenance_command_line(),
                           hash ? hash : "" };
    return trc_trace_close(tr, keys, vals, error);
}

void
hs_run_print(const HwSoc *soc, const SimRunReport *r, HsFormat format)
{
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = hs_report_json(soc, r);
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
    } else if (format == HS_FORMAT_CSV) {
        hs_run_print_csv(r, TRUE);
    } else {
        hs_run_print_text(soc, r);
        printf("%s\n", hs_provenance_line());
    }
}

char *
hs_run_failure(const SimRunReport *r, const char *plan_failure)
{
    if (plan_failure) {
        return g_strdup(plan_failure);
    }
    if (r->check.checked && !r->check.match) {
        return g_strdup_printf("policy %s computed wrong values: its %s differ from the "
                               "reference (max abs err %.3g of %.3g)", r->policy,
                               r->check.full ? "logits" : "hidden states", r->check.max_abs_err,
                               r->check.max_abs_ref);
    }
    return NULL;
}

void
hs_run_texts(const HwSoc *soc, const SimRunReport *r, const char *why, const cJSON *json_extra,
             HsRunTexts *out)
{
    g_autoptr(cJSON) j = hs_report_json(soc, r);
    const cJSON *m = NULL;
    cJSON_ArrayForEach(m, json_extra) {
        cJSON_AddItemToObject(j, m->string, cJSON_Duplicate(m, TRUE));
    }
    if (why) {
        cJSON_AddStringToObject(j, "failure", why);
    }
    cJSON_AddItemToObject(j, "provenance", hs_provenance_json());
    g_autofree char *js = hs_json_print(j, FALSE);
    out->json = g_strdup_printf("%s\n", js);
    out->csv = hs_run_csv_text(r, TRUE);
    g_autofree char *text = hs_report_text(soc, r);
    out->text = g_strdup_printf("%s%s%s%s%s\n", why ? "FAILED: " : "", why ? why : "",
                                why ? "\n" : "", text, hs_provenance_line());
}

void
hs_run_texts_clear(HsRunTexts *t)
{
    g_clear_pointer(&t->text, g_free);
    g_clear_pointer(&t->json, g_free);
    g_clear_pointer(&t->csv, g_free);
}

gboolean
hs_run_print_checked(const HwSoc *soc, const SimRunReport *r, HsFormat format,
                     const char *plan_failure, cJSON *json_extra, GError **error)
{
    return hs_run_output(soc, r, format, plan_failure, json_extra, NULL, error);
}

gboolean
hs_run_output(const HwSoc *soc, const SimRunReport *r, HsFormat format,
              const char *plan_failure, cJSON *json_extra, HsRunDir *dir, GError **error)
{
    g_autofree char *why = hs_run_failure(r, plan_failure);
    g_autoptr(cJSON) extra = json_extra;
    HsRunTexts t = { 0 };
    hs_run_texts(soc, r, why, extra, &t);
    fputs(format == HS_FORMAT_JSON ? t.json : format == HS_FORMAT_CSV ? t.csv : t.text, stdout);
    gboolean ok = dir == NULL || hs_run_dir_commit(dir, &t, error);
    hs_run_texts_clear(&t);
    if (!ok) {
        return FALSE;
    }
    if (why) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_MISMATCH, "%s", why);
        return FALSE;
    }
    return TRUE;
}

void
hs_progress_stderr(void *opaque, const char *what, uint64_t done, uint64_t total)
{
    if (done >= total) {
        fprintf(stderr, "\r%70s\r", "");              /* leave the line clean */
    } else {
        fprintf(stderr, "\r%s: %3d %%", what, (int) (100.0 * (double) done / (double) total));
    }
}

/* ---- run directories (--out DIR) ------------------------------------------ */

static const char *const run_dir_files[] = {
    "config.json", "report.json", "report.csv", "trace.json", "recording.json", "summary.txt",
    NULL
};
#define RUN_DIR_FILES "config.json, report.json, report.csv, trace.json, recording.json, " \
                      "summary.txt"

struct HsRunDir {
    char *dir;
    char *name;                         /* a child's folder name, else NULL */
    char *trace_part, *record_part;     /* written as the run goes */
    char *config;                       /* config.json's text */
    HsRunTexts texts;                   /* a child's reports (hs_run_dir_set_texts) */
    GPtrArray *children;                /* of HsRunDir: compare's one per policy */
};

/* Whether @dir's summary.txt is one this tool wrote: it opens with the
 * command that ran and hetero-sim's version.  The mark of a run directory
 * that --out may replace: names alone are not (a model's directory holds
 * a config.json of its own, a report.json may be anyone's). */
static gboolean
has_our_summary(const char *dir)
{
    g_autofree char *path = g_build_filename(dir, "summary.txt", NULL);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        return FALSE;                   /* none, or a FIFO or device: not read */
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return FALSE;
    }
    char head[4096];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    return g_str_has_prefix(head, "What ran: ") && strstr(head, "\nVersion: hetero-sim ") != NULL;
}

/*
 * What keeps folder @path from being replaced as a run directory: NULL
 * when it is empty (but for parts of an unfinished write), or holds only
 * a run directory's files (with @children, also a compare's run
 * directories, one per policy, each one of these) and a summary.txt this
 * tool wrote.  Else the first entry that is none of those, or "" when the
 * names are ours but the summary.txt is not (or @path cannot be read:
 * then @error says why, if not NULL).  (transfer full)
 */
static char *
run_dir_foreign(const char *path, gboolean children, GError **error)
{
    g_autoptr(GDir) d = g_dir_open(path, 0, error);
    if (d == NULL) {
        return g_strdup("");
    }
    gboolean empty = TRUE;
    for (const char *e; (e = g_dir_read_name(d)) != NULL;) {
        if (g_str_has_suffix(e, ".part")) {
            continue;
        }
        empty = FALSE;
        g_autofree char *sub = g_build_filename(path, e, NULL);
        g_autofree char *inner = NULL;
        if (!g_strv_contains(run_dir_files, e) &&
            !(children && g_file_test(sub, G_FILE_TEST_IS_DIR) &&
              !g_file_test(sub, G_FILE_TEST_IS_SYMLINK) &&
              (inner = run_dir_foreign(sub, FALSE, NULL)) == NULL)) {
            return g_strdup(e);
        }
    }
    return empty || has_our_summary(path) ? NULL : g_strdup("");
}

HsRunDir *
hs_run_dir_open(const char *dir, GError **error)
{
    if (!hs_outdir_check(dir, error)) {
        return NULL;
    }
    if (g_file_test(dir, G_FILE_TEST_EXISTS)) {
        /* empty, or a previous run directory: replaced */
        g_autoptr(GError) local = NULL;
        g_autofree char *bad = run_dir_foreign(dir, TRUE, &local);
        if (local) {
            g_propagate_prefixed_error(error, g_steal_pointer(&local), "--out %s: ", dir);
            return NULL;
        }
        if (bad && *bad) {
            g_autofree char *q = hs_shell_quote(bad);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "--out %s: expected an empty or a previous run directory (got "
                        "%s in it; a run directory holds only %s, and a compare's "
                        "a run directory per policy)", dir, q, RUN_DIR_FILES);
            return NULL;
        }
        if (bad) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                        "--out %s: expected an empty or a previous run directory (got files "
                        "but no summary.txt written by hetero-sim, so they may be someone "
                        "else's: a run directory is replaced whole)", dir);
            return NULL;
        }
    } else if (!hs_outdir_make(dir, error)) {
        return NULL;
    }
    HsRunDir *rd = g_new0(HsRunDir, 1);
    rd->dir = g_strdup(dir);
    rd->trace_part = g_build_filename(dir, ".trace.json.part", NULL);
    rd->record_part = g_build_filename(dir, ".recording.json.part", NULL);
    return rd;
}

char *
hs_run_dir_folder(const char *name)
{
    /* a policy variant's name has a '/' (mllm-npu/in-order): one folder */
    return g_strdelimit(g_strdup(name), "/\\", '_');
}

HsRunDir *
hs_run_dir_child(HsRunDir *rd, const char *name, GError **error)
{
    g_autofree char *folder = hs_run_dir_folder(name);
    /* a folder name that stays inside DIR and is none of its files */
    if (folder[0] == '\0' || folder[0] == '.' || g_strv_contains(run_dir_files, folder)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "--out %s: expected a policy name usable as a folder name (not empty, "
                    "not starting with '.', none of the run directory's files) (got \"%s\")",
                    rd->dir, name);
        return NULL;
    }
    if (rd->children == NULL) {
        rd->children = g_ptr_array_new_with_free_func((GDestroyNotify) hs_run_dir_free);
    }
    g_autofree char *dir = g_build_filename(rd->dir, folder, NULL);
    for (guint i = 0; i < rd->children->len; i++) {
        HsRunDir *c = rd->children->pdata[i];
        if (strcmp(c->name, name) == 0) {
            return c;
        }
        if (strcmp(c->dir, dir) == 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "--out %s: policies \"%s\" and \"%s\" would share the folder %s",
                        rd->dir, c->name, name, dir);
            return NULL;
        }
    }
    HsRunDir *c = g_new0(HsRunDir, 1);
    c->name = g_strdup(name);
    c->dir = g_steal_pointer(&dir);
    /* its parts beside the parent's: the folder is made at commit */
    g_autofree char *tp = g_strdup_printf(".%s.trace.json.part", folder);
    g_autofree char *rp = g_strdup_printf(".%s.recording.json.part", folder);
    c->trace_part = g_build_filename(rd->dir, tp, NULL);
    c->record_part = g_build_filename(rd->dir, rp, NULL);
    g_ptr_array_add(rd->children, c);
    return c;
}

const char *
hs_run_dir_trace(HsRunDir *rd)
{
    return rd->trace_part;
}

const char *
hs_run_dir_recording(HsRunDir *rd)
{
    return rd->record_part;
}

void
hs_run_dir_set_config(HsRunDir *rd, const cJSON *config)
{
    g_autoptr(cJSON) c = cJSON_Duplicate(config, TRUE);
    cJSON_AddItemToObject(c, "provenance", hs_provenance_json());
    g_autofree char *s = hs_json_print(c, TRUE);
    g_free(rd->config);
    rd->config = g_strdup_printf("%s\n", s);
}

void
hs_run_dir_set_texts(HsRunDir *rd, const HsRunTexts *t)
{
    hs_run_texts_clear(&rd->texts);
    rd->texts.text = g_strdup(t->text);
    rd->texts.json = g_strdup(t->json);
    rd->texts.csv = g_strdup(t->csv);
}

static gboolean
group_add(HsOutGroup *g, const char *dir, const char *name, const char *text, GError **error)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return hs_outgroup_write(g, path, text, strlen(text), error);
}

/* a part written as the run went, moved into the group */
static gboolean
group_add_part(HsOutGroup *g, const char *dir, const char *name, const char *part,
               GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    if (!g_file_test(part, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    if (!g_file_get_contents(part, &data, &len, error)) {
        return FALSE;
    }
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return hs_outgroup_write(g, path, data, len, error);
}

/* @rd's files (@t its reports) into @g; a run directory whose recording
 * is in its children says how to replay one of them. */
static gboolean
group_add_dir(HsOutGroup *g, HsRunDir *rd, const HsRunTexts *t, GError **error)
{
    g_autoptr(GString) sum = g_string_new(NULL);
    g_string_append_printf(sum, "What ran: %s\nVersion: hetero-sim %s\nConfig hash: %s\n\n",
                           hs_provenance_command_line(), hs_version(),
                           hs_provenance_hash() ? hs_provenance_hash() : "");
    g_string_append(sum, t->text);
    g_string_append_printf(sum, "\nTo reproduce (hetero-sim %s):\n  %s\n", hs_version(),
                           hs_provenance_command_line());
    if (rd->children && rd->children->len > 0) {
        g_string_append(sum, "or re-run one policy's recorded plan (its run directory):\n");
        for (guint i = 0; i < rd->children->len; i++) {
            g_autofree char *q = hs_shell_quote(((HsRunDir *) rd->children->pdata[i])->dir);
            g_string_append_printf(sum, "  hetero-sim replay %s\n", q);
        }
    } else {
        g_autofree char *q = hs_shell_quote(rd->dir);
        g_string_append_printf(sum, "or re-run the recorded plan:\n  hetero-sim replay %s\n",
                               q);
    }
    return group_add(g, rd->dir, "config.json", rd->config ? rd->config : "{}\n", error) &&
           group_add(g, rd->dir, "report.json", t->json, error) &&
           group_add(g, rd->dir, "report.csv", t->csv, error) &&
           group_add_part(g, rd->dir, "trace.json", rd->trace_part, error) &&
           group_add_part(g, rd->dir, "recording.json", rd->record_part, error) &&
           group_add(g, rd->dir, "summary.txt", sum->str, error);
}

gboolean
hs_run_dir_commit(HsRunDir *rd, const HsRunTexts *t, GError **error)
{
    g_autoptr(HsOutGroup) g = hs_outgroup_new();
    g_autoptr(GPtrArray) made = g_ptr_array_new();     /* children's folders we created */
    gboolean ok = group_add_dir(g, rd, t, error);
    for (guint i = 0; ok && rd->children && i < rd->children->len; i++) {
        HsRunDir *c = rd->children->pdata[i];
        g_assert(c->texts.text != NULL);           /* hs_run_dir_set_texts came first */
        if (!g_file_test(c->dir, G_FILE_TEST_IS_DIR)) {
            if (g_mkdir(c->dir, 0777) != 0) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                            "--out %s: cannot create the directory: %s", c->dir,
                            g_strerror(errno));
                ok = FALSE;
                break;
            }
            g_ptr_array_add(made, c->dir);
        }
        ok = group_add_dir(g, c, &c->texts, error);
    }
    ok = ok && hs_outgroup_commit(g_steal_pointer(&g), error);
    if (!ok) {
        /* nothing of this run appears: its temporary files went with the
         * group, the folders made for it go too */
        g_clear_pointer(&g, hs_outgroup_free);
        for (guint i = 0; i < made->len; i++) {
            g_rmdir(made->pdata[i]);
        }
        return FALSE;
    }
    /* a previous compare's run directories of policies not in this one
     * would read as this run's: removed (only run-directory files) */
    g_autoptr(GDir) d = g_dir_open(rd->dir, 0, NULL);
    for (const char *e; d && (e = g_dir_read_name(d)) != NULL;) {
        g_autofree char *sub = g_build_filename(rd->dir, e, NULL);
        gboolean ours = FALSE;
        for (guint i = 0; rd->children && i < rd->children->len; i++) {
            ours = ours || strcmp(((HsRunDir *) rd->children->pdata[i])->dir, sub) == 0;
        }
        g_autofree char *bad = NULL;
        if (ours || !g_file_test(sub, G_FILE_TEST_IS_DIR) ||
            g_file_test(sub, G_FILE_TEST_IS_SYMLINK) ||
            (bad = run_dir_foreign(sub, FALSE, NULL)) != NULL) {
            continue;
        }
        for (const char *const *f = run_dir_files; *f; f++) {
            g_autofree char *fp = g_build_filename(sub, *f, NULL);
            g_unlink(fp);
        }
        g_rmdir(sub);
    }
    return TRUE;
}

void
hs_run_dir_free(HsRunDir *rd)
{
    if (rd == NULL) {
        return;
    }
    g_unlink(rd->trace_part);
    g_unlink(rd->record_part);
    if (rd->children) {
        g_ptr_array_unref(rd->children);
    }
    hs_run_texts_clear(&rd->texts);
    g_free(rd->dir);
    g_free(rd->name);
    g_free(rd->trace_part);
    g_free(rd->record_part);
    g_free(rd->config);
    g_free(rd);
}
