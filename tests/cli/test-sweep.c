/*
 * test-sweep.c - design-space exploration from the command line: --set
 * on every command that loads a config, and `sweep` into SQLite
 * (resume after kill -9, the same rows whatever the worker count or
 * under mpirun, --show, plot).
 */
#include "cli-run.h"
#include "sim/cli/report-fields.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define hs(...) hs_in(NULL, __VA_ARGS__)

static cJSON *
parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    g_assert_nonnull(j);
    return j;
}

/* The value at "a.b.c" in @root. */
static const cJSON *
at(const cJSON *root, const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    const cJSON *j = root;
    for (char **p = parts; *p && j; p++) {
        j = cJSON_GetObjectItemCaseSensitive(j, *p);
    }
    g_assert_nonnull(j);
    return j;
}

/* soc show --set: the value and its source change, the rest does not. */
static void
test_set_soc_show(void)
{
    g_autoptr(Run) r = hs("soc", "show", "sd8gen3", "--format", "json",
                          "--set", "npu.sram_kib=16384", "--set", "memory.peak_gbps=77",
                          "--set", "sync.fast.poll_us=3", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = parse(r->out);
    g_assert_cmpfloat(at(j, "memory.peak_gbps")->valuedouble, ==, 77);
    g_assert_cmpfloat(at(j, "sync.fast.poll_us")->valuedouble, ==, 3);
    const cJSON *p = NULL;
    gboolean seen = FALSE;
    cJSON_ArrayForEach(p, at(j, "processors")) {
        if (strcmp(at(p, "name")->valuestring, "npu") == 0) {
            g_assert_cmpfloat(at(p, "sram_kib")->valuedouble, ==, 16384);
            seen = TRUE;
        }
    }
    g_assert_true(seen);

    /* the text form says where the value came from */
    g_autoptr(Run) t = hs("soc", "show", "sd8gen3", "--set", "npu.sram_kib=16384", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_nonnull(strstr(t->out, "16384 KiB        [--set npu.sram_kib=16384]"));
    g_autoptr(Run) u = hs("soc", "show", "sd8gen3", NULL);
    g_assert_null(strstr(u->out, "--set"));
}

/* Bad keys: one line naming the --set option, exit 2, on every command. */
static void
test_set_errors(void)
{
    static const struct {
        const char *set, *msg;
    } cases[] = {
        { "npu.sram_kibb=1", "--set npu.sram_kibb=1: unknown key \"sram_kibb\" (known keys: " },
        { "npu.sram_kib=1e9", "--set npu.sram_kib=1e9: expected a number in [1, 1048576] (got 1000000000)" },
        { "npu.sram_kib=big", "--set npu.sram_kib=big: expected a number in [1, 1048576] (got \"big\")" },
        { "npux.sram_kib=1", "--set npux.sram_kib=1: no processor or section \"npux\" in the soc "
                             "config (known: memory, sync, cpu, gpu, npu, cpu-mid)" },
        { "memory.peak_gbps=-1", "--set memory.peak_gbps=-1: expected a number in [0.001, 100000] (got -1)" },
        { "sram_kib", "--set sram_kib: expected PATH=VALUE with PATH a config key such as "
                      "npu.sram_kib, memory.peak_gbps or model.num_hidden_layers" },
        { "model.num_hidden_layers=0",
          "--set model.num_hidden_layers=0: expected an integer in [1, 1024] (got 0)" },
        { "model.layers=3", "--set model.layers=3: unknown model key \"layers\" (known keys: " },
        /* a software stack's key, on every stack the command loads */
        { "stack.gpu.matmul_efficiency=5",
          "--set stack.gpu.matmul_efficiency=5: expected a number in [0.001, 1] (got 5)" },
        { "stack.gpu.nosuch=1", "--set stack.gpu.nosuch=1: unknown key \"nosuch\" (known keys: " },
    };
    static const char *const commands[][4] = {
        { "run", "--functional", "off", NULL },
        { "compare", "--policies", "gpu-only", NULL },
        { "probe", "--what", "sync", NULL },
        { "validate", NULL },
    };
    for (size_t c = 0; c < G_N_ELEMENTS(commands); c++) {
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
            g_autoptr(GPtrArray) argv = g_ptr_array_new();
            g_ptr_array_add(argv, (char *) g_getenv("HS_BIN"));
            for (int k = 0; commands[c][k]; k++) {
                g_ptr_array_add(argv, (char *) commands[c][k]);
            }
            g_ptr_array_add(argv, "--set");
            g_ptr_array_add(argv, (char *) cases[i].set);
            g_ptr_array_add(argv, NULL);
            g_autoptr(Run) r = cli_spawn(NULL, (char *const *) argv->pdata, NULL);
            g_test_message("%s --set %s", commands[c][0], cases[i].set);
            g_assert_cmpint(r->status, ==, 2);
            g_assert_cmpstr(r->out, ==, "");
            g_autofree char *want = g_strdup_printf("hetero-sim: %s", cases[i].msg);
            g_assert_true(g_str_has_prefix(r->err, want));
            g_assert_cmpint(strchr(r->err, '\n') - r->err + 1, ==, strlen(r->err));
        }
    }
    g_autoptr(Run) s = hs("soc", "show", "tiny", "--set", "npu.tile_rows=0", NULL);
    assert_one_error_line(s, "--set npu.tile_rows=0: expected an integer in [1, 1024] (got 0)");
    g_autoptr(Run) x = hs("soc", "show", "tiny", "--set", "memory.peak_gbps=4", NULL);
    g_assert_cmpint(x->status, ==, 1);
    g_assert_true(g_str_has_prefix(x->err, "hetero-sim: with --set memory.peak_gbps=4: "));
    g_assert_true(g_str_has_suffix(x->err, "tiny.json: $.memory.ceiling_gbps: expected at "
                                           "most peak_gbps (4) (got 16)\n"));
}

/* run --set changes the result as editing the file would, and the report
 * records the overrides and the resolved configuration's hash. */
static void
test_set_run(void)
{
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "4", "--format", "json", NULL);
    g_autoptr(Run) b = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "4", "--format", "json",
                          "--set", "model.num_hidden_layers=1", "--set", "memory.peak_gbps=4",
                          "--set", "memory.ceiling_gbps=3", NULL);
    g_autoptr(Run) c = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "4", "--format", "json",
                          "--set", "memory.ceiling_gbps=3", "--set", "memory.peak_gbps=4",
                          "--set", "model.num_hidden_layers=1", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_cmpint(b->status, ==, 0);
    g_assert_cmpint(c->status, ==, 0);
    g_autoptr(cJSON) ja = parse(a->out), jb = parse(b->out), jc = parse(c->out);
    g_assert_cmpint(cJSON_GetArraySize(at(ja, "config.overrides")), ==, 0);
    g_assert_cmpint(cJSON_GetArraySize(at(jb, "config.overrides")), ==, 3);
    g_assert_cmpstr(cJSON_GetArrayItem(at(jb, "config.overrides"), 0)->valuestring, ==,
                    "model.num_hidden_layers=1");
    const char *ha = at(ja, "config.hash")->valuestring, *hb = at(jb, "config.hash")->valuestring;
    g_assert_cmpuint(strlen(ha), ==, 64);
    g_assert_cmpstr(ha, !=, hb);
    /* the same resolved configuration, spelled in another order */
    g_assert_cmpstr(hb, ==, at(jc, "config.hash")->valuestring);
    /* a slower DRAM alone slows a decode step (memory bound); one layer
     * instead of the file's two makes it faster */
    g_autoptr(Run) m = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "4", "--format", "json",
                          "--set", "memory.peak_gbps=4", "--set", "memory.ceiling_gbps=3", NULL);
    g_autoptr(Run) l = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "4", "--format", "json",
                          "--set", "model.num_hidden_layers=1", NULL);
    g_autoptr(cJSON) jm = parse(m->out), jl = parse(l->out);
    g_assert_cmpfloat(at(jm, "decode.tokens_per_s")->valuedouble, <,
                      at(ja, "decode.tokens_per_s")->valuedouble);
    g_assert_cmpfloat(at(jl, "decode.tokens_per_s")->valuedouble, >,
                      at(ja, "decode.tokens_per_s")->valuedouble);

    /* compare records it once for all policies */
    g_autoptr(Run) d = hs("compare", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--policies", "gpu-only,npu-only", "--format", "json",
                          "--set", "npu.sram_kib=64", NULL);
    g_assert_cmpint(d->status, ==, 0);
    g_autoptr(cJSON) jd = parse(d->out);
    g_assert_cmpstr(cJSON_GetArrayItem(at(jd, "config.overrides"), 0)->valuestring, ==,
                    "npu.sram_kib=64");
}

/* replay --set re-times the recorded plan on the changed SoC. */
static void
test_set_replay(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-set-XXXXXX", NULL);
    g_autofree char *rec = g_build_filename(dir, "r.json", NULL);
    g_autoptr(Run) a = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                          "--decode", "2", "--record", rec, "--format", "json", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) b = hs("replay", rec, "--format", "json", "--set", "memory.peak_gbps=2",
                          "--set", "memory.ceiling_gbps=2", NULL);
    g_assert_cmpint(b->status, ==, 0);
    g_autoptr(cJSON) ja = parse(a->out), jb = parse(b->out);
    g_assert_cmpfloat(at(jb, "decode.tokens_per_s")->valuedouble, <,
                      at(ja, "decode.tokens_per_s")->valuedouble);
    /* the recorded plan on the changed SoC: said, as with --soc */
    g_assert_cmpstr(b->err, ==, "hetero-sim: note: re-timing the plan made for tiny on tiny as "
                                "--set changed it (same placements; --replan re-plans it for "
                                "tiny)\n");
    g_assert_cmpstr(at(jb, "replay.plan")->valuestring, ==, "recorded");
    g_autoptr(Run) c = hs("replay", rec, "--set", "model.num_hidden_layers=1", NULL);
    assert_one_error_line(c, "--set model.*: the recorded plan is for the recorded model; "
                             "add --replan (or --policy P) to re-plan the changed model");
    g_autoptr(Run) d = hs("replay", rec, "--set", "npu.nope=1", NULL);
    g_assert_cmpint(d->status, ==, 2);
    g_assert_true(g_str_has_prefix(d->err, "hetero-sim: --set npu.nope=1: unknown key \"nope\""));
    g_autoptr(Run) e = hs("replay", rec, "--policy", "gpu-only", "--format", "json",
                          "--set", "model.num_hidden_layers=1", NULL);
    g_assert_cmpint(e->status, ==, 0);
    g_unlink(rec);
    g_rmdir(dir);
}

/* A temporary directory with a small sweep spec on the tiny SoC: 2
 * policies x 3 SRAM sizes (0 is out of range: those points fail) x 2
 * prompts. */
/* @text as DIR/spec.json in a new scratch folder *@dir; its path. */
static char *
spec_file(const char *text, char **dir)
{
    *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    char *path = g_build_filename(*dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static char *
tiny_spec(char **dir)
{
    return spec_file("{\"base\": {\"soc\": \"tiny\", \"model\": \"tiny\", \"functional\": "
                     "\"off\", \"decode\": 2},\n"
                     " \"axes\": {\"policy\": [\"gpu-only\", \"hetero-tensor\"], "
                     "\"npu.sram_kib\": [64, 128, 0], \"prompt\": [16, 32]},\n"
                     " \"points\": [{\"policy\": \"npu-only\", \"prompt\": 48}]}\n", dir);
}

static int
count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

static void
rm_rf(const char *dir)
{
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
    g_assert_cmpint(system(cmd), ==, 0);
}

/* Every row and column but the host's (wall time, threads), as JSON
 * text; each row's threads checked first: @jobs workers on this
 * machine's cores give each point its share, no more (0: not checked) */
static char *
rows_of_jobs(const char *db, int jobs)
{
    g_autoptr(Run) r = hs("sweep", "--show", db, "--all", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) j = parse(r->out);
    cJSON *row = NULL;
    int cores = (int) g_get_num_processors();
    cJSON_ArrayForEach(row, j) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "threads");
        if (cJSON_IsNull(t)) {
            /* a point whose process died: no host facts */
            g_assert_cmpstr(at(row, "status")->valuestring, ==, "error");
            continue;
        }
        g_assert_true(cJSON_IsNumber(t));
        if (jobs > 0) {
            g_assert_cmpint(t->valueint, ==, MAX(1, cores / jobs));
            g_assert_cmpint(t->valueint * jobs, <=, MAX(cores, jobs));
        }
        cJSON_DeleteItemFromObjectCaseSensitive(row, "wall_s");
        cJSON_DeleteItemFromObjectCaseSensitive(row, "threads");
    }
    return cJSON_Print(j);
}

static char *
rows_of(const char *db)
{
    return rows_of_jobs(db, 0);
}

/* The same rows with 1 and 2 workers; a failing point is a row with its
 * error and the others go on; a second run redoes nothing. */
static void
test_sweep_jobs(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", "--jobs", "1", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_cmpstr(a->out, ==, "a.db: 13 points, 13 run now, 0 already there; 4 failed in all\n");
    g_autoptr(Run) b = hs_in(dir, "sweep", spec, "--db", "b.db", "--jobs", "2", NULL);
    g_assert_cmpint(b->status, ==, 0);
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *db = g_build_filename(dir, "b.db", NULL);
    /* and the engine's threads share the cores: 1 worker all of them,
     * 2 workers half each */
    g_autofree char *ra = rows_of_jobs(da, 1), *rb = rows_of_jobs(db, 2);
    g_assert_cmpstr(ra, ==, rb);

    g_autoptr(cJSON) rows = parse(ra);
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 13);
    const cJSON *row = NULL;
    int failed = 0;
    cJSON_ArrayForEach(row, rows) {
        gboolean ok = strcmp(at(row, "status")->valuestring, "ok") == 0;
        double sram = cJSON_GetObjectItemCaseSensitive(row, "npu.sram_kib")->valuedouble;
        const cJSON *policy = at(row, "policy");
        if (!ok) {
            failed++;
            g_assert_cmpfloat(sram, ==, 0);
            g_assert_cmpstr(at(row, "error")->valuestring, ==,
                            "--set npu.sram_kib=0: expected a number in [1, 1048576] (got 0)");
            g_assert_true(cJSON_IsNull(at(row, "prefill_tokens_per_s")));
        } else {
            g_assert_cmpfloat(at(row, "prefill_tokens_per_s")->valuedouble, >, 0);
            g_assert_cmpuint(strlen(at(row, "config_hash")->valuestring), ==, 64);
            /* the row's result is what 'run --format json' prints */
            g_assert_cmpstr(at(row, "result.policy")->valuestring, ==, policy->valuestring);
            g_assert_cmpfloat(at(row, "result.prefill.tokens_per_s")->valuedouble, ==,
                              at(row, "prefill_tokens_per_s")->valuedouble);
        }
    }
    g_assert_cmpint(failed, ==, 4);

    /* the row of point 0 equals a run with the same options */
    g_autoptr(Run) one = hs("run", "--soc", "tiny", "--model", "tiny", "--functional", "off",
                            "--decode", "2", "--policy", "gpu-only", "--prompt", "16",
                            "--set", "npu.sram_kib=64", "--format", "json", NULL);
    g_autoptr(cJSON) jone = parse(one->out);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(jone, "sim"),
                                            "wall_s");
    /* but for the provenance: the row's is its point's own `run` */
    const cJSON *row0 = cJSON_GetArrayItem(rows, 0);
    const cJSON *prov0 = at(row0, "result.provenance");
    const char *cmd0 = cJSON_GetObjectItem(prov0, "command")->valuestring;
    g_assert_cmpstr(cmd0, ==, at(row0, "command")->valuestring);
    g_assert_cmpstr(cJSON_GetObjectItem(prov0, "version")->valuestring, ==,
                    at(row0, "version")->valuestring);
    g_assert_cmpstr(cJSON_GetObjectItem(prov0, "config_hash")->valuestring, ==,
                    at(row0, "config_hash")->valuestring);
    cJSON_DeleteItemFromObjectCaseSensitive(jone, "provenance");
    g_autoptr(cJSON) res0 = cJSON_Duplicate(at(row0, "result"), TRUE);
    cJSON_DeleteItemFromObjectCaseSensitive(res0, "provenance");
    g_autofree char *tone = cJSON_PrintUnformatted(jone);
    g_autofree char *trow = cJSON_PrintUnformatted(res0);
    g_assert_cmpstr(tone, ==, trow);
    /* the row's command, run as it says, prints the row's result whole,
     * provenance and all */
    g_auto(GStrv) words = NULL;
    g_assert_true(g_shell_parse_argv(cmd0, NULL, &words, NULL));
    g_assert_cmpstr(words[0], ==, "hetero-sim");
    g_free(words[0]);
    words[0] = g_strdup(g_getenv("HS_BIN"));
    g_autoptr(Run) again0 = cli_spawn(dir, words, NULL);
    g_assert_cmpint(again0->status, ==, 0);
    g_autoptr(cJSON) jagain = parse(again0->out);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(jagain, "sim"),
                                            "wall_s");
    g_autofree char *tagain = cJSON_PrintUnformatted(jagain);
    g_autofree char *tfull = cJSON_PrintUnformatted(at(row0, "result"));
    g_assert_cmpstr(tagain, ==, tfull);

    g_autoptr(Run) again = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_cmpstr(again->out, ==,
                    "a.db: 13 points, 0 run now, 13 already there; 4 failed in all\n");
    g_autoptr(Run) retry = hs_in(dir, "sweep", spec, "--db", "a.db", "--retry-errors", NULL);
    g_assert_cmpstr(retry->out, ==,
                    "a.db: 13 points, 4 run now, 9 already there; 4 failed in all\n");

    /* --show --where, csv */
    g_autoptr(Run) w = hs("sweep", "--show", da, "--where", "policy = 'npu-only'", "--format",
                          "csv", NULL);
    g_assert_cmpint(w->status, ==, 0);
    g_assert_true(g_str_has_prefix(w->out, "point,decode,functional,model,npu.sram_kib,"
                                           "policy,prompt,soc,status,prefill_ms,prefill_tokens_per_s,"));
    g_assert_nonnull(strstr(w->out, "\n12,2,off,tiny,,npu-only,48,tiny,ok,"));
    g_assert_cmpint(count_lines(w->out), ==, 2);
    g_autoptr(Run) c = hs("sweep", "--show", da, "--where", "prompt = 48", "--columns",
                          "policy, npu.sram_kib,status", NULL);
    /* the table, then the rows' versions and what printed it */
    g_assert_true(g_str_has_prefix(c->out, "policy    npu.sram_kib  status\n"
                                           "npu-only                ok\n1 row by hetero-sim "));
    g_assert_cmpint(count_lines(c->out), ==, 4);
    g_autoptr(Run) bad = hs("sweep", "--show", da, "--where", "nope = 1", NULL);
    assert_one_error_line(bad, "--where: no such column: nope");

    /* sweep --set: every point gets it (its key and its row too) */
    g_autoptr(Run) s1 = hs_in(dir, "sweep", spec, "--db", "s.db", "--set", "memory.peak_gbps=10",
                              "--set", "memory.ceiling_gbps=8", NULL);
    g_assert_cmpstr(s1->out, ==, "s.db: 13 points, 13 run now, 0 already there; 4 failed in all\n");
    g_autofree char *ds = g_build_filename(dir, "s.db", NULL);
    g_autoptr(Run) s2 = hs("sweep", "--show", ds, "--where", "prompt = 48", "--columns",
                           "memory.peak_gbps,decode_tokens_per_s", NULL);
    g_autoptr(Run) s3 = hs("sweep", "--show", da, "--where", "prompt = 48", "--columns",
                           "decode_tokens_per_s", NULL);
    g_assert_true(g_str_has_prefix(s2->out, "memory.peak_gbps  decode_tokens_per_s\n10  "));
    double slow = g_ascii_strtod(strchr(s2->out, '\n') + 3, NULL);
    double fast = g_ascii_strtod(strchr(s3->out, '\n') + 1, NULL);
    g_assert_cmpfloat(slow, >, 0);
    g_assert_cmpfloat(slow, <, fast);
    g_autoptr(Run) s4 = hs_in(dir, "sweep", spec, "--set", "memory.peak_gbps", NULL);
    g_assert_cmpint(s4->status, ==, 2);
    assert_one_error_line(bad, "--where: no such column: nope");
    rm_rf(dir);
}

/* Row @i of the rows JSON @rows (rows_of), as text. */
static char *
row_text(const char *rows, int i)
{
    g_autoptr(cJSON) j = parse(rows);
    g_assert_cmpint(i, <, cJSON_GetArraySize(j));
    return cJSON_PrintUnformatted(cJSON_GetArrayItem(j, i));
}

/* A worker that dies mid-point takes only that point: its row says how,
 * a new worker runs the later points, and they equal an undisturbed
 * sweep's; a worker interrupted (SIGTERM) leaves its point unrecorded, for
 * the next run. */
static void
test_sweep_worker_dies(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", "--jobs", "1", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *ra = rows_of(da);
    static const char *const jobs[] = { "1", "2" };
    for (size_t i = 0; i < G_N_ELEMENTS(jobs); i++) {
        /* point 2 (gpu-only, SRAM 128, prompt 16): its worker has run
         * points 0 and 1 when --jobs is 1 */
        g_autoptr(Run) k = hs_env_in(dir, "HS_SWEEP_TEST_KILL", "2:9", "sweep", spec, "--db",
                                     "k.db", "--jobs", jobs[i], NULL);
        g_assert_cmpint(k->status, ==, 0);
        g_assert_cmpstr(k->out, ==,
                        "k.db: 13 points, 13 run now, 0 already there; 5 failed in all\n");
        g_autofree char *dk = g_build_filename(dir, "k.db", NULL);
        g_autofree char *rk = rows_of(dk);
        g_autoptr(cJSON) rows = parse(rk);
        g_assert_cmpint(cJSON_GetArraySize(rows), ==, 13);
        const cJSON *dead = cJSON_GetArrayItem(rows, 2);
        g_assert_cmpstr(at(dead, "status")->valuestring, ==, "error");
        g_assert_cmpstr(at(dead, "error")->valuestring, ==,
                        "the point's process died (signal 9, Killed)");
        for (int p = 0; p < 13; p++) {
            if (p != 2) {
                g_autofree char *want = row_text(ra, p), *got = row_text(rk, p);
                g_assert_cmpstr(got, ==, want);
            }
        }
        /* the dead point's row carries its configuration's hash (resolved
         * when it was claimed), so a resume finds it current */
        g_autoptr(cJSON) arows = parse(ra);
        g_assert_cmpstr(at(dead, "point_hash")->valuestring, ==,
                        at(cJSON_GetArrayItem(arows, 2), "point_hash")->valuestring);
        g_autoptr(Run) k2 = hs_in(dir, "sweep", spec, "--db", "k.db", "--jobs", jobs[i], NULL);
        g_assert_cmpstr(k2->out, ==,
                        "k.db: 13 points, 0 run now, 13 already there; 5 failed in all\n");
        g_unlink(dk);

        /* SIGTERM: interrupted, not failed; the next run does it */
        g_autoptr(Run) t = hs_env_in(dir, "HS_SWEEP_TEST_KILL", "2:15", "sweep", spec, "--db",
                                     "t.db", "--jobs", jobs[i], NULL);
        g_assert_cmpint(t->status, ==, 0);
        g_assert_cmpstr(t->out, ==,
                        "t.db: 13 points, 12 run now, 0 already there; 4 failed in all\n");
        g_autoptr(Run) t2 = hs_in(dir, "sweep", spec, "--db", "t.db", "--jobs", jobs[i], NULL);
        g_assert_cmpstr(t2->out, ==,
                        "t.db: 13 points, 1 run now, 12 already there; 4 failed in all\n");
        g_autofree char *dt = g_build_filename(dir, "t.db", NULL);
        g_autofree char *rt = rows_of(dt);
        g_assert_cmpstr(rt, ==, ra);
        g_unlink(dt);
    }
    rm_rf(dir);
}

/* A checked sweep (values computed; the policies' formats share the
 * tiny model's weights, so a worker's later points find them encoded):
 * the same rows with 1 and 2 workers, and each row's result the one its
 * point gives in a process of its own (sweep --point). */
static void
test_sweep_checked_workers(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = spec_file(
        "{\"base\": {\"soc\": \"tiny\", \"model\": \"tiny\", \"functional\": \"layers=1\", "
        "\"decode\": 2, \"prompt\": 16},\n"
        " \"axes\": {\"policy\": [\"gpu-only\", \"mllm-npu\", \"transformer-lite\"], "
        "\"npu.sram_kib\": [64, 128]}}\n", &dir);
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", "--jobs", "1", NULL);
    g_assert_cmpstr(a->out, ==, "a.db: 6 points, 6 run now, 0 already there; 0 failed in all\n");
    g_autoptr(Run) b = hs_in(dir, "sweep", spec, "--db", "b.db", "--jobs", "2", NULL);
    g_assert_cmpstr(b->out, ==, "b.db: 6 points, 6 run now, 0 already there; 0 failed in all\n");
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *db = g_build_filename(dir, "b.db", NULL);
    g_autofree char *ra = rows_of_jobs(da, 1), *rb = rows_of_jobs(db, 2);
    g_assert_cmpstr(ra, ==, rb);

    g_autoptr(cJSON) rows = parse(ra);
    g_autoptr(GHashTable) errs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int p = 0; p < 6; p++) {
        const cJSON *row = cJSON_GetArrayItem(rows, p);
        g_assert_true(cJSON_IsTrue(at(row, "result.functional.checked")));
        g_assert_true(cJSON_IsTrue(at(row, "result.functional.match")));
        g_hash_table_add(errs, g_strdup_printf("%.9g",
                                               at(row, "result.functional.precision_err")
                                                   ->valuedouble));
        g_autofree char *n = g_strdup_printf("%d", p);
        g_autoptr(Run) one = hs_in(dir, "sweep", spec, "--point", n, NULL);
        g_assert_cmpint(one->status, ==, 0);
        g_autoptr(cJSON) rec = parse(one->out);
        g_autofree char *want = cJSON_PrintUnformatted(at(rec, "result"));
        g_autofree char *got = cJSON_PrintUnformatted(at(row, "result"));
        g_assert_cmpstr(got, ==, want);
    }
    /* the policies' formats differ, so their values do */
    g_assert_cmpuint(g_hash_table_size(errs), ==, 3);
    rm_rf(dir);
}

/* plot: a line per series with a legend, axis labels with units; the
 * settings not plotted must be pinned. */
static void
test_plot(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autoptr(Run) t = hs_in(dir, "plot", "a.db", "--x", "npu.sram_kib", "--series", "policy",
                             "--where", "prompt = 16", "--format", "csv", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_true(g_str_has_prefix(t->out, "npu.sram_kib (KiB),       policy,prefill tokens/s\n"
                                           "64,gpu-only,"));
    g_assert_cmpint(count_lines(t->out), ==, 5);        /* the failed SRAM 0 left out */
    g_autoptr(Run) s = hs_in(dir, "plot", "a.db", "--x", "npu.sram_kib", "--series", "policy",
                             "--where", "prompt < 20", "--y", "ttft_ms", "--out", "p.svg", NULL);
    g_assert_cmpint(s->status, ==, 0);
    g_autofree char *svg_path = g_build_filename(dir, "p.svg", NULL);
    g_autofree char *svg = NULL;
    g_assert_true(g_file_get_contents(svg_path, &svg, NULL, NULL));
    g_assert_nonnull(strstr(svg, ">npu.sram_kib (KiB)</text>"));
    g_assert_nonnull(strstr(svg, ">time to first token (ms)</text>"));
    g_assert_nonnull(strstr(svg, "prompt &lt; 20"));
    g_assert_nonnull(strstr(svg, ">hetero-tensor</text>"));
    g_assert_cmpint(count_lines(strstr(svg, "<polyline")), >, 1);
    g_autoptr(Run) d = hs_in(dir, "plot", "a.db", "--x", "npu.sram_kib", "--series", "policy", NULL);
    assert_one_error_line(d, "plot: several rows share an x value on one line: pin the other "
                             "settings that vary (prompt) with --where");
    g_autoptr(Run) nf = hs_in(dir, "plot", "none.db", "--x", "prompt", NULL);
    assert_one_error_line(nf, "none.db: cannot open (no such file)");
    g_autoptr(Run) ns = hs_in(dir, "sweep", "--show", spec, NULL);
    g_assert_cmpint(ns->status, ==, 1);
    g_assert_true(g_str_has_suffix(ns->err, "spec.json: not an SQLite database (file is not a "
                                            "database)\n"));
    g_autoptr(Run) n = hs_in(dir, "plot", "a.db", "--x", "policy", NULL);
    assert_one_error_line(n, "--x: expected a numeric setting (policy holds text); plot names "
                             "as --series");
    rm_rf(dir);
}

/* The member at @path, or NULL (absent). */
static const cJSON *
at_or_null(const cJSON *root, const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    const cJSON *j = root;
    for (char **p = parts; *p && j; p++) {
        j = cJSON_GetObjectItemCaseSensitive(j, *p);
    }
    return j;
}

/* The CSV cell a field's JSON value prints as ("" when absent). */
static char *
cell_of(const HsReportField *f, const cJSON *v)
{
    if (v == NULL) {
        return g_strdup("");
    }
    switch (f->type) {
    case HS_FIELD_NAME:
        return g_strdup(v->valuestring);
    case HS_FIELD_BOOL:
        g_assert_true(cJSON_IsBool(v));
        return g_strdup(cJSON_IsTrue(v) ? "true" : "false");
    case HS_FIELD_COUNT:
    case HS_FIELD_U64:
        return g_strdup_printf("%.0f", v->valuedouble);
    default:
        return g_strdup_printf(f->csv_format, v->valuedouble);
    }
}

/* One schema: every field of the report table is a CSV column (in table
 * order) whose cell is the value at the field's JSON path, a JSON member
 * (per device for per-processor fields), part of the text report, and a
 * metric is a sweep database column holding the same value. */
static void
test_report_fields(void)
{
    static const char *const cases[][8] = {
        { "--policy", "gpu-only", "--functional", "off", NULL },
        { "--policy", "hetero-tensor", "--render", "30", "--llm-priority", "low", NULL },
        { "--policy", "npu-only", "--decode", "0", "--functional", "full", NULL },
    };
    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
        g_autoptr(GPtrArray) args = g_ptr_array_new();
        for (const char *const *a = cases[k]; *a; a++) {
            g_ptr_array_add(args, (char *) *a);
        }
        Run *out[3];
        static const char *const formats[] = { "json", "csv", "text" };
        for (int f = 0; f < 3; f++) {
            g_autoptr(GPtrArray) argv = g_ptr_array_new();
            const char *head[] = { g_getenv("HS_BIN"), "run", "--soc", "tiny", "--model",
                                   "tiny", "--format", formats[f] };
            for (size_t i = 0; i < G_N_ELEMENTS(head); i++) {
                g_ptr_array_add(argv, (char *) head[i]);
            }
            for (guint i = 0; i < args->len; i++) {
                g_ptr_array_add(argv, args->pdata[i]);
            }
            g_ptr_array_add(argv, NULL);
            out[f] = cli_spawn(NULL, (char *const *) argv->pdata, NULL);
            g_assert_cmpint(out[f]->status, ==, 0);
        }
        g_autoptr(cJSON) json = parse(out[0]->out);
        g_auto(GStrv) lines = g_strsplit(out[1]->out, "\n", -1);
        g_auto(GStrv) head = g_strsplit(lines[0], ",", -1);
        g_auto(GStrv) cells = g_strsplit(lines[1], ",", -1);
        const char *text = out[2]->out;
        guint n = 0;
        for (const HsReportField *f = hs_report_fields; f->name; f++) {
            const cJSON *v = at_or_null(json, f->json_path);
            if (f->type == HS_FIELD_PER_PROC) {
                /* "a.*.b" or "a.*": a member per device under "a" */
                g_autofree char *base = g_strndup(f->json_path, strcspn(f->json_path, "*") - 1);
                g_assert_true(f->when != HS_WHEN_ALWAYS || at_or_null(json, base) != NULL);
                g_assert_false(hs_report_field_is_column(f));
            } else if (f->when == HS_WHEN_ALWAYS) {
                g_assert_nonnull(v);
            }
            /* every field is in the text: its own part, or another's */
            g_assert_true(f->text_at > 0 || (f->text_in && hs_report_field_find(f->text_in) &&
                                             hs_report_field_find(f->text_in)->text_at > 0));
            g_assert_true(f->text_at == 0 || (f->text_format != NULL) != (f->text_fn != NULL));
            if (f->text_format && v && (f->text_when == HS_WHEN_ALWAYS ||
                                        (f->text_when == HS_WHEN_DECODE &&
                                         strcmp(cases[k][3], "0") != 0))) {
                g_autofree char *part =
                    f->type == HS_FIELD_NAME ? g_strdup_printf(f->text_format, v->valuestring)
                    : f->type == HS_FIELD_REAL ? g_strdup_printf(f->text_format, v->valuedouble)
                    : f->type == HS_FIELD_COUNT ? g_strdup_printf(f->text_format,
                                                                  (unsigned) v->valuedouble)
                    : g_strdup_printf(f->text_format, (uint64_t) v->valuedouble);
                if (strcmp(f->name, "wall_s") != 0) {
                    g_assert_nonnull(strstr(text, part));
                }
            }
            if (!hs_report_field_is_column(f)) {
                continue;
            }
            g_assert_nonnull(head[n]);
            g_assert_cmpstr(head[n], ==, f->name);
            g_autofree char *want = cell_of(f, v);
            g_assert_cmpstr(cells[n], ==, want);
            n++;
        }
        /* then run's provenance columns (config.h) */
        g_assert_cmpstr(head[n], ==, "version");
        g_assert_cmpstr(head[n + 1], ==, "command");
        g_assert_cmpstr(head[n + 2], ==, "config_hash");
        g_assert_cmpuint(g_strv_length(head), ==, n + 3);
        for (int f = 0; f < 3; f++) {
            run_free(out[f]);
        }
    }
    /* the text parts told by a function */
    g_autoptr(Run) t = hs("run", "--soc", "tiny", "--model", "tiny", "--render", "30", NULL);
    g_assert_nonnull(strstr(t->out, "\n  heaviest op: attn ("));
    g_assert_nonnull(strstr(t->out, "\n  render 30 FPS target, LLM at normal priority: "));
    g_assert_nonnull(strstr(t->out, "\n  values: hidden states match the unpartitioned"));
    g_assert_nonnull(strstr(t->out, "\n  gpu    busy "));
    g_assert_nonnull(strstr(t->out, " GB/s of 20\n"));

    /* the sweep database: a column per metric, holding the result's value */
    g_autofree char *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    g_autofree char *spec = g_build_filename(dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(spec, "{\"base\": {\"soc\": \"tiny\", \"model\": \"tiny\", "
                                      "\"render\": 30, \"decode\": 2}, \"axes\": "
                                      "{\"prompt\": [16]}}", -1, NULL));
    g_autoptr(Run) s = hs_in(dir, "sweep", spec, "--db", "f.db", NULL);
    g_assert_cmpint(s->status, ==, 0);
    g_autofree char *db = g_build_filename(dir, "f.db", NULL);
    g_autoptr(Run) show = hs("sweep", "--show", db, "--all", "--format", "json", NULL);
    g_assert_cmpint(show->status, ==, 0);
    g_autoptr(cJSON) rows = parse(show->out);
    const cJSON *row = cJSON_GetArrayItem(rows, 0);
    const cJSON *result = cJSON_GetObjectItem(row, "result");
    guint metrics = 0;
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (!f->metric || !hs_report_field_is_column(f)) {
            continue;
        }
        const cJSON *col = cJSON_GetObjectItem(row, f->name);
        const cJSON *v = at_or_null(result, f->json_path);
        g_assert_nonnull(col);
        g_assert_nonnull(v);
        if (f->type == HS_FIELD_NAME) {
            g_assert_cmpstr(col->valuestring, ==, v->valuestring);
        } else if (f->type == HS_FIELD_BOOL) {
            g_assert_cmpint((int) col->valuedouble, ==, cJSON_IsTrue(v));
        } else {
            g_assert_cmpfloat(col->valuedouble, ==, v->valuedouble);
        }
        metrics++;
    }
    g_assert_cmpuint(metrics, >, 20);

    /* a database from before a field was added: the sweep that opens it
     * adds the column and fills it from the rows' results */
    sqlite3 *sq = NULL;
    g_assert_cmpint(sqlite3_open(db, &sq), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(sq, "ALTER TABLE points DROP COLUMN tasks", NULL, NULL, NULL),
                    ==, SQLITE_OK);
    sqlite3_close(sq);
    g_autoptr(Run) again = hs_in(dir, "sweep", spec, "--db", "f.db", NULL);
    g_assert_cmpint(again->status, ==, 0);
    g_assert_cmpstr(again->out, ==, "f.db: 1 points, 0 run now, 1 already there; 0 failed in all\n");
    g_autoptr(Run) tc = hs("sweep", "--show", db, "--columns", "tasks", "--format", "csv", NULL);
    g_autofree char *want = g_strdup_printf("tasks\n%.0f\n",
                                            at(result, "sim.tasks")->valuedouble);
    g_assert_cmpstr(tc->out, ==, want);
    rm_rf(dir);
}

/* Bad specs: one line with the file and JSON path. */
static void
test_sweep_spec_errors(void)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        { "{\"axes\": {\"colour\": [1]}}",
          "$.axes.colour: expected a run option (policy, soc, stack, model, sync, prompt, decode, "
          "batch, chunk, functional, seed, render, frame-ms, frame-mb, llm-priority, governor) or a "
          "config key such as npu.sram_kib (got \"colour\")" },
        /* a typo of a run option gets the option it is a few edits from */
        { "{\"base\": {\"promt\": 16}}",
          "$.base.promt: expected a run option (did you mean prompt? policy, soc, stack, model, "
          "sync, prompt, decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, "
          "llm-priority, governor) or a config key such as npu.sram_kib (got \"promt\")" },
        { "{\"axes\": {\"prompt\": []}}",
          "$.axes.prompt: expected a non-empty array of values (got an empty array)" },
        { "{\"axes\": {\"prompt\": [16, [1]]}}",
          "$.axes.prompt[1]: expected an integer in [1, 32768] (got an array)" },
        { "{\"axes\": {\"prompt\": [16, 64, 256, 0]}}",
          "$.axes.prompt[3]: expected an integer in [1, 32768] (got 0)" },
        { "{\"axes\": {\"npu.sram_kib\": [16, [1]]}}",
          "$.axes.npu.sram_kib[1]: expected a string, number or boolean (got an array)" },
        { "{\"points\": [{\"seed\": 1.5}]}",
          "$.points[0].seed: expected an integer in [-9007199254740992, 9007199254740992] (got 1.5)" },
        { "{\"points\": 3}",
          "$.points: expected an array, each an object of settings (got 3)" },
        { "{\"points\": [3]}", "$.points[0]: expected an object of settings (got 3)" },
        { "{\"variants\": {\"policy\": \"gpu-only\"}}",
          "$.variants: expected an array, each an object of settings (got an object)" },
        { "{\"variants\": [{\"policy\": \"gpu-only\"}, {\"prompt\": 0}]}",
          "$.variants[1].prompt: expected an integer in [1, 32768] (got 0)" },
        { "{\"base\": 3}", "$.base: expected an object of settings (got 3)" },
        { "{\"grid\": {}}",
          "$: unknown key \"grid\" (known keys: description, base, axes, variants, points)" },
        /* the spec's own keys, on the param table */
        { "[1]", "$: expected an object (got an array)" },
        { "{\"description\": 3}", "$.description: expected a non-empty string (got 3)" },
        { "{\"axes\": {}, \"axes\": {}}", "$: duplicate key \"axes\"" },
    };
    g_autofree char *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "bad.json", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_assert_true(g_file_set_contents(path, cases[i].text, -1, NULL));
        g_autoptr(Run) r = hs_in(dir, "sweep", path, NULL);
        g_assert_cmpint(r->status, ==, 1);
        g_autofree char *want = g_strdup_printf("%s: %s", path, cases[i].msg);
        assert_one_error_line(r, want);
    }
    /* nothing was run, so no database was made */
    g_autofree char *db = g_build_filename(dir, "sweep.db", NULL);
    g_assert_false(g_file_test(db, G_FILE_TEST_EXISTS));
    g_autoptr(Run) u = hs("sweep", NULL);
    assert_one_error_line(u, "sweep: missing SPEC (see 'hetero-sim sweep --help')");
    g_assert_cmpint(u->status, ==, 2);
    /* --jobs given must be a count of workers: 0 is not "the default" */
    static const char *const jobs[] = { "0", "-1", "4097" };
    g_assert_true(g_file_set_contents(path, "{\"axes\": {\"prompt\": [16]}}", -1, NULL));
    for (size_t i = 0; i < G_N_ELEMENTS(jobs); i++) {
        g_autoptr(Run) j = hs_in(dir, "sweep", path, "--jobs", jobs[i], NULL);
        g_autofree char *want = g_strdup_printf("--jobs: expected an integer in [1, 4096] (got %s)",
                                                jobs[i]);
        assert_one_error_line(j, want);
        g_assert_cmpint(j->status, ==, 2);
    }
    g_assert_false(g_file_test(db, G_FILE_TEST_EXISTS));
    rm_rf(dir);
}

/* kill -9 in the middle, then resume: the rows equal an uninterrupted
 * sweep's, no point stored twice or lost, the database intact. */
static void
test_sweep_resume(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    g_autofree char *spec = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "configs", "sweeps",
                                             "tcm.json", NULL);
    g_autoptr(Run) full = hs_in(dir, "sweep", spec, "--db", "full.db", "--jobs", "2", NULL);
    g_assert_cmpint(full->status, ==, 0);
    g_autofree char *dfull = g_build_filename(dir, "full.db", NULL);
    g_autofree char *dcut = g_build_filename(dir, "cut.db", NULL);

    /* kill at growing delays until the kill lands mid-way */
    int stored = 0, claimed = 0;
    for (int delay_ms = 150; delay_ms < 20000 && (stored == 0 || stored == 48);
         delay_ms *= 2) {
        g_unlink(dcut);
        const char *argv[] = { g_getenv("HS_BIN"), "sweep", spec, "--db", "cut.db",
                               "--jobs", "1", NULL };
        GPid pid;
        g_autoptr(GError) error = NULL;
        g_assert_true(g_spawn_async(dir, (char **) argv, NULL,
                                    G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                    NULL, NULL, &pid, &error));
        g_usleep((gulong) delay_ms * 1000);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!g_file_test(dcut, G_FILE_TEST_EXISTS)) {
            continue;
        }
        g_autoptr(Run) c = hs("sweep", "--show", dcut, "--format", "csv", "--where",
                              "status != 'claimed'", NULL);
        if (c->status != 0) {
            /* killed before the schema was committed: an empty file, or
             * one whose first transaction a resume rolls back */
            g_test_message("%s", c->err);
            g_assert_true(g_str_has_suffix(c->err, "not a sweep database (no points table)\n") ||
                          g_str_has_suffix(c->err, "-journal): run the sweep on it again to "
                                                   "roll it back\n"));
            stored = 0;
            continue;
        }
        stored = count_lines(c->out) - 1;               /* readable after kill -9 */
        /* the point it was running stays claimed by the dead process */
        g_autoptr(Run) cl = hs("sweep", "--show", dcut, "--format", "csv", "--where",
                               "status = 'claimed'", NULL);
        claimed = count_lines(cl->out) - 1;
        g_assert_cmpint(claimed, <=, 1);
        g_test_message("killed after %d ms: %d points stored, %d claimed", delay_ms, stored,
                       claimed);
    }
    g_assert_cmpint(stored, >, 0);
    g_assert_cmpint(stored, <, 48);
    g_autoptr(Run) resume = hs_in(dir, "sweep", spec, "--db", "cut.db", "--jobs", "2", NULL);
    g_assert_cmpint(resume->status, ==, 0);
    g_autofree char *want = g_strdup_printf("cut.db: 48 points, %d run now, %d already there%s; "
                                            "0 failed in all\n", 48 - stored, stored,
                                            claimed ? "; 1 claimed by a sweep that died: re-run"
                                                    : "");
    g_assert_cmpstr(resume->out, ==, want);
    g_autofree char *rf = rows_of(dfull), *rc = rows_of(dcut);
    g_assert_cmpstr(rf, ==, rc);
    rm_rf(dir);
}

/* --list prints a command per point; their records merged give the
 * same rows as a local sweep. */
static void
test_sweep_list_merge(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    g_autoptr(Run) l = hs_in(dir, "sweep", spec, "--list", NULL);
    g_assert_cmpint(l->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(l->out, "\n", -1);
    g_assert_cmpint(g_strv_length(lines), ==, 14);
    g_autoptr(GString) all = g_string_new(NULL);
    for (int i = 0; i < 13; i++) {
        g_assert_nonnull(strstr(lines[i], " sweep "));
        const char *sh[] = { "/bin/sh", "-c", lines[i], NULL };
        g_autoptr(Run) p = cli_spawn(dir, (char *const *) sh, NULL);
        g_assert_cmpint(p->status, ==, 0);
        g_string_append(all, p->out);
    }
    g_autofree char *recs = g_build_filename(dir, "records.jsonl", NULL);
    g_assert_true(g_file_set_contents(recs, all->str, -1, NULL));
    g_autoptr(Run) m = hs_in(dir, "sweep", spec, "--db", "m.db", "--merge", recs, NULL);
    g_assert_cmpint(m->status, ==, 0);
    g_assert_cmpstr(m->out, ==, "m.db: merged 13 records\n");
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_nonnull(a);             /* the local run the rows are compared with */
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *dm = g_build_filename(dir, "m.db", NULL);
    g_autofree char *ra = rows_of(da), *rm = rows_of(dm);
    g_assert_cmpstr(ra, ==, rm);
    /* nothing left to list */
    g_autoptr(Run) l2 = hs_in(dir, "sweep", spec, "--db", "a.db", "--list", NULL);
    g_assert_cmpstr(l2->out, ==, "");
    rm_rf(dir);
}

/* $.variants: each a system laid over the base (its policy wins over
 * the base's), crossed with every combination of the axes, the variants
 * varying slowest; a setting one variant lacks is empty in its rows.
 * And reading the database back (--show) leaves no -wal or -shm file
 * beside it. */
static void
test_sweep_variants(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = spec_file(
        "{\"base\": {\"soc\": \"tiny\", \"model\": \"tiny\", \"functional\": \"off\", "
        "\"decode\": 1, \"policy\": \"npu-only\"},\n"
        " \"variants\": [{\"policy\": \"gpu-only\"}, "
        "{\"policy\": \"cpu-only\", \"stack\": \"llama-cpp\"}],\n"
        " \"axes\": {\"prompt\": [8, 16]}}\n", &dir);
    g_autoptr(Run) r = hs_in(dir, "sweep", spec, "--db", "v.db", "-q", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpstr(r->out, ==, "v.db: 4 points, 4 run now, 0 already there; 0 failed in all\n");
    g_autofree char *db = g_build_filename(dir, "v.db", NULL);
    g_autoptr(Run) s = hs_in(dir, "sweep", "--show", db, "--columns", "policy,stack,prompt",
                             "--format", "csv", NULL);
    g_assert_cmpint(s->status, ==, 0);
    g_assert_cmpstr(s->out, ==, "policy,stack,prompt\ngpu-only,,8\ngpu-only,,16\n"
                                "cpu-only,llama-cpp,8\ncpu-only,llama-cpp,16\n");
    static const char *const sidecars[] = { "v.db-wal", "v.db-shm" };
    for (size_t i = 0; i < G_N_ELEMENTS(sidecars); i++) {
        g_autofree char *f = g_build_filename(dir, sidecars[i], NULL);
        g_assert_false(g_file_test(f, G_FILE_TEST_EXISTS));
    }
    rm_rf(dir);
}

/* mpirun -n 2: rank 0 owns the database, rank 1 runs the points; the
 * rows equal the local run's. */
static void
test_sweep_mpi(void)
{
    g_autofree char *mpirun = g_find_program_in_path("mpirun");
    if (mpirun == NULL) {
        g_test_skip("mpirun not installed");
        return;
    }
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    /* Open MPI's own allocations outlive MPI_Finalize: not ours to report
     * when the suite runs under AddressSanitizer */
    const char *argv[] = { mpirun, "-n", "2", "--oversubscribe", "--allow-run-as-root",
                           "-x", "ASAN_OPTIONS=detect_leaks=0",
                           g_getenv("HS_BIN"), "sweep", spec, "--db", "mpi.db", NULL };
    g_autoptr(Run) m = cli_spawn(dir, (char *const *) argv, NULL);
    if (strstr(m->err, "built without MPI")) {
        g_test_skip("hetero-sim built without MPI");
        rm_rf(dir);
        return;
    }
    g_assert_cmpint(m->status, ==, 0);
    g_assert_cmpstr(m->out, ==, "mpi.db: 13 points, 13 run now on 1 MPI ranks, 0 already "
                                "there; 4 failed in all\n");
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_nonnull(a);             /* the local run the rows are compared with */
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *dm = g_build_filename(dir, "mpi.db", NULL);
    g_autofree char *ra = rows_of(da), *rm = rows_of(dm);
    g_assert_cmpstr(ra, ==, rm);
    rm_rf(dir);
}


/* @sql on the database @path (the test's own connection). */
static void
db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        g_test_message("%s: %s", sql, msg);
    }
    g_assert_cmpint(rc, ==, SQLITE_OK);
    sqlite3_close(db);
}

/* SELECT of one integer from @path. */
static long long
db_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &st, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static char *
file_sha(const char *path)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &text, &len, NULL));
    return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) text, len);
}

/* Every command that opens @db (show, plot, resume, list, merge) refuses
 * it in one line naming it, exit 1, and leaves the file as it was. */
static void
assert_refused(const char *dir, const char *spec, const char *db, const char *why)
{
    g_autofree char *path = g_build_filename(dir, db, NULL);
    g_autofree char *before = file_sha(path);
    g_autofree char *want = g_strdup_printf("hetero-sim: %s: %s", path, why);
    g_autofree char *recs = g_build_filename(dir, "empty.jsonl", NULL);
    g_assert_true(g_file_set_contents(recs, "", -1, NULL));
    g_autoptr(Run) a = hs_in(dir, "sweep", "--show", db, NULL);
    g_autoptr(Run) b = hs_in(dir, "sweep", spec, "--db", db, NULL);
    g_autoptr(Run) c = hs_in(dir, "plot", db, "--x", "prompt", NULL);
    g_autoptr(Run) d = hs_in(dir, "sweep", spec, "--db", db, "--list", NULL);
    g_autoptr(Run) e = hs_in(dir, "sweep", spec, "--db", db, "--merge", recs, NULL);
    const Run *runs[] = { a, b, c, d, e };
    for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) {
        g_test_message("%s: command %zu: %s", db, i, runs[i]->err);
        g_assert_cmpint(runs[i]->status, ==, 1);
        g_assert_cmpstr(runs[i]->out, ==, "");
        g_assert_true(g_str_has_prefix(runs[i]->err, want));
        g_assert_cmpint(count_lines(runs[i]->err), ==, 1);
    }
    g_autofree char *after = file_sha(path);
    g_assert_cmpstr(before, ==, after);
}

/* A damaged, foreign or newer database is refused, never shown as empty
 * settings nor resumed as "already there". */
static void
test_sweep_corrupt(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_assert_cmpint(db_int(da, "PRAGMA application_id"), ==, 0x48535357);
    g_assert_cmpint(db_int(da, "PRAGMA user_version"), ==, 2);
    g_assert_cmpint(db_int(da, "PRAGMA page_count"), >, 4);

    /* pages 3 to 5 zeroed, as a disk or a copy may do */
    g_autofree char *cmd = g_strdup_printf("cd '%s' && cp a.db zero.db && dd if=/dev/zero "
                                           "of=zero.db bs=4096 seek=2 count=3 conv=notrunc "
                                           "2>/dev/null", dir);
    g_assert_cmpint(system(cmd), ==, 0);
    assert_refused(dir, spec, "zero.db", "corrupt database, refused (quick_check: ");
    /* the whole file zeroed past its header page */
    g_free(cmd);
    cmd = g_strdup_printf("cd '%s' && cp a.db zero2.db && dd if=/dev/zero of=zero2.db bs=4096 "
                          "seek=1 count=100 conv=notrunc 2>/dev/null", dir);
    g_assert_cmpint(system(cmd), ==, 0);
    assert_refused(dir, spec, "zero2.db", "corrupt database, refused");

    /* not SQLite at all: a JSON file, random bytes */
    g_autofree char *txt = g_build_filename(dir, "text.db", NULL);
    g_assert_true(g_file_set_contents(txt, "{\"not\": \"a database\"}\n", -1, NULL));
    assert_refused(dir, spec, "text.db", "not an SQLite database (file is not a database)");
    g_autofree char *rnd = g_build_filename(dir, "random.db", NULL);
    g_autofree char *bytes = g_malloc(8192);
    for (int i = 0; i < 8192; i++) {
        bytes[i] = (char) (g_test_rand_int() & 0xff);
    }
    g_assert_true(g_file_set_contents(rnd, bytes, 8192, NULL));
    assert_refused(dir, spec, "random.db", "not an SQLite database");

    /* another program's database: not written into */
    g_autofree char *other = g_build_filename(dir, "other.db", NULL);
    db_exec(other, "CREATE TABLE notes (x)");
    assert_refused(dir, spec, "other.db", "not a sweep database (no points table)");
    g_autofree char *app = g_build_filename(dir, "app.db", NULL);
    db_exec(app, "PRAGMA application_id = 1234; CREATE TABLE points (key, status)");
    assert_refused(dir, spec, "app.db", "not a sweep database (application_id 0x000004d2, a "
                                        "sweep's is 0x48535357)");
    /* a newer schema, a row this build cannot read */
    g_autofree char *cmd2 = g_strdup_printf("cd '%s' && cp a.db newer.db && cp a.db row.db",
                                            dir);
    g_assert_cmpint(system(cmd2), ==, 0);
    g_autofree char *newer = g_build_filename(dir, "newer.db", NULL);
    db_exec(newer, "PRAGMA user_version = 3");
    assert_refused(dir, spec, "newer.db", "made by a newer hetero-sim (schema version 3; this "
                                          "one knows up to 2)");
    g_autofree char *row = g_build_filename(dir, "row.db", NULL);
    db_exec(row, "UPDATE points SET status = 'done' WHERE point = 3");
    assert_refused(dir, spec, "row.db", "row with key {\"decode\":2,");
    /* a settings row with no column (found by fuzz-sweep-db: --show hashed NULL) */
    g_autofree char *cmd4 = g_strdup_printf("cd '%s' && cp a.db nullset.db", dir);
    g_assert_cmpint(system(cmd4), ==, 0);
    g_autofree char *nullset = g_build_filename(dir, "nullset.db", NULL);
    db_exec(nullset, "UPDATE settings SET column = NULL WHERE rowid = 1");
    assert_refused(dir, spec, "nullset.db", "corrupt database, refused (a settings row "
                                            "without a text column and name)");

    /* a database made before the checks (no application_id, schema 0,
     * no claim columns) is still read, and upgraded when resumed */
    g_autofree char *cmd3 = g_strdup_printf("cd '%s' && cp a.db old.db", dir);
    g_assert_cmpint(system(cmd3), ==, 0);
    g_autofree char *old = g_build_filename(dir, "old.db", NULL);
    db_exec(old, "PRAGMA application_id = 0; PRAGMA user_version = 0; "
                 "ALTER TABLE points DROP COLUMN claimed_by; "
                 "ALTER TABLE points DROP COLUMN runs");
    g_autoptr(Run) os = hs_in(dir, "sweep", "--show", "old.db", NULL);
    g_assert_cmpint(os->status, ==, 0);
    g_autoptr(Run) orun = hs_in(dir, "sweep", spec, "--db", "old.db", NULL);
    g_assert_cmpstr(orun->out, ==, "old.db: 13 points, 0 run now, 13 already there; 4 failed "
                                   "in all\n");
    g_assert_cmpint(db_int(old, "PRAGMA application_id"), ==, 0x48535357);
    g_assert_cmpint(db_int(old, "SELECT count(*) FROM pragma_table_info('points') "
                                "WHERE name IN ('runs', 'claimed_by')"), ==, 2);
    rm_rf(dir);
}

/* Two sweeps started at once on spec @spec and a new database @db (in
 * @dir): both succeed; the points they ran now, in all. */
static int
concurrent_pair(const char *dir, const char *spec, const char *db)
{
    GPid pid[2];
    int out[2];
    for (int k = 0; k < 2; k++) {
        const char *argv[] = { g_getenv("HS_BIN"), "sweep", spec, "--db", db, "--jobs", "1",
                               NULL };
        g_autoptr(GError) error = NULL;
        g_assert_true(g_spawn_async_with_pipes(dir, (char **) argv, NULL,
                                               G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid[k],
                                               NULL, &out[k], NULL, &error));
    }
    int run_now = 0;
    for (int k = 0; k < 2; k++) {
        g_autoptr(GIOChannel) ch = g_io_channel_unix_new(out[k]);
        g_io_channel_set_close_on_unref(ch, TRUE);
        g_autofree char *text = NULL;
        g_assert_cmpint(g_io_channel_read_to_end(ch, &text, NULL, NULL), ==, G_IO_STATUS_NORMAL);
        int status = 0;
        waitpid(pid[k], &status, 0);
        g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        g_test_message("sweep %d: %s", k, text);
        g_autofree char *want = g_strdup_printf("%s: 13 points, %%d run now", db);
        int n = -1;
        g_assert_cmpint(sscanf(text, want, &n), ==, 1);
        run_now += n;
    }
    return run_now;
}

/* Two sweeps started at once on one spec and database compute each point
 * once in all; a dead sweep's claim is taken over, another host's only
 * with --reclaim. */
static void
test_sweep_concurrent(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    /* both open a new database at once: the one that makes it WAL must not
     * fail while the other reads it ("database is locked" in 29 of 40
     * such starts before the change was retried) */
    for (int round = 0; round < 6; round++) {
        g_autofree char *db = g_strdup_printf("r%d.db", round);
        g_assert_cmpint(concurrent_pair(dir, spec, db), ==, 13);
    }
    g_assert_cmpint(concurrent_pair(dir, spec, "c.db"), ==, 13);
    g_autofree char *dc = g_build_filename(dir, "c.db", NULL);
    g_assert_cmpint(db_int(dc, "SELECT count(*) FROM points"), ==, 13);
    g_assert_cmpint(db_int(dc, "SELECT count(*) FROM points WHERE runs = 1 AND "
                               "status IN ('ok', 'error')"), ==, 13);
    /* the rows are a lone sweep's */
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "a.db", NULL);
    g_assert_nonnull(a);
    g_autofree char *da = g_build_filename(dir, "a.db", NULL);
    g_autofree char *ra = rows_of(da), *rc = rows_of(dc);
    g_assert_cmpstr(ra, ==, rc);

    /* a claim of a process of this host that is gone: run again */
    g_autofree char *dead = g_strdup_printf("UPDATE points SET status = 'claimed', claimed_by = "
                                            "'%s:999999999:1', result = NULL WHERE point = 0",
                                            g_get_host_name());
    db_exec(dc, dead);
    g_autoptr(Run) r1 = hs_in(dir, "sweep", spec, "--db", "c.db", NULL);
    g_assert_cmpstr(r1->out, ==, "c.db: 13 points, 1 run now, 12 already there; 1 claimed by "
                                 "a sweep that died: re-run; 4 failed in all\n");
    /* a live claim (this test's own process) is left to it */
    g_autofree char *me = g_strdup_printf("UPDATE points SET status = 'claimed', claimed_by = "
                                          "'%s:%d:0' WHERE point = 1", g_get_host_name(),
                                          (int) getpid());
    db_exec(dc, me);
    g_autoptr(Run) r2 = hs_in(dir, "sweep", spec, "--db", "c.db", NULL);
    g_assert_cmpstr(r2->out, ==, "c.db: 13 points, 0 run now, 12 already there, 1 left to "
                                 "another sweep running them; 4 failed in all\n");
    /* another host's: cannot tell, left unless --reclaim */
    db_exec(dc, "UPDATE points SET claimed_by = 'elsewhere.example:42:7' WHERE point = 1");
    g_autoptr(Run) r3 = hs_in(dir, "sweep", spec, "--db", "c.db", NULL);
    g_assert_cmpstr(r3->out, ==, "c.db: 13 points, 0 run now, 12 already there, 1 claimed by a "
                                 "sweep on another host (--reclaim runs them); 4 failed in all\n");
    g_autoptr(Run) r4 = hs_in(dir, "sweep", spec, "--db", "c.db", "--reclaim", NULL);
    g_assert_cmpstr(r4->out, ==, "c.db: 13 points, 1 run now, 12 already there; 1 claimed by "
                                 "a sweep that died: re-run; 4 failed in all\n");
    g_assert_cmpint(db_int(dc, "SELECT sum(runs) FROM points"), ==, 15);
    rm_rf(dir);
}

/* A result is kept only while its configuration is the point's: a SoC
 * file edited between two sweeps re-runs exactly its rows. */
static void
test_sweep_stale(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    g_autofree char *tiny = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "configs", "tiny.json",
                                             NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(tiny, &text, NULL, NULL));
    g_autofree char *soc = g_build_filename(dir, "npu2x.json", NULL);
    g_assert_true(g_file_set_contents(soc, text, -1, NULL));
    g_autofree char *spec = g_build_filename(dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(spec,
        "{\"base\": {\"model\": \"tiny\", \"functional\": \"off\", \"decode\": 2},\n"
        " \"axes\": {\"soc\": [\"tiny\", \"npu2x.json\"], \"prompt\": [16, 32]}}\n", -1, NULL));
    g_autoptr(Run) a = hs_in(dir, "sweep", spec, "--db", "s.db", NULL);
    g_assert_cmpstr(a->out, ==, "s.db: 4 points, 4 run now, 0 already there; 0 failed in all\n");
    g_autofree char *ds = g_build_filename(dir, "s.db", NULL);
    g_autofree char *hash_before = NULL;
    {
        g_autoptr(Run) h = hs("sweep", "--show", ds, "--where", "soc = 'npu2x.json' AND "
                              "prompt = 16", "--columns", "config_hash", "--format", "csv", NULL);
        hash_before = g_strdup(strchr(h->out, '\n') + 1);
    }

    /* the NPU's stationary TCM 64 -> 128 KiB in the file the spec names */
    const char *from = "\"stationary_kib\": {\"value\": 64,";
    g_assert_nonnull(strstr(text, from));
    g_auto(GStrv) parts = g_strsplit(text, from, 2);
    g_autofree char *edited = g_strjoin("\"stationary_kib\": {\"value\": 128,", parts[0],
                                        parts[1], NULL);
    g_assert_true(g_file_set_contents(soc, edited, -1, NULL));
    g_autoptr(Run) b = hs_in(dir, "sweep", spec, "--db", "s.db", NULL);
    g_assert_cmpint(b->status, ==, 0);
    g_assert_cmpstr(b->out, ==, "s.db: 4 points, 2 run now, 2 already there; 2 stale (config "
                                "changed): re-run; 0 failed in all\n");
    /* exactly the edited SoC's rows ran again, with the new configuration */
    g_assert_cmpint(db_int(ds, "SELECT count(*) FROM points WHERE runs = 2 AND "
                               "soc = 'npu2x.json'"), ==, 2);
    g_assert_cmpint(db_int(ds, "SELECT count(*) FROM points WHERE runs = 1 AND soc = 'tiny'"),
                    ==, 2);
    g_autoptr(Run) h = hs("sweep", "--show", ds, "--where", "soc = 'npu2x.json' AND "
                          "prompt = 16", "--columns", "config_hash", "--format", "csv", NULL);
    g_assert_cmpstr(strchr(h->out, '\n') + 1, !=, hash_before);
    g_autoptr(Run) c = hs_in(dir, "sweep", spec, "--db", "s.db", NULL);
    g_assert_cmpstr(c->out, ==, "s.db: 4 points, 0 run now, 4 already there; 0 failed in all\n");
    /* the file back as it was: those rows are stale again, and listed */
    g_assert_true(g_file_set_contents(soc, text, -1, NULL));
    g_autoptr(Run) l = hs_in(dir, "sweep", spec, "--db", "s.db", "--list", NULL);
    g_assert_cmpint(count_lines(l->out), ==, 2);
    /* rows made by another build of hetero-sim are stale too */
    db_exec(ds, "UPDATE points SET version = '0.0.1+gdeadbeef' WHERE soc = 'tiny'");
    g_autoptr(Run) v = hs_in(dir, "sweep", spec, "--db", "s.db", NULL);
    g_assert_cmpstr(v->out, ==, "s.db: 4 points, 4 run now, 0 already there; 2 stale (config "
                                "changed), 2 stale (made by another version): re-run; 0 failed "
                                "in all\n");
    rm_rf(dir);
}

/* --merge checks each record against its point and the report's schema:
 * a bad one is refused with file, line, point and what is wrong, and
 * nothing of the file is stored. */
static void
test_sweep_merge_checked(void)
{
    g_autofree char *dir = NULL;
    g_autofree char *spec = tiny_spec(&dir);
    /* points 0 and 1: gpu-only, SRAM 64, prompts 16 and 32 */
    g_autoptr(Run) p0 = hs_in(dir, "sweep", spec, "--point", "0", NULL);
    g_autoptr(Run) p1 = hs_in(dir, "sweep", spec, "--point", "1", NULL);
    g_autoptr(Run) p4 = hs_in(dir, "sweep", spec, "--point", "4", NULL);   /* SRAM 0: error */
    g_autoptr(cJSON) r0 = parse(p0->out), r1 = parse(p1->out), r4 = parse(p4->out);
    g_assert_cmpstr(at(r4, "status")->valuestring, ==, "error");
    static const struct {
        const char *what, *msg;
    } cases[] = {
        { "no-result", "$.result: expected the run's result object with status ok (got none)" },
        { "other-result", "$.result.config.hash: expected the point's, " },
        { "other-policy",
          "$.result.policy: expected the point's, \"gpu-only\" (got \"npu-only\")" },
        { "bad-metric", "$.result.prefill.time_ms: expected a number (got \"fast\")" },
        { "no-metric", "$.result.prefill.time_ms: expected a number (got none)" },
        { "status", "$.status: expected \"ok\" or \"error\" (got \"done\")" },
        { "version", "$.version: expected this hetero-sim's, " },
        { "hash", "$.point_hash: expected the hash of the point's configuration now, " },
        { "error-with-result", "$.result: expected none with status error (the record says both)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(cJSON) rec = cJSON_Duplicate(r0, TRUE);
        const char *w = cases[i].what;
        cJSON *result = cJSON_GetObjectItemCaseSensitive(rec, "result");
        if (strcmp(w, "no-result") == 0) {
            cJSON_DeleteItemFromObject(rec, "result");
        } else if (strcmp(w, "other-result") == 0) {
            cJSON_ReplaceItemInObject(rec, "result",
                                      cJSON_Duplicate(at(r1, "result"), TRUE));
        } else if (strcmp(w, "other-policy") == 0) {
            cJSON_ReplaceItemInObject(result, "policy", cJSON_CreateString("npu-only"));
        } else if (strcmp(w, "bad-metric") == 0) {
            cJSON_ReplaceItemInObject(cJSON_GetObjectItem(result, "prefill"), "time_ms",
                                      cJSON_CreateString("fast"));
        } else if (strcmp(w, "no-metric") == 0) {
            cJSON_DeleteItemFromObject(cJSON_GetObjectItem(result, "prefill"), "time_ms");
        } else if (strcmp(w, "status") == 0) {
            cJSON_ReplaceItemInObject(rec, "status", cJSON_CreateString("done"));
        } else if (strcmp(w, "version") == 0) {
            cJSON_ReplaceItemInObject(rec, "version", cJSON_CreateString("0.0.1+gdeadbeef"));
        } else if (strcmp(w, "hash") == 0) {
            cJSON_ReplaceItemInObject(rec, "point_hash",
                                      cJSON_Duplicate(at(r1, "point_hash"), TRUE));
        } else {
            cJSON_Delete(rec);
            rec = cJSON_Duplicate(r4, TRUE);
            cJSON_AddItemToObject(rec, "result", cJSON_Duplicate(at(r0, "result"), TRUE));
        }
        g_autofree char *line = cJSON_PrintUnformatted(rec);
        g_autofree char *good = cJSON_PrintUnformatted(r1);
        /* a good record first: not stored either */
        g_autofree char *text = g_strdup_printf("%s\n%s\n", good, line);
        g_autofree char *recs = g_build_filename(dir, "records.jsonl", NULL);
        g_assert_true(g_file_set_contents(recs, text, -1, NULL));
        g_autoptr(Run) m = hs_in(dir, "sweep", spec, "--db", "m.db", "--merge", recs, NULL);
        g_test_message("%s: %s", w, m->err);
        g_assert_cmpint(m->status, ==, 1);
        int point = strcmp(w, "error-with-result") == 0 ? 4 : 0;
        const cJSON *key = at(rec, "key");
        g_autofree char *want = g_strdup_printf("hetero-sim: %s:2: record of point %d %s: %s",
                                                recs, point, key->valuestring, cases[i].msg);
        g_assert_true(g_str_has_prefix(m->err, want));
        g_assert_cmpint(count_lines(m->err), ==, 1);
        g_autofree char *dm = g_build_filename(dir, "m.db", NULL);
        g_assert_false(g_file_test(dm, G_FILE_TEST_EXISTS));
    }
    rm_rf(dir);
}

/* Provenance in a sweep's outputs: each row keeps the version that made
 * it, its point's `run` command line and its config hash (a SoC file said
 * as "x.json (from tiny)" in its result); --show's CSV and JSON end in
 * them, its text says the versions under the table and what printed it. */
static void
test_sweep_provenance(void)
{
    g_autofree char *dir = g_dir_make_tmp("hs-sweep-XXXXXX", NULL);
    g_autoptr(Run) shown = hs("soc", "show", "tiny", "--format", "json", NULL);
    g_assert_cmpint(shown->status, ==, 0);
    g_autofree char *soc = g_build_filename(dir, "t2.json", NULL);
    g_assert_true(g_file_set_contents(soc, shown->out, -1, NULL));
    g_autofree char *spec = g_build_filename(dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(spec, "{\"base\": {\"model\": \"tiny\", \"functional\": "
                                      "\"off\", \"decode\": 2, \"prompt\": 16, \"policy\": "
                                      "\"gpu-only\"}, \"axes\": {\"soc\": [\"tiny\", "
                                      "\"t2.json\"]}}\n", -1, NULL));
    g_autoptr(Run) a = hs_in(dir, "sweep", "spec.json", "--db", "p.db", NULL);
    g_assert_cmpint(a->status, ==, 0);

    g_autoptr(Run) c = hs_in(dir, "sweep", "--show", "p.db", "--format", "csv", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(c->out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 4);
    g_assert_true(g_str_has_suffix(lines[0], ",error,version,command,config_hash"));
    g_assert_nonnull(strstr(lines[2], ",hetero-sim run --format json "));
    g_assert_nonnull(strstr(lines[2], " --soc t2.json,"));

    g_autoptr(Run) j = hs_in(dir, "sweep", "--show", "p.db", "--format", "json", NULL);
    g_autoptr(cJSON) rows = parse(j->out);
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 2);
    const cJSON *r1 = cJSON_GetArrayItem(rows, 1);
    g_assert_cmpstr(at(r1, "soc")->valuestring, ==, "t2.json");     /* as written */
    g_assert_cmpuint(strlen(at(r1, "config_hash")->valuestring), ==, 64);
    g_assert_true(g_str_has_prefix(at(r1, "version")->valuestring, "0."));

    /* the row's result says the SoC file as one, with its provenance */
    g_autoptr(Run) all = hs_in(dir, "sweep", "--show", "p.db", "--all", "--format", "json",
                               "--where", "soc = 't2.json'", NULL);
    g_autoptr(cJSON) arows = parse(all->out);
    const cJSON *ar = cJSON_GetArrayItem(arows, 0);
    g_assert_cmpstr(at(ar, "result.soc")->valuestring, ==, "t2.json (from tiny)");
    g_assert_cmpstr(at(ar, "result.provenance.soc_file")->valuestring, ==, "t2.json");
    g_assert_cmpstr(at(ar, "result.provenance.command")->valuestring, ==,
                    at(ar, "command")->valuestring);

    /* text: the versions of the rows shown, then what printed them */
    g_autoptr(Run) t = hs_in(dir, "sweep", "--show", "p.db", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_autofree char *want = g_strdup_printf("\n2 rows by hetero-sim %s (each row's command "
                                            "and config hash: --columns command,config_hash "
                                            "or --all)\nhetero-sim %s: hetero-sim sweep "
                                            "--show p.db\n",
                                            at(r1, "version")->valuestring,
                                            at(r1, "version")->valuestring);
    g_assert_true(g_str_has_suffix(t->out, want));
    g_autoptr(Run) tw = hs_in(dir, "sweep", "--show", "p.db", "--where", "soc = 'tiny'", NULL);
    g_assert_nonnull(strstr(tw->out, "\n1 row by hetero-sim "));
    rm_rf(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sweep/set-soc-show", test_set_soc_show);
    g_test_add_func("/sweep/set-errors", test_set_errors);
    g_test_add_func("/sweep/set-run", test_set_run);
    g_test_add_func("/sweep/set-replay", test_set_replay);
    g_test_add_func("/sweep/spec-errors", test_sweep_spec_errors);
    g_test_add_func("/sweep/jobs-same-rows", test_sweep_jobs);
    g_test_add_func("/sweep/worker-dies", test_sweep_worker_dies);
    g_test_add_func("/sweep/checked-workers", test_sweep_checked_workers);
    g_test_add_func("/sweep/list-merge", test_sweep_list_merge);
    g_test_add_func("/sweep/variants", test_sweep_variants);
    g_test_add_func("/sweep/mpi", test_sweep_mpi);
    g_test_add_func("/sweep/plot", test_plot);
    g_test_add_func("/sweep/report-fields", test_report_fields);
    g_test_add_func("/sweep/kill-resume", test_sweep_resume);
    g_test_add_func("/sweep/corrupt", test_sweep_corrupt);
    g_test_add_func("/sweep/concurrent", test_sweep_concurrent);
    g_test_add_func("/sweep/stale", test_sweep_stale);
    g_test_add_func("/sweep/merge-checked", test_sweep_merge_checked);
    g_test_add_func("/sweep/provenance", test_sweep_provenance);
    return g_test_run();
}
