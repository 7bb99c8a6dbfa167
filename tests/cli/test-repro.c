/*
 * test-repro.c - a result a reviewer can reproduce: provenance (version,
 * command line, config hash, a SoC given as a file said as one) in every
 * output of run (text, JSON, CSV, trace, recording), run directories
 * (run --out DIR, replay DIR, compare --baseline DIR), soc/stack show's
 * JSON loading back to the same config hash, and --set that changes
 * nothing warned.
 */
#include "cli-run.h"

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

static char *tmp;                /* every test's scratch folder (cwd) */

/* hetero-sim with NULL-terminated arguments, run in tmp */
#define hs(...) hs_in(tmp, __VA_ARGS__)

static char *
path_in(const char *name)
{
    return g_build_filename(tmp, name, NULL);
}

static cJSON *
load(const char *name)
{
    g_autofree char *p = path_in(name);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
    cJSON *j = cJSON_Parse(text);
    g_assert_nonnull(j);
    return j;
}

static const char *
str_at(const cJSON *j, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b) {
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    }
    g_assert_true(cJSON_IsString(x));
    return x->valuestring;
}

/* the version every output carries: what --format json's provenance says */
static void
check_version(const char *v)
{
    g_assert_true(g_str_has_prefix(v, "0.") || g_str_has_prefix(v, "1."));
    g_assert_cmpuint(strlen(v), >=, 5);
}

/* Two reports' prefill, decode, energy and DRAM figures, printed the same
 * (the numbers a replay must give back). */
static void
assert_same_numbers(const cJSON *a, const cJSON *b)
{
    const char *keys[] = { "prefill", "decode", "energy", "dram" };
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_autofree char *x = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, keys[i]));
        g_autofree char *y = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, keys[i]));
        g_assert_nonnull(x);
        g_assert_cmpstr(x, ==, y);
    }
}

#define QUICK "-p", "32", "-d", "2", "--functional", "off"

static void
test_provenance(void)
{
    /* text: last line "hetero-sim VERSION: COMMAND", an argument with a
     * space shell-quoted */
    g_autoptr(Run) t = hs("run", QUICK, "--render", "0", "--llm-priority", "normal", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_autoptr(Run) j = hs("run", QUICK, "--format", "json", "-t", "a.trace", "-r", "a.rec", NULL);
    g_assert_cmpint(j->status, ==, 0);
    g_autoptr(cJSON) rep = cJSON_Parse(j->out);
    const char *ver = str_at(rep, "provenance", "version");
    check_version(ver);
    g_assert_cmpstr(str_at(rep, "provenance", "command"), ==,
                    "hetero-sim run -p 32 -d 2 --functional off --format json -t a.trace "
                    "-r a.rec");
    g_assert_cmpstr(str_at(rep, "provenance", "config_hash"), ==, str_at(rep, "config", "hash"));
    g_autofree char *line = g_strdup_printf("\nhetero-sim %s: hetero-sim run -p 32 -d 2 "
                                            "--functional off --render 0 --llm-priority "
                                            "normal\n", ver);
    g_assert_true(g_str_has_suffix(t->out, line));

    /* CSV: version, command, config_hash columns */
    g_autoptr(Run) c = hs("run", QUICK, "--format", "csv", "--set", "model.num_hidden_layers=4",
                          NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    g_assert_true(g_str_has_suffix(lines[0], ",version,command,config_hash"));
    g_autofree char *cells = g_strdup_printf(",%s,hetero-sim run -p 32 -d 2 --functional off "
                                             "--format csv --set model.num_hidden_layers=4,",
                                             ver);
    g_assert_nonnull(strstr(lines[1], cells));

    /* trace metadata and recording */
    g_autoptr(cJSON) tr = load("a.trace");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tr, "metadata");
    if (meta == NULL) {
        meta = cJSON_GetObjectItemCaseSensitive(tr, "otherData");
    }
    g_assert_nonnull(meta);
    g_assert_cmpstr(str_at(meta, "version", NULL), ==, ver);
    g_assert_cmpstr(str_at(meta, "config_hash", NULL), ==, str_at(rep, "config", "hash"));
    g_assert_nonnull(strstr(str_at(meta, "command", NULL), "-t a.trace"));
    g_autoptr(cJSON) rec = load("a.rec");
    g_assert_cmpstr(str_at(rec, "provenance", "version"), ==, ver);
    g_assert_cmpstr(str_at(rec, "provenance", "config_hash"), ==, str_at(rep, "config", "hash"));

    /* a recording without provenance (older ones) still replays */
    cJSON_DeleteItemFromObjectCaseSensitive(rec, "provenance");
    g_autofree char *old = cJSON_PrintUnformatted(rec);
    g_autofree char *old_path = path_in("old.rec");
    g_assert_true(g_file_set_contents(old_path, old, -1, NULL));
    g_autoptr(Run) rp = hs("replay", "old.rec", "--format", "json", NULL);
    g_assert_cmpint(rp->status, ==, 0);
    g_autoptr(cJSON) rpj = cJSON_Parse(rp->out);
    g_assert_cmpstr(str_at(rpj, "provenance", "config_hash"), ==, str_at(rep, "config", "hash"));
}

static void
test_soc_file_name(void)
{
    /* a SoC file is said as "FILE (from NAME)" in text, JSON and CSV, and
     * shown JSON loads back to the same hash */
    g_autoptr(Run) show = hs("soc", "show", "sd8gen3", "--format", "json", NULL);
    g_assert_cmpint(show->status, ==, 0);
    g_autofree char *p = path_in("npu2x.json");
    g_assert_true(g_file_set_contents(p, show->out, -1, NULL));
    g_autoptr(Run) again = hs("soc", "show", "npu2x.json", "--format", "json", NULL);
    g_assert_cmpint(again->status, ==, 0);
    g_assert_cmpstr(again->out, ==, show->out);          /* show -> load -> show */
    g_autoptr(Run) byname = hs("run", QUICK, "--format", "json", NULL);
    g_autoptr(Run) byfile = hs("run", QUICK, "--format", "json", "--soc", "npu2x.json", NULL);
    g_assert_cmpint(byfile->status, ==, 0);
    g_autoptr(cJSON) a = cJSON_Parse(byname->out);
    g_autoptr(cJSON) b = cJSON_Parse(byfile->out);
    g_assert_cmpstr(str_at(a, "config", "hash"), ==, str_at(b, "config", "hash"));
    g_assert_cmpstr(str_at(b, "provenance", "soc"), ==, "npu2x.json (from sd8gen3)");
    g_assert_cmpstr(str_at(b, "provenance", "soc_file"), ==, "npu2x.json");
    g_assert_cmpstr(str_at(b, "soc", NULL), ==, "npu2x.json (from sd8gen3)");
    g_autoptr(Run) text = hs("run", QUICK, "--soc", "npu2x.json", NULL);
    g_assert_nonnull(strstr(text->out, "on npu2x.json (from sd8gen3),"));
    g_autoptr(Run) csv = hs("run", QUICK, "--soc", "npu2x.json", "--format", "csv", NULL);
    g_assert_nonnull(strstr(csv->out, "\nnpu2x.json (from sd8gen3),"));

    /* a kind that disagrees with the model is refused in one line */
    g_autofree char *bad = g_strdup(show->out);
    char *k = strstr(bad, "\"kind\":\t\"cpu\"");
    if (k == NULL) {
        k = strstr(bad, "\"kind\": \"cpu\"");
    }
    g_assert_nonnull(k);
    memcpy(strstr(k, "cpu"), "gpu", 3);
    g_autofree char *bp = path_in("bad.json");
    g_assert_true(g_file_set_contents(bp, bad, -1, NULL));
    g_autoptr(Run) refused = hs("run", QUICK, "--soc", "bad.json", NULL);
    g_assert_cmpint(refused->status, ==, 1);
    g_assert_nonnull(strstr(refused->err, "$.processors[0].kind: expected \"cpu\""));

    /* stack show loads back too */
    g_autoptr(Run) st = hs("stack", "show", "heterollm", "--format", "json", NULL);
    g_assert_cmpint(st->status, ==, 0);
    g_autofree char *sp = path_in("st.json");
    g_assert_true(g_file_set_contents(sp, st->out, -1, NULL));
    g_autoptr(Run) st2 = hs("stack", "show", "st.json", "--format", "json", NULL);
    g_assert_cmpint(st2->status, ==, 0);
    g_assert_cmpstr(st2->out, ==, st->out);
    g_autoptr(Run) sr = hs("run", QUICK, "--stack", "st.json", NULL);
    g_assert_cmpint(sr->status, ==, 0);
    g_assert_nonnull(strstr(sr->out, "on stack st.json (from heterollm)"));
}

static void
test_run_dir(void)
{
    g_autoptr(Run) r = hs("run", QUICK, "--out", "d1", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    const char *files[] = { "config.json", "report.json", "report.csv", "trace.json",
                            "recording.json", "summary.txt" };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *p = g_build_filename(tmp, "d1", files[i], NULL);
        g_assert_true(g_file_test(p, G_FILE_TEST_IS_REGULAR));
    }
    g_autoptr(cJSON) rep = load("d1/report.json");
    g_autoptr(cJSON) cfg = load("d1/config.json");
    g_assert_cmpstr(str_at(cfg, "hash", NULL), ==, str_at(rep, "config", "hash"));
    g_assert_cmpstr(str_at(cfg, "policy", NULL), ==, "hetero-tensor");
    g_assert_nonnull(strstr(str_at(cfg, "soc_sources", "$.memory.peak_gbps"), "HeteroLLM"));
    g_assert_cmpstr(str_at(cfg, "provenance", "config_hash"), ==, str_at(cfg, "hash", NULL));
    g_autofree char *sum = NULL;
    g_autofree char *sp = path_in("d1/summary.txt");
    g_assert_true(g_file_get_contents(sp, &sum, NULL, NULL));
    g_assert_nonnull(strstr(sum, "hetero-sim run -p 32 -d 2 --functional off --out d1"));
    g_assert_nonnull(strstr(sum, "prefill"));

    /* replay DIR: the same report numbers */
    g_autoptr(Run) rp = hs("replay", "d1", "--format", "json", NULL);
    g_assert_cmpint(rp->status, ==, 0);
    g_autoptr(cJSON) again = cJSON_Parse(rp->out);
    assert_same_numbers(rep, again);

    /* compare --baseline DIR: zero deltas against itself, not after a --set */
    g_autoptr(Run) same = hs("compare", "--baseline", "d1", "--format", "json", NULL);
    g_assert_cmpint(same->status, ==, 0);
    g_autoptr(cJSON) sj = cJSON_Parse(same->out);
    const cJSON *m = NULL;
    int n = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(sj, "metrics")) {
        g_assert_cmpfloat(cJSON_GetObjectItem(m, "delta_pct")->valuedouble, ==, 0);
        n++;
    }
    g_assert_cmpint(n, >, 10);
    g_autoptr(Run) moved = hs("compare", "--baseline", "d1", "--set", "memory.ceiling_gbps=50",
                              NULL);
    g_assert_cmpint(moved->status, ==, 0);
    g_assert_nonnull(strstr(moved->out, "prefill.time_ms"));
    g_assert_null(strstr(moved->out, "\n0 of "));
    /* an option that would change the request, or write elsewhere, is
     * refused, not silently dropped: the baseline directory stays as it
     * was and no other is made */
    g_autofree char *rep_before = NULL, *rep_after = NULL;
    g_autofree char *rep_path = path_in("d1/report.json");
    g_assert_true(g_file_get_contents(rep_path, &rep_before, NULL, NULL));
    static const char *const dropped[][3] = {
        { "--out", "d1", "--out is not taken" },
        { "--out", "d9", "--out is not taken" },
        { "-p", "64", "--prompt is not taken" },
        { "--policies=gpu-only", NULL, "--policies is not taken" },
        { "-t", "t.json", "--trace is not taken" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(dropped); i++) {
        g_autoptr(Run) d = hs("compare", "--baseline", "d1", "--set", "memory.ceiling_gbps=50",
                              dropped[i][0], dropped[i][1], NULL);
        g_assert_cmpint(d->status, ==, 2);
        g_assert_nonnull(strstr(d->err, "--baseline DIR re-runs DIR's own request"));
        g_assert_nonnull(strstr(d->err, dropped[i][2]));
        g_assert_cmpstr(d->out, ==, "");
    }
    g_assert_true(g_file_get_contents(rep_path, &rep_after, NULL, NULL));
    g_assert_cmpstr(rep_before, ==, rep_after);
    g_autofree char *d9 = path_in("d9");
    g_autofree char *tj = path_in("t.json");
    g_assert_false(g_file_test(d9, G_FILE_TEST_EXISTS));
    g_assert_false(g_file_test(tj, G_FILE_TEST_EXISTS));

    /* all-or-nothing target checks: a folder holding other files is
     * refused, untouched; a previous run directory is replaced */
    g_autofree char *other = path_in("other");
    g_assert_cmpint(g_mkdir(other, 0777), ==, 0);
    g_autofree char *keep = path_in("other/notes.txt");
    g_assert_true(g_file_set_contents(keep, "mine", -1, NULL));
    g_autoptr(Run) no = hs("run", QUICK, "--out", "other", NULL);
    g_assert_cmpint(no->status, !=, 0);
    g_assert_nonnull(strstr(no->err, "--out other: expected an empty or a previous run"));
    g_autofree char *rc = path_in("other/report.csv");
    g_assert_false(g_file_test(rc, G_FILE_TEST_EXISTS));
    /* the names alone do not make a run directory: a model's folder with
     * its own config.json is refused, the file kept */
    g_autofree char *mdir = path_in("mymodel");
    g_assert_cmpint(g_mkdir(mdir, 0777), ==, 0);
    g_autofree char *mcfg = path_in("mymodel/config.json");
    g_assert_true(g_file_set_contents(mcfg, "{\"hidden_size\": 64}\n", -1, NULL));
    g_autoptr(Run) mm = hs("run", QUICK, "--out", "mymodel", NULL);
    g_assert_cmpint(mm->status, ==, 1);
    g_assert_cmpstr(mm->err, ==, "hetero-sim: --out mymodel: expected an empty or a previous "
                                 "run directory (got files but no summary.txt written by "
                                 "hetero-sim, so they may be someone else's: a run directory "
                                 "is replaced whole)\n");
    g_autofree char *mtext = NULL;
    g_assert_true(g_file_get_contents(mcfg, &mtext, NULL, NULL));
    g_assert_cmpstr(mtext, ==, "{\"hidden_size\": 64}\n");
    g_autoptr(Run) over = hs("run", QUICK, "--out", "d1", "-P", "gpu-only", NULL);
    g_assert_cmpint(over->status, ==, 0);
    g_autoptr(cJSON) cfg2 = load("d1/config.json");
    g_assert_cmpstr(str_at(cfg2, "policy", NULL), ==, "gpu-only");
}

static void
test_set_warning(void)
{
    g_autoptr(Run) a = hs("run", QUICK, "--set", "npu.sram_kib=16384", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_nonnull(strstr(a->err, "warning: --set npu.sram_kib=16384 changes nothing"));
    g_assert_nonnull(strstr(a->out, "prefill"));          /* the run goes on */
    g_autoptr(Run) b = hs("run", QUICK, "--set", "memory.ceiling_gbps=59.1", NULL);
    g_assert_nonnull(strstr(b->err, "--set memory.ceiling_gbps=59.1 changes nothing"));
    g_autoptr(Run) c = hs("run", QUICK, "--set", "npu.stationary_kib=2048", "--set",
                          "memory.ceiling_gbps=50", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_assert_null(strstr(c->err, "changes nothing"));
    /* the help's own examples change something */
    g_autoptr(Run) h = hs("run", "--help", NULL);
    g_assert_null(strstr(h->out, "sram_kib=16384"));
    g_assert_nonnull(strstr(h->out, "npu.stationary_kib=2048"));
}

/* a compare directory: the compare's reports and trace, and a run
 * directory per policy that replay and compare --baseline read back */
static void
test_compare_dir(void)
{
    g_autoptr(Run) c = hs("compare", QUICK, "-P", "gpu-only,hetero-tensor", "--out", "cd",
                          "--format", "json", NULL);
    g_assert_cmpint(c->status, ==, 0);
    const char *top[] = { "config.json", "report.json", "report.csv", "trace.json",
                          "summary.txt" };
    for (size_t i = 0; i < G_N_ELEMENTS(top); i++) {
        g_autofree char *p = g_build_filename(tmp, "cd", top[i], NULL);
        g_assert_true(g_file_test(p, G_FILE_TEST_IS_REGULAR));
    }
    /* what was printed is report.json */
    g_autofree char *rj = NULL;
    g_autofree char *rjp = path_in("cd/report.json");
    g_assert_true(g_file_get_contents(rjp, &rj, NULL, NULL));
    g_assert_cmpstr(rj, ==, c->out);
    /* config.json: the request once, with the policies, no "policy" */
    g_autoptr(cJSON) cfg = load("cd/config.json");
    const cJSON *pols = cJSON_GetObjectItem(cfg, "policies");
    g_assert_cmpint(cJSON_GetArraySize(pols), ==, 2);
    g_assert_cmpstr(cJSON_GetArrayItem(pols, 1)->valuestring, ==, "hetero-tensor");
    g_assert_null(cJSON_GetObjectItem(cfg, "policy"));
    g_assert_true(cJSON_IsObject(cJSON_GetObjectItem(cfg, "soc")));
    g_autoptr(cJSON) rep = load("cd/report.json");
    g_assert_cmpstr(str_at(cfg, "hash", NULL), ==, str_at(rep, "config", "hash"));
    /* the trace names both policies in its metadata */
    g_autoptr(cJSON) tr = load("cd/trace.json");
    g_assert_cmpstr(str_at(tr, "otherData", "policies"), ==, "gpu-only,hetero-tensor");
    /* its tracks read "gpu lane 0" in Perfetto (which titles a thread
     * "<name> <tid>"): a lane named after its processor, its tid its
     * number, in a process per policy and processor */
    gboolean lane_named = FALSE, proc_named = FALSE;
    const cJSON *ev = NULL;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(tr, "traceEvents")) {
        const cJSON *tid = cJSON_GetObjectItem(ev, "tid");
        g_assert_true(tid == NULL || tid->valuedouble <= 100001);
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "M") != 0) {
            continue;
        }
        const char *what = cJSON_GetObjectItem(ev, "name")->valuestring;
        if (!g_str_has_suffix(what, "_name")) {
            continue;                                /* a sort index */
        }
        const char *name = str_at(ev, "args", "name");
        lane_named |= strcmp(what, "thread_name") == 0 && strcmp(name, "gpu lane") == 0 &&
                      tid->valuedouble == 0;
        proc_named |= strcmp(what, "process_name") == 0 &&
                      strcmp(name, "hetero-tensor gpu") == 0;
    }
    g_assert_true(lane_named);
    g_assert_true(proc_named);
    g_autofree char *sum = NULL;
    g_autofree char *sp = path_in("cd/summary.txt");
    g_assert_true(g_file_get_contents(sp, &sum, NULL, NULL));
    g_assert_nonnull(strstr(sum, "hetero-sim replay cd/hetero-tensor\n"));
    g_assert_nonnull(strstr(sum, "* = best"));

    /* each policy's folder is a run directory: replay DIR/POLICY gives
     * the compare's numbers for that policy */
    const cJSON *res = cJSON_GetObjectItem(rep, "results");
    for (int i = 0; i < 2; i++) {
        const cJSON *one = cJSON_GetArrayItem(res, i);
        const char *pol = str_at(one, "policy", NULL);
        g_autofree char *sub = g_strdup_printf("cd/%s", pol);
        g_autofree char *subcfg = g_strdup_printf("cd/%s/config.json", pol);
        g_autoptr(cJSON) sc = load(subcfg);
        g_assert_cmpstr(str_at(sc, "policy", NULL), ==, pol);
        g_autoptr(Run) rp = hs("replay", sub, "--format", "json", NULL);
        g_assert_cmpint(rp->status, ==, 0);
        g_autoptr(cJSON) again = cJSON_Parse(rp->out);
        g_assert_cmpstr(str_at(again, "policy", NULL), ==, pol);
        assert_same_numbers(one, again);
    }
    /* replay of the compare directory itself names the policies' folders */
    g_autoptr(Run) whole = hs("replay", "cd", NULL);
    g_assert_cmpint(whole->status, ==, 2);
    g_assert_nonnull(strstr(whole->err, "a compare directory"));
    g_assert_nonnull(strstr(whole->err, "cd/gpu-only, cd/hetero-tensor"));
    g_assert_null(strchr(strchr(whole->err, '\n') + 1, '\n'));      /* one line */

    /* compare --baseline DIR: every policy's metrics, none moved against
     * itself; a --set that slows DRAM moves both */
    g_autoptr(Run) same = hs("compare", "--baseline", "cd", "--format", "json", NULL);
    g_assert_cmpint(same->status, ==, 0);
    g_autoptr(cJSON) sj = cJSON_Parse(same->out);
    const cJSON *m = NULL;
    int n_gpu = 0, n_ht = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(sj, "metrics")) {
        g_assert_cmpfloat(cJSON_GetObjectItem(m, "delta_pct")->valuedouble, ==, 0);
        const char *name = cJSON_GetObjectItem(m, "metric")->valuestring;
        n_gpu += g_str_has_prefix(name, "gpu-only: ");
        n_ht += g_str_has_prefix(name, "hetero-tensor: ");
        g_assert_true(g_str_has_prefix(name, "gpu-only: ") ||
                      g_str_has_prefix(name, "hetero-tensor: "));
    }
    g_assert_cmpint(n_gpu, >, 10);
    g_assert_cmpint(n_ht, >=, n_gpu);
    g_autoptr(Run) moved = hs("compare", "--baseline", "cd", "--set", "memory.ceiling_gbps=30",
                              NULL);
    g_assert_cmpint(moved->status, ==, 0);
    g_assert_nonnull(strstr(moved->out, "gpu-only: decode.time_ms"));
    g_assert_nonnull(strstr(moved->out, "hetero-tensor: decode.time_ms"));
    g_assert_null(strstr(moved->out, "\n0 of "));
    /* its CSV ends in the provenance columns */
    g_autoptr(Run) bc = hs("compare", "--baseline", "cd", "--format", "csv", NULL);
    g_assert_cmpint(bc->status, ==, 0);
    g_assert_true(g_str_has_prefix(bc->out,
                                   "metric,baseline,now,delta_pct,version,command,config_hash\n"));
    g_assert_nonnull(strstr(bc->out, ",hetero-sim compare --baseline cd --format csv,"));

    /* again with one policy: the other's folder, stale, is gone; a
     * folder of the user's stays, and refuses the directory */
    g_autoptr(Run) one = hs("compare", QUICK, "-P", "gpu-only", "--out", "cd", NULL);
    g_assert_cmpint(one->status, ==, 0);
    g_autofree char *ht = path_in("cd/hetero-tensor");
    g_assert_false(g_file_test(ht, G_FILE_TEST_EXISTS));
    g_autofree char *go = path_in("cd/gpu-only/recording.json");
    g_assert_true(g_file_test(go, G_FILE_TEST_IS_REGULAR));
    g_autofree char *mine = path_in("cd/mine");
    g_assert_cmpint(g_mkdir(mine, 0777), ==, 0);
    g_autofree char *note = path_in("cd/mine/notes.txt");
    g_assert_true(g_file_set_contents(note, "mine", -1, NULL));
    g_autoptr(Run) no = hs("compare", QUICK, "-P", "gpu-only", "--out", "cd", NULL);
    g_assert_cmpint(no->status, !=, 0);
    g_assert_nonnull(strstr(no->err, "--out cd: expected an empty or a previous run"));
    g_assert_true(g_file_test(note, G_FILE_TEST_IS_REGULAR));
    /* a policy variant's '/' becomes '_' in its folder, and the round
     * trips still hold */
    g_autoptr(Run) v = hs("compare", "--soc", "tiny", "--model", "tiny", QUICK, "-P",
                          "mllm-npu,mllm-npu/in-order", "--out", "vd", NULL);
    g_assert_cmpint(v->status, ==, 0);
    g_autofree char *vrec = path_in("vd/mllm-npu_in-order/recording.json");
    g_assert_true(g_file_test(vrec, G_FILE_TEST_IS_REGULAR));
    g_autoptr(Run) vr = hs("replay", "vd/mllm-npu_in-order", "--format", "json", NULL);
    g_assert_cmpint(vr->status, ==, 0);
    g_autoptr(cJSON) vj = cJSON_Parse(vr->out);
    g_assert_cmpstr(str_at(vj, "policy", NULL), ==, "mllm-npu/in-order");
    g_autoptr(Run) vb = hs("compare", "--baseline", "vd", NULL);
    g_assert_cmpint(vb->status, ==, 0);
    g_assert_nonnull(strstr(vb->out, "mllm-npu/in-order: prefill.time_ms "));
    g_assert_nonnull(strstr(vb->out, "\n0 of "));

    /* --trace beside --out: refused, nothing written */
    g_autoptr(Run) both = hs("compare", QUICK, "--out", "cd2", "--trace", "t.json", NULL);
    g_assert_cmpint(both->status, ==, 2);
    g_autofree char *cd2 = path_in("cd2/report.json");
    g_assert_false(g_file_test(cd2, G_FILE_TEST_EXISTS));
}

/* replay's CSV: the report's columns, plan, then the provenance columns */
static void
test_replay_csv(void)
{
    g_autoptr(Run) r = hs("run", QUICK, "--record", "rc.json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(Run) c = hs("replay", "rc.json", "--format", "csv", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 3);
    g_assert_true(g_str_has_suffix(lines[0], ",plan,version,command,config_hash"));
    g_assert_nonnull(strstr(lines[1], ",re-timed,"));
    g_assert_nonnull(strstr(lines[1], ",hetero-sim replay rc.json --format csv,"));
    /* the same config hash as the run's own JSON */
    g_autoptr(Run) j = hs("replay", "rc.json", "--format", "json", NULL);
    g_autoptr(cJSON) jj = cJSON_Parse(j->out);
    g_assert_true(g_str_has_suffix(lines[1], str_at(jj, "config", "hash")));
}

/* A run made with --set (a SoC key and a stack key), --governor and a
 * --stack file (one that starts from a base) replays to the same numbers
 * from its directory, and compare --baseline finds no difference: the
 * directory's configuration, not the defaults, is what runs again.
 * (replay DIR dropped all four, compare --baseline the stack's --set.)
 * The stack is kept in the directory: its file may move away. */
static void
test_run_dir_own_config(void)
{
    g_autofree char *stk = path_in("mine.json");
    g_assert_true(g_file_set_contents(stk, "{\"name\": \"mine\", \"base\": \"heterollm\","
                                      " \"gpu\": {\"launch_busy_us\": 40}}", -1, NULL));
    g_autoptr(Run) r = hs("run", QUICK, "--stack", "mine.json", "--governor", "performance",
                          "--set", "memory.ceiling_gbps=50",
                          "--set", "stack.gpu.matmul_efficiency=0.2", "--out", "own", NULL);
    assert_ok(r);
    g_autoptr(cJSON) rep = load("own/report.json");
    /* each of the four changes the numbers: otherwise this proves nothing */
    g_autoptr(Run) plain = hs("run", QUICK, "--format", "json", NULL);
    assert_ok(plain);
    g_autoptr(cJSON) pj = cJSON_Parse(plain->out);
    g_assert_cmpfloat(cJSON_GetObjectItem(cJSON_GetObjectItem(pj, "prefill"),
                                          "time_ms")->valuedouble, !=,
                      cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "prefill"),
                                          "time_ms")->valuedouble);
    /* the directory keeps the stack as the run loaded it: moving the
     * stack's file away changes nothing */
    g_autoptr(cJSON) own = load("own/config.json");
    g_assert_cmpstr(str_at(own, "stack_resolved", "name_or_path"), ==, "mine.json");
    g_autofree char *moved = path_in("mine.moved");
    g_assert_cmpint(g_rename(stk, moved), ==, 0);
    g_autoptr(Run) rp = hs("replay", "own", "--format", "json", NULL);
    assert_ok(rp);
    g_autoptr(cJSON) again = cJSON_Parse(rp->out);
    assert_same_numbers(rep, again);
    g_autoptr(Run) same = hs("compare", "--baseline", "own", NULL);
    assert_ok(same);
    g_assert_nonnull(strstr(same->out, "\n0 of "));
    /* the replay's own directory records the whole list, to replay again */
    g_autoptr(Run) rd = hs("replay", "own", "--out", "own2", NULL);
    assert_ok(rd);
    g_autoptr(cJSON) cfg = load("own2/config.json");
    g_autofree char *sets = cJSON_PrintUnformatted(cJSON_GetObjectItem(cfg, "overrides"));
    g_assert_cmpstr(sets, ==, "[\"governor=performance\",\"memory.ceiling_gbps=50\","
                              "\"stack.gpu.matmul_efficiency=0.2\"]");
    g_autoptr(Run) rp2 = hs("replay", "own2", "--format", "json", NULL);
    assert_ok(rp2);
    g_autoptr(cJSON) third = cJSON_Parse(rp2->out);
    g_autofree char *x = cJSON_PrintUnformatted(cJSON_GetObjectItem(rep, "energy"));
    g_autofree char *z = cJSON_PrintUnformatted(cJSON_GetObjectItem(third, "energy"));
    g_assert_cmpstr(x, ==, z);

    /* a damaged stack_resolved is refused in one line, not replaced by
     * whatever the name stands for now */
    cJSON_ReplaceItemInObject(cfg, "stack_resolved", cJSON_CreateNumber(3));
    g_autofree char *text = cJSON_Print(cfg);
    g_autofree char *cp = path_in("own2/config.json");
    g_assert_true(g_file_set_contents(cp, text, -1, NULL));
    g_autoptr(Run) bad = hs("replay", "own2", NULL);
    g_assert_cmpint(bad->status, ==, 1);
    assert_one_error_line(bad, "own2/config.json: $.stack_resolved: expected {\"name_or_path\": "
                               "string, \"profile\": object} (got 3)");
}

/* A recording alone says how its run was made (its provenance's config:
 * the SoC as resolved, the stack, the --set list), and replay FILE runs
 * under it; --soc leaves the recorded SoC's --set behind, not the stack's. */
static void
test_recording_own_config(void)
{
    g_autoptr(Run) r = hs("run", QUICK, "--set", "memory.ceiling_gbps=50",
                          "--set", "stack.gpu.matmul_efficiency=0.2", "--record", "own.rec",
                          "--format", "json", NULL);
    assert_ok(r);
    g_autoptr(cJSON) rj = cJSON_Parse(r->out);
    g_autoptr(Run) rp = hs("replay", "own.rec", "--format", "json", NULL);
    assert_ok(rp);
    g_autoptr(cJSON) again = cJSON_Parse(rp->out);
    assert_same_numbers(rj, again);
    /* on a SoC named anew: the stack's --set stays, the SoC's goes */
    g_autoptr(Run) plain = hs("run", QUICK, "--format", "json", NULL);
    g_autoptr(Run) other = hs("replay", "own.rec", "--soc", "sd8gen3", "--format", "json", NULL);
    assert_ok(plain);
    assert_ok(other);
    g_autoptr(cJSON) pj = cJSON_Parse(plain->out);
    g_autoptr(cJSON) oj = cJSON_Parse(other->out);
#define PREFILL_MS(j) cJSON_GetObjectItem(cJSON_GetObjectItem(j, "prefill"), "time_ms")->valuedouble
    double ms_plain = PREFILL_MS(pj), ms_other = PREFILL_MS(oj), ms_own = PREFILL_MS(rj);
#undef PREFILL_MS
    g_test_message("prefill ms: plain %.3f, recorded %.3f, --soc sd8gen3 %.3f", ms_plain,
                   ms_own, ms_other);
    g_assert_cmpfloat(ms_other, !=, ms_plain);
    g_assert_cmpfloat(ms_other, !=, ms_own);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp = g_dir_make_tmp("hs-repro-XXXXXX", NULL);
    g_assert_nonnull(tmp);
    g_test_add_func("/repro/provenance", test_provenance);
    g_test_add_func("/repro/soc-file-name", test_soc_file_name);
    g_test_add_func("/repro/run-dir", test_run_dir);
    g_test_add_func("/repro/run-dir-own-config", test_run_dir_own_config);
    g_test_add_func("/repro/recording-own-config", test_recording_own_config);
    g_test_add_func("/repro/set-warning", test_set_warning);
    g_test_add_func("/repro/compare-dir", test_compare_dir);
    g_test_add_func("/repro/replay-csv", test_replay_csv);
    int rc = g_test_run();
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", tmp);
    if (system(rm) != 0) {
        g_printerr("could not remove %s\n", tmp);
    }
    return rc;
}
