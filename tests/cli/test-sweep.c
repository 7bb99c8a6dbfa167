/*
 * test-sweep.c - design-space exploration from the command line: --set
 * on every command that loads a config, and `sweep` into SQLite
 * (resume after kill -9, the same rows whatever the worker count or
 * under mpirun, --show, plot).
 */
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Run {
    int status;
    char *out;
    char *err;
} Run;

static void
run_free(Run *r)
{
    g_free(r->out);
    g_free(r->err);
    g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Run, run_free)

/* Run @argv (NULL-terminated; argv[0] is the program) in @cwd. */
static Run *
spawn(const char *cwd, char **argv)
{
    Run *r = g_new0(Run, 1);
    int wait = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(cwd, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &r->out, &r->err, &wait, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait));        /* never a crash */
    r->status = WEXITSTATUS(wait);
    return r;
}

/* hetero-sim with NULL-terminated arguments, in @cwd (may be NULL). */
static Run *
hs_in(const char *cwd, const char *first, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *) g_getenv("HS_BIN"));
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        g_ptr_array_add(argv, (char *) a);
    }
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    return spawn(cwd, (char **) argv->pdata);
}

#define hs(...) hs_in(NULL, __VA_ARGS__)

static void
assert_one_error_line(const Run *r, const char *want)
{
    g_autofree char *line = g_strdup_printf("hetero-sim: %s\n", want);
    g_assert_cmpstr(r->err, ==, line);
}

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
            g_autoptr(Run) r = spawn(NULL, (char **) argv->pdata);
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
    g_autoptr(Run) c = hs("replay", rec, "--set", "model.num_hidden_layers=1", NULL);
    assert_one_error_line(c, "--set model.*: the recorded plan is for the recorded model; "
                             "add --policy P to re-plan the changed model");
    g_autoptr(Run) d = hs("replay", rec, "--set", "npu.nope=1", NULL);
    g_assert_cmpint(d->status, ==, 2);
    g_assert_true(g_str_has_prefix(d->err, "hetero-sim: --set npu.nope=1: unknown key \"nope\""));
    g_autoptr(Run) e = hs("replay", rec, "--policy", "gpu-only", "--format", "json",
                          "--set", "model.num_hidden_layers=1", NULL);
    g_assert_cmpint(e->status, ==, 0);
    g_unlink(rec);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sweep/set-soc-show", test_set_soc_show);
    g_test_add_func("/sweep/set-errors", test_set_errors);
    g_test_add_func("/sweep/set-run", test_set_run);
    g_test_add_func("/sweep/set-replay", test_set_replay);
    return g_test_run();
}
