/*
 * test-edges.c - the rough edges a newcomer met, each through the real
 * binary: the usage line, bench kernel's verdict, sweep --where with a
 * dotted setting and its CSV numbers, list models' columns, the text
 * report's FPS and small-SoC DRAM figures, compare with a plug-in and -P,
 * replay's re-timed / re-planned, explain --steps' reasons, the trace's
 * step slices and sync track, plot's options and probe's SVGs, a device
 * named as an input.
 */
#include "cli-run.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define hs(...) hs_in(NULL, __VA_ARGS__)

/* The usage line names the command first, as it is typed. */
static void
test_usage(void)
{
    g_autoptr(Run) r = hs("run", "--help", NULL);
    assert_ok(r);
    g_assert_nonnull(strstr(r->out, "\n  hetero-sim run [OPTION"));
    g_assert_null(strstr(r->out, "] run"));
    g_autoptr(Run) b = hs("bench", "--help", NULL);
    assert_ok(b);
    g_assert_nonnull(strstr(b->out, "\n  hetero-sim bench [OPTION"));
    g_assert_nonnull(strstr(b->out, "] TARGET\n"));
}

/* bench kernel's target comes with its verdict, as the other benches'. */
static void
test_bench_kernel_verdict(void)
{
    g_autoptr(Run) r = hs("bench", "kernel", "--quick", NULL);
    assert_ok(r);
    const char *t = strstr(r->out, "target: >= 10000000 events/s");
    g_assert_nonnull(t);
    g_assert_true(strstr(t, ": met (slowest ") != NULL || strstr(t, ": MISSED (slowest ") != NULL);
    g_autoptr(Run) j = hs("bench", "kernel", "--quick", "--format", "json", NULL);
    assert_ok(j);
    g_autoptr(cJSON) root = cJSON_Parse(j->out);
    g_assert_true(cJSON_IsBool(cJSON_GetObjectItem(root, "target_met")));
}

/* The shortest of %.15g .. %.17g that reads back to @v. */
static char *
shortest(double v)
{
    for (int d = 15; d < 17; d++) {
        char *t = g_strdup_printf("%.*g", d, v);
        if (g_ascii_strtod(t, NULL) == v) {
            return t;
        }
        g_free(t);
    }
    return g_strdup_printf("%.17g", v);
}

static char *
tiny_sweep(char **dir)
{
    *dir = g_dir_make_tmp("hs-edges-XXXXXX", NULL);
    g_autofree char *spec = g_build_filename(*dir, "spec.json", NULL);
    static const char text[] =
        "{\"base\": {\"soc\": \"tiny\", \"model\": \"tiny\", \"functional\": \"off\", "
        "\"decode\": 2},\n"
        " \"axes\": {\"policy\": [\"gpu-only\", \"hetero-tensor\"], "
        "\"npu.sram_kib\": [64, 128], \"prompt\": [16, 32]}}\n";
    g_assert_true(g_file_set_contents(spec, text, -1, NULL));
    g_autoptr(Run) r = hs_in(*dir, "sweep", "spec.json", "--db", "a.db", "--jobs", "1", NULL);
    assert_ok(r);
    return g_build_filename(*dir, "a.db", NULL);
}

/* --where takes npu.sram_kib as --x and --columns do (bare or quoted);
 * CSV numbers are the shortest text that reads back exactly. */
static void
test_sweep_where_csv(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *db = tiny_sweep(&dir);
    g_autoptr(Run) r = hs("sweep", "--show", db, "--where", "npu.sram_kib = 64",
                          "--columns", "npu.sram_kib,prompt", "--format", "csv", NULL);
    assert_ok(r);
    g_assert_cmpstr(r->out, ==, "npu.sram_kib,prompt\n64,16\n64,32\n64,16\n64,32\n");
    g_autoptr(Run) q = hs("sweep", "--show", db, "--where",
                          "\"npu.sram_kib\" > 64 AND policy = 'gpu-only'",
                          "--columns", "npu.sram_kib", "--format", "csv", NULL);
    assert_ok(q);
    g_assert_cmpstr(q->out, ==, "npu.sram_kib\n128\n128\n");
    /* a string literal that looks like a setting is left alone */
    g_autoptr(Run) s = hs("sweep", "--show", db, "--where", "policy = 'npu.sram_kib'", NULL);
    assert_ok(s);
    g_autoptr(Run) bad = hs("sweep", "--show", db, "--where", "npu.nope > 1", NULL);
    g_assert_cmpint(bad->status, !=, 0);
    g_assert_nonnull(strstr(bad->err, "--where: no such column: npu.nope"));

    g_autoptr(Run) c = hs("sweep", "--show", db, "--all", "--format", "csv", NULL);
    assert_ok(c);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    guint reals = 0;
    for (char **l = lines + 1; *l && **l; l++) {
        g_auto(GStrv) cells = g_strsplit(*l, ",", -1);
        for (char **cell = cells; *cell; cell++) {
            char *end = NULL;
            double v = g_ascii_strtod(*cell, &end);
            if (**cell == '\0' || *end != '\0' || v == floor(v)) {
                continue;
            }
            g_autofree char *want = shortest(v);
            g_assert_cmpstr(*cell, ==, want);
            reals++;
        }
    }
    g_assert_cmpuint(reals, >, 20);
    g_autofree char *p = g_build_filename(dir, "spec.json", NULL);
    g_unlink(p);
    g_unlink(db);
    g_rmdir(dir);
}

/* list models: the description column starts at one place on every line. */
static void
test_list_models(void)
{
    g_autoptr(Run) r = hs("list", "models", NULL);
    assert_ok(r);
    g_auto(GStrv) lines = g_strsplit(r->out, "\n", -1);
    long col = -1;
    guint n = 0;
    for (char **l = lines; *l && **l; l++) {
        const char *k = strstr(*l, "values+timing  ");
        const char *t = strstr(*l, "timing only    ");
        g_assert_true(k || t);
        long at = (long) ((k ? k : t) - *l) + 15;
        g_assert_cmpint((*l)[at], !=, ' ');
        g_assert_cmpint((*l)[at - 1], ==, ' ');
        if (col < 0) {
            col = at;
        }
        g_assert_cmpint(at, ==, col);
        n++;
    }
    g_assert_cmpuint(n, >, 10);
}

/* The text report: the render rate never above its target; a small
 * SoC's DRAM peak in two decimals. */
static void
test_report_wording(void)
{
    g_autoptr(Run) r = hs("run", "--soc", "tiny", "--model", "tiny", "-p", "256", "-d", "16",
                          "--functional", "off", "--render", "60", NULL);
    assert_ok(r);
    const char *f = strstr(r->out, "priority: ");
    g_assert_nonnull(f);
    double fps = g_ascii_strtod(f + strlen("priority: "), NULL);
    g_assert_cmpfloat(fps, >, 0);
    g_assert_cmpfloat(fps, <=, 60.0);
    /* JSON keeps the count over the window */
    g_autoptr(Run) j = hs("run", "--soc", "tiny", "--model", "tiny", "-p", "256", "-d", "16",
                          "--functional", "off", "--render", "60", "--format", "json", NULL);
    assert_ok(j);
    g_autoptr(cJSON) root = cJSON_Parse(j->out);
    double raw = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "render"), "prefill_fps")
                     ->valuedouble;
    g_assert_cmpfloat(fabs(MIN(raw, 60) - fps), <, 0.051);

    g_autoptr(Run) d = hs("run", "--soc", "tiny", "--model", "tiny", "-p", "16", "-d", "2",
                          "--functional", "off", "--set", "memory.peak_gbps=1", "--set",
                          "memory.ceiling_gbps=0.8", NULL);
    assert_ok(d);
    g_assert_nonnull(strstr(d->out, "DRAM peak 0.80 GB/s of 1\n"));
    /* compare's game column too: never above the target */
    g_autoptr(Run) c = hs("compare", "--soc", "tiny", "--model", "tiny", "-p", "256", "-d", "16",
                          "--functional", "off", "--render", "60", "-P", "gpu-only,hetero-tensor",
                          NULL);
    assert_ok(c);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    guint rows = 0;
    for (char **l = lines + 2; *l && g_str_has_prefix(*l, "  ") && !strstr(*l, ":"); l++) {
        const char *slash = strrchr(*l, '/');
        g_assert_nonnull(slash);
        const char *p = slash - 1;
        while (p > *l && p[-1] != ' ') {
            p--;
        }
        g_assert_cmpfloat(g_ascii_strtod(p, NULL), <=, 60.0);
        g_assert_cmpfloat(g_ascii_strtod(slash + 1, NULL), <=, 60.0);
        rows++;
    }
    g_assert_cmpuint(rows, ==, 2);
}

/* compare runs the plug-in beside the policies -P names, once. */
static void
test_compare_plugin(void)
{
    g_autoptr(Run) r = hs("compare", "--soc", "tiny", "--model", "tiny", "-p", "16", "-d", "2",
                          "--functional", "off", "-P", "gpu-only", "--policy-plugin",
                          g_getenv("HS_PLUGIN"), "--format", "csv", NULL);
    assert_ok(r);
    g_assert_nonnull(strstr(r->out, ",gpu-only,"));
    g_assert_nonnull(strstr(r->out, ",gpu-npu-alternate,"));
    g_autoptr(Run) twice = hs("compare", "--soc", "tiny", "--model", "tiny", "-p", "16", "-d",
                              "2", "--functional", "off", "-P", "gpu-npu-alternate,gpu-only",
                              "--policy-plugin", g_getenv("HS_PLUGIN"), "--format", "csv", NULL);
    assert_ok(twice);
    const char *first = strstr(twice->out, ",gpu-npu-alternate,");
    g_assert_nonnull(first);
    g_assert_null(strstr(first + 1, ",gpu-npu-alternate,"));
}

/* replay says what it did, in text and in CSV. */
static void
test_replay_plan(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-edges-XXXXXX", NULL);
    g_autoptr(Run) rec = hs_in(dir, "run", "--soc", "tiny", "--model", "tiny", "-p", "16", "-d",
                               "2", "--functional", "off", "--record", "r.json", NULL);
    assert_ok(rec);
    g_autofree char *path = g_build_filename(dir, "r.json", NULL);
    g_autoptr(Run) t = hs("replay", path, NULL);
    assert_ok(t);
    g_assert_true(g_str_has_prefix(t->out, "tiny on tiny"));
    g_assert_true(g_str_has_suffix(t->out, "\nreplay: re-timed, the plan hetero-tensor made on "
                                           "tiny run on tiny\n"));
    g_autoptr(Run) p = hs("replay", path, "--policy", "gpu-only", NULL);
    assert_ok(p);
    g_assert_true(g_str_has_suffix(p->out, "\nreplay: re-planned by gpu-only on tiny (recorded: "
                                           "hetero-tensor on tiny)\n"));
    g_autoptr(Run) c = hs("replay", path, "--policy", "gpu-only", "--format", "csv", NULL);
    assert_ok(c);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    /* plan, then the provenance columns every run's CSV ends in */
    g_assert_true(g_str_has_suffix(lines[0], ",plan,version,command,config_hash"));
    g_assert_nonnull(strstr(lines[1], ",re-planned,"));
    g_auto(GStrv) head = g_strsplit(lines[0], ",", -1);
    g_auto(GStrv) row = g_strsplit(lines[1], ",", -1);
    g_assert_cmpuint(g_strv_length(head), ==, g_strv_length(row));
    g_autoptr(Run) c2 = hs("replay", path, "--format", "csv", NULL);
    assert_ok(c2);
    g_assert_nonnull(strstr(c2->out, ",re-timed,"));
    g_unlink(path);
    g_rmdir(dir);
}

/* explain --steps: a start says what held the task, not only its inputs. */
static void
test_explain_reasons(void)
{
    g_autoptr(Run) r = hs("explain", "--steps", "--model", "tiny", "-p", "16", "-d", "1",
                          "--functional", "off", "--sync", "driver", "--policy", "hetero-layer",
                          NULL);
    assert_ok(r);
    g_assert_nonnull(strstr(r->out, "blocked in driver sync #"));
    g_assert_nonnull(strstr(r->out, "the host (cpu-mid) submitting it from "));
    g_assert_nonnull(strstr(r->out, "(its input #"));
    g_assert_null(strstr(r->out, "(after #"));
    g_autoptr(Run) b = hs("explain", "--steps", "--soc", "tiny", "--model", "tiny", "-p", "16",
                          "-d", "1", "--functional", "off", "--policy", "gpu-only", NULL);
    assert_ok(b);
    /* every start line gives one reason */
    g_auto(GStrv) lines = g_strsplit(b->out, "\n", -1);
    guint starts = 0;
    for (char **l = lines; *l; l++) {
        if (strstr(*l, "  start ")) {
            starts++;
            g_assert_true(strstr(*l, "(its input #") || strstr(*l, "(waited ") ||
                          strstr(*l, "(no inputs)"));
        }
    }
    g_assert_cmpuint(starts, >, 30);
    /* an NPU kernel queued behind another: that one, then its graph
     * launch (classroom's heterollm stack: npu.launch_us 20), not the
     * host's submission that ended long before */
    g_autoptr(Run) c = hs("explain", "--steps", "--soc", "classroom", "--model", "tiny", "-p",
                          "96", "-d", "2", NULL);
    assert_ok(c);
    const char *wv = strstr(c->out, "start npu      #7 L0.wv[tokens 0:64]  (waited ");
    g_assert_nonnull(wv);
    const char *eol = strchr(wv, '\n');
    g_autofree char *line = g_strndup(wv, eol - wv);
    g_assert_nonnull(strstr(line, ": npu busy with #5 L0.wk[tokens 0:64] until "));
    g_assert_nonnull(strstr(line, ", then its 0.0200 ms launch; input #2 ready at "));
    /* llama.cpp's CPU attention says how it scores a long prompt: four
     * blocks of 512 queries, (4 x 5 / 2 x 512 x 512) / (2048 x 2049 / 2)
     * = 1.25x the causal scores */
    g_autoptr(Run) d = hs("explain", "--policy", "cpu-only", "-p", "2048", "-d", "1",
                          "--functional", "off", "--task", "L0.attn", NULL);
    assert_ok(d);
    g_assert_nonnull(strstr(d->out, "(the stack's cpu.attention_full_scores and "
                                    "attention_ubatch): 1.25x the causal ones, in FP32"));
    g_assert_nonnull(strstr(d->out, "the prompt in 4 blocks of 512 queries\n"));
}

/* The trace: a slice per decode step, the sync track named after the
 * CPU it runs on, and trace-check passes. */
static void
test_trace(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-edges-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "t.json", NULL);
    g_autoptr(Run) r = hs("run", "--model", "tiny", "-p", "16", "-d", "3", "--functional",
                          "off", "--policy", "hetero-layer", "-t", path, NULL);
    assert_ok(r);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    guint steps = 0;
    gboolean sync_named = FALSE;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents")) {
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "X") == 0 && g_str_has_prefix(name, "decode step ")) {
            g_assert_cmpfloat(cJSON_GetObjectItem(e, "dur")->valuedouble, >, 0);
            steps++;
        }
        if (strcmp(name, "process_name") == 0 &&
            strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring,
                   "sync on cpu-mid") == 0) {
            sync_named = TRUE;
        }
    }
    g_assert_cmpuint(steps, ==, 3);
    g_assert_true(sync_named);
    g_autofree char *check = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tools",
                                              "trace-check.py", NULL);
    const char *argv[] = { "python3", check, path, NULL };
    int wait = 0;
    g_autofree char *out = NULL, *err = NULL;
    if (g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                     &wait, NULL)) {
        g_assert_cmpstr(out, ==, "");
        g_assert_true(g_spawn_check_wait_status(wait, NULL));
    }
    g_unlink(path);
    g_rmdir(dir);
}

static char *
read_file(const char *dir, const char *name)
{
    g_autofree char *p = g_build_filename(dir, name, NULL);
    char *text = NULL;
    g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
    g_unlink(p);
    return text;
}

/* plot's title, labels and log axis, --where with a dotted setting; a log
 * axis of a value <= 0 refused. */
static void
test_plot_options(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *db = tiny_sweep(&dir);
    g_autoptr(Run) r = hs_in(dir, "plot", "a.db", "--x", "prompt", "--series", "policy",
                             "--where", "npu.sram_kib = 64", "--title", "Tiny & small",
                             "--xlabel", "prompt (tokens)", "--ylabel", "prefill (tokens/s)",
                             "--log-y", "-o", "p.svg", NULL);
    assert_ok(r);
    g_autofree char *svg = read_file(dir, "p.svg");
    g_assert_nonnull(strstr(svg, ">Tiny &amp; small</text>"));
    g_assert_nonnull(strstr(svg, ">prompt (tokens)</text>"));
    g_assert_nonnull(strstr(svg, ">prefill (tokens/s), log scale</text>"));
    /* prefill ~96k and ~193k tokens/s: the axis 50000 .. 200000, not 10^4 .. 10^6 */
    g_assert_nonnull(strstr(svg, ">200000</text>"));
    g_assert_null(strstr(svg, ">1000000</text>"));
    /* values_match is 0 with --functional off: no log of it */
    g_autoptr(Run) zero = hs_in(dir, "plot", "a.db", "--x", "prompt", "--series", "policy",
                                "--y", "values_match", "--where", "npu_sram_kib = 64",
                                "--log-y", "-o", "z.svg", NULL);
    g_assert_cmpint(zero->status, ==, 2);
    g_assert_cmpstr(zero->err, ==, "hetero-sim: --log-y: values_match is 0 at prompt = 16: a "
                                   "log axis needs values above 0 (pin them out with --where)\n");
    g_autofree char *p = g_build_filename(dir, "spec.json", NULL);
    g_unlink(p);
    g_autofree char *zp = g_build_filename(dir, "z.svg", NULL);
    g_unlink(zp);
    g_unlink(db);
    g_rmdir(dir);
}

/* probe sync on a log axis (the fast bar a bar, not a sliver); npu-shape
 * as bars. */
static void
test_probe_svgs(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-edges-XXXXXX", NULL);
    g_autoptr(Run) r = hs_in(dir, "probe", "--what", "sync", "-o", "out", NULL);
    assert_ok(r);
    g_autoptr(Run) s = hs_in(dir, "probe", "--what", "npu-shape", "-o", "out", NULL);
    assert_ok(s);
    g_autofree char *out = g_build_filename(dir, "out", NULL);
    g_autofree char *sync = read_file(out, "sync.svg");
    g_assert_nonnull(strstr(sync, "log scale</text>"));
    /* the fast path's bar at least 40 px high (of 324) */
    const char *fast = strstr(sync, ">fast</text>");
    g_assert_nonnull(fast);
    const char *bar = NULL;
    for (const char *p = sync; (p = strstr(p, "<rect x=")) && p < fast; p++) {
        bar = p;
    }
    g_assert_nonnull(bar);
    double h = g_ascii_strtod(strstr(bar, "height=\"") + 8, NULL);
    g_assert_cmpfloat(h, >, 40);
    g_autofree char *shape = read_file(out, "npu-shape.svg");
    g_assert_null(strstr(shape, "<polyline"));
    guint bars = 0;
    for (const char *p = shape; (p = strstr(p, "<rect x=")); p++) {
        bars++;
    }
    g_assert_cmpuint(bars, >=, 8 + 4);           /* 2 lengths x 4 matmuls, 4 legend keys */
    g_autofree char *c1 = g_build_filename(out, "sync.csv", NULL);
    g_autofree char *c2 = g_build_filename(out, "npu-shape.csv", NULL);
    g_unlink(c1);
    g_unlink(c2);
    g_rmdir(out);
    g_rmdir(dir);
}

/* validate --out's plot: a group per paper, named. */
static void
test_validate_groups(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-edges-XXXXXX", NULL);
    /* --out naming a file: refused before anything runs, the file kept */
    g_autofree char *file = g_build_filename(dir, "out", NULL);
    g_assert_true(g_file_set_contents(file, "mine", -1, NULL));
    g_autoptr(Run) f = hs_in(dir, "validate", "-o", "out", NULL);
    g_assert_cmpint(f->status, ==, 1);
    g_assert_cmpstr(f->err, ==, "hetero-sim: --out out: expected a directory (got a file)\n");
    g_assert_cmpstr(f->out, ==, "");
    g_autofree char *kept = NULL;
    g_assert_true(g_file_get_contents(file, &kept, NULL, NULL));
    g_assert_cmpstr(kept, ==, "mine");
    g_unlink(file);
    g_autoptr(Run) r = hs_in(dir, "validate", "-o", "out", NULL);
    g_assert_cmpint(r->status, <=, 1);              /* 1: a miss, still written */
    g_autofree char *out = g_build_filename(dir, "out", NULL);
    g_autofree char *svg = read_file(out, "validate.svg");
    static const char *const papers[] = { "heterollm", "mllm-npu", "npu-tts",
                                          "transformer-lite" };
    for (size_t i = 0; i < G_N_ELEMENTS(papers); i++) {
        g_autofree char *want = g_strdup_printf("font-weight=\"bold\">%s</text>", papers[i]);
        g_assert_nonnull(strstr(svg, want));
    }
    guint rules = 0;
    for (const char *p = svg; (p = strstr(p, "stroke-dasharray=\"4 3\"")); p++) {
        rules++;
    }
    g_assert_cmpuint(rules, ==, G_N_ELEMENTS(papers) - 1);
    g_autofree char *csv = g_build_filename(out, "validate.csv", NULL);
    g_unlink(csv);
    g_rmdir(out);
    g_rmdir(dir);
}

/* probe's text tables: a column as wide as its widest cell, so a long
 * policy name ("transformer-lite") stays apart from the number before it */
static void
test_probe_columns(void)
{
    g_autoptr(Run) r = hs("probe", "--what", "prefill", NULL);
    assert_ok(r);
    g_auto(GStrv) lines = g_strsplit(r->out, "\n", -1);
    guint rows = 0;
    gboolean long_name = FALSE;
    char **l = lines + 2;
    for (; *l && **l && !g_str_has_prefix(*l, "hetero-sim "); l++) {
        /* right-aligned columns: every row as long as the header */
        g_assert_cmpuint(strlen(*l), ==, strlen(lines[1]));
        long_name |= strstr(*l, " transformer-lite ") != NULL;
        g_auto(GStrv) cells = g_strsplit_set(*l, " ", -1);
        guint n = 0;
        for (char **c = cells; *c; c++) {
            n += **c != '\0';
        }
        g_assert_cmpuint(n, ==, 3);                 /* seq, policy, tokens_per_s */
        rows++;
    }
    g_assert_true(long_name);
    g_assert_cmpuint(rows, >, 20);
    /* then what printed it, last */
    g_assert_true(g_str_has_suffix(*l, ": hetero-sim probe --what prefill"));
    g_assert_cmpstr(l[1], ==, "");
}

/* A device is no input file: /dev/zero named as a config, model, points,
 * spec or recording is refused by name at once (it used to be read until
 * memory ran out). */
static void
test_device_inputs(void)
{
    static const char *const cmds[][4] = {
        { "run", "--soc", "/dev/zero", NULL }, { "run", "--stack", "/dev/zero", NULL },
        { "run", "-m", "/dev/zero", NULL }, { "replay", "/dev/zero", NULL },
        { "validate", "--points", "/dev/zero", NULL }, { "sweep", "/dev/zero", NULL },
        { "calibrate", "/dev/zero", NULL },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        g_autoptr(Run) r = hs(cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3], NULL);
        g_assert_cmpint(r->status, !=, 0);
        g_assert_cmpstr(r->out, ==, "");
        assert_one_error_line(r, "/dev/zero: is a device, expected a JSON file");
    }
    /* and a calibration spec's measurements */
    g_autofree char *dir = g_dir_make_tmp("hs-dev-XXXXXX", NULL);
    g_autofree char *spec = g_build_filename(dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(spec,
        "{\"keys\": {\"memory.ceiling_gbps\": {\"min\": 30, \"max\": 68}},"
        " \"csv\": \"/dev/zero\"}", -1, NULL));
    g_autoptr(Run) c = hs("calibrate", spec, NULL);
    g_assert_cmpint(c->status, !=, 0);
    g_autofree char *want = g_strdup_printf("%s: $.csv: /dev/zero: is a device, expected a "
                                            "CSV file", spec);
    assert_one_error_line(c, want);
    g_unlink(spec);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/edges/usage", test_usage);
    g_test_add_func("/edges/bench-kernel-verdict", test_bench_kernel_verdict);
    g_test_add_func("/edges/sweep-where-csv", test_sweep_where_csv);
    g_test_add_func("/edges/list-models", test_list_models);
    g_test_add_func("/edges/report-wording", test_report_wording);
    g_test_add_func("/edges/compare-plugin", test_compare_plugin);
    g_test_add_func("/edges/replay-plan", test_replay_plan);
    g_test_add_func("/edges/explain-reasons", test_explain_reasons);
    g_test_add_func("/edges/trace", test_trace);
    g_test_add_func("/edges/plot-options", test_plot_options);
    g_test_add_func("/edges/probe-svgs", test_probe_svgs);
    g_test_add_func("/edges/validate-groups", test_validate_groups);
    g_test_add_func("/edges/probe-columns", test_probe_columns);
    g_test_add_func("/edges/device-inputs", test_device_inputs);
    return g_test_run();
}
