/*
 * test-sim-points.c - the points-file reader (sim/cli/points.c) from
 * memory, as a fuzzer drives it: good files parse into what they say;
 * broken ones fail with one line naming the JSON path, never a crash.
 */
#include "sim/cli/points.h"
#include "sim/util/error.h"

#include <math.h>
#include <string.h>

static HsPoints *
parse(const char *text, GError **error)
{
    return hs_points_parse(text, strlen(text), "p.json", error);
}

static void
test_good(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(HsPoints) p = parse(
        "{\"paper\":\"x\",\"notes\":[\"n\"],\"points\":["
        "{\"id\":\"a\",\"paper\":\"X §1\",\"soc\":\"sd8gen3\",\"model\":\"tiny\","
        "\"metric\":\"decode_speedup\",\"policy\":\"npu-tts\",\"sync\":\"driver\","
        "\"baseline\":{\"policy\":\"gpu-only\",\"sync\":\"fast\",\"batch\":1},"
        "\"workload\":{\"prompts\":[32,64],\"decode\":4,\"batch\":32},"
        "\"published_range\":[1.5,null],\"tolerance_pct\":20}]}", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(p->name, ==, "x");
    g_assert_cmpuint(p->n, ==, 1);
    const HsPoint *a = &p->points[0];
    g_assert_cmpint(a->metric, ==, HS_METRIC_DECODE_SPEEDUP);
    g_assert_true(a->sync_driver && !a->base.sync_driver);
    g_assert_cmpuint(a->wl.n_prompts, ==, 2);
    g_assert_cmpuint(a->wl.prompts[1], ==, 64);
    g_assert_cmpuint(a->wl.batch, ==, 32);
    g_assert_cmpuint(a->base.batch, ==, 1);
    g_assert_cmpstr(a->base.model, ==, "tiny");            /* the point's by default */
    g_assert_true(a->range && a->lo == 1.5 && isinf(a->hi));
    g_assert_cmpfloat(a->published, ==, 1.5);

    /* without $.paper, the file's stem names it */
    const char *one = "{\"points\":[{\"id\":\"a\",\"paper\":\"P\",\"soc\":\"s\","
                      "\"model\":\"m\",\"metric\":\"prefill_tokens_per_s\",\"policy\":\"p\","
                      "\"sync\":\"fast\",\"workload\":{\"prompt\":1,\"decode\":0,\"batch\":1},"
                      "\"published\":1,\"tolerance_pct\":0}]}";
    g_autoptr(HsPoints) q = hs_points_parse(one, strlen(one), "dir/npu-tts.json", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(q->name, ==, "npu-tts");
}

static void
test_bad(void)
{
    static const char *const cases[][2] = {
        { "", "p.json: empty file" },
        { "[]", "p.json: $: expected an object (got an array)" },
        { "{\"points\":[]}", "p.json: $.points: expected an array of 1 to 10000 objects (got an array)" },
        { "{\"points\":[1]}", "p.json: $.points[0]: expected an object (got 1)" },
        { "{\"points\":{},\"x\":1}", "p.json: $: unknown key \"x\" (known keys: description, paper, notes, points, stacks)" },
        { "{\"notes\":[1],\"points\":[{}]}", "p.json: $.notes[0]: expected a string (got 1)" },
        { "{\"points\":[{\"id\":\"\"}]}", "p.json: $.points[0].id: expected a non-empty string (got \"\")" },
        { "{\"points\":[{\"id\":\"a\",\"id\":\"b\"}]}", "p.json: $.points[0]: duplicate key \"id\"" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(HsPoints) p = parse(cases[i][0], &error);
        g_assert_null(p);
        g_assert_nonnull(error);
        g_assert_cmpstr(error->message, ==, cases[i][1]);
        g_assert_null(strchr(error->message, '\n'));
    }
    /* a duplicate id */
    const char *pt = "{\"id\":\"a\",\"paper\":\"P\",\"soc\":\"s\",\"model\":\"m\","
                     "\"metric\":\"prefill_tokens_per_s\",\"policy\":\"p\",\"sync\":\"fast\","
                     "\"workload\":{\"prompt\":1,\"decode\":0,\"batch\":1},\"published\":1,"
                     "\"tolerance_pct\":0}";
    g_autofree char *two = g_strdup_printf("{\"points\":[%s,%s]}", pt, pt);
    g_autoptr(GError) error = NULL;
    g_autoptr(HsPoints) p = parse(two, &error);
    g_assert_null(p);
    g_assert_cmpstr(error->message, ==, "p.json: $.points[1].id: duplicate id \"a\"");
    /* every prefix of a good file fails cleanly (or parses) */
    for (size_t n = 0; n < strlen(two); n++) {
        g_autoptr(GError) e = NULL;
        g_autoptr(HsPoints) q = hs_points_parse(two, n, "p.json", &e);
        g_assert_true((q == NULL) == (e != NULL));
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/points/good", test_good);
    g_test_add_func("/sim/points/bad", test_bad);
    return g_test_run();
}
