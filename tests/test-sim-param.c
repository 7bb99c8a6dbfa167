/*
 * test-sim-param.c - the table-driven JSON -> struct loader on its own.
 */
#include "sim/util/param.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <string.h>

typedef struct Thing {
    uint32_t rows;
    uint64_t bytes;
    double freq_mhz;
    gboolean fast;
    char *mode;
} Thing;

static const char *const modes[] = { "driver", "fast", NULL };

static const HsParam thing_params[] = {
    HS_PARAM_U32("rows", Thing, rows, 1, 64, HS_REQUIRED, "rows"),
    HS_PARAM_U64("bytes", Thing, bytes, 0, 1e12, 4096, "bytes"),
    HS_PARAM_F64("freq_mhz", Thing, freq_mhz, 1, 5000, 1000, "clock"),
    HS_PARAM_BOOL("fast", Thing, fast, 1, "fast path"),
    HS_PARAM_STR("mode", Thing, mode, "driver", modes, "sync mode"),
    HS_PARAM_END
};

static gboolean
apply(const char *json, Thing *t, GHashTable *sources, GError **error)
{
    g_autoptr(cJSON) obj = cJSON_Parse(json);
    g_assert_nonnull(obj);
    hs_param_set_defaults(thing_params, t);
    return hs_param_apply(obj, "$.thing", thing_params, t, NULL, sources, error);
}

static void
test_defaults_and_values(void)
{
    Thing t = { 0 };
    g_autoptr(GError) error = NULL;
    g_autoptr(GHashTable) src = g_hash_table_new_full(g_str_hash, g_str_equal,
                                                      g_free, g_free);
    g_assert_true(apply("{\"rows\": {\"value\": 32, \"source\": \"paper §1\"},"
                        " \"mode\": \"fast\"}", &t, src, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(t.rows, ==, 32);
    g_assert_cmpuint(t.bytes, ==, 4096);
    g_assert_cmpfloat(t.freq_mhz, ==, 1000);
    g_assert_true(t.fast);
    g_assert_cmpstr(t.mode, ==, "fast");
    g_assert_cmpstr(g_hash_table_lookup(src, "$.thing.rows"), ==, "paper §1");
    g_assert_null(g_hash_table_lookup(src, "$.thing.mode"));
    g_assert_null(g_hash_table_lookup(src, "$.thing.freq_mhz"));    /* the default */
    hs_param_clear(thing_params, &t);
    g_assert_null(t.mode);
    /* a plain number is the file's: shown as such, not as a default */
    g_assert_true(apply("{\"rows\": 8}", &t, src, &error));
    g_assert_cmpstr(g_hash_table_lookup(src, "$.thing.rows"), ==, "given without a source");
    hs_param_clear(thing_params, &t);
}

static void
test_errors(void)
{
    static const struct {
        const char *json;
        const char *message;
    } cases[] = {
        { "{}", "$.thing: missing required key \"rows\" (an integer in [1, 64], rows)" },
        { "{\"rows\": 65}", "$.thing.rows: expected an integer in [1, 64] (got 65)" },
        { "{\"rows\": 2, \"mode\": \"slow\"}",
          "$.thing.mode: expected one of driver, fast (got \"slow\")" },
        { "{\"rows\": 2, \"fast\": \"yes\"}",
          "$.thing.fast: expected true or false (got \"yes\")" },
        { "{\"rows\": 2, \"freq_mhz\": null}",
          "$.thing.freq_mhz: expected a number in [1, 5000] (got null)" },
        { "{\"rows\": 2, \"rows\": 3}", "$.thing: duplicate key \"rows\"" },
        { "{\"rows\": 2, \"row\": 3}",
          "$.thing: unknown key \"row\" (known keys: rows, bytes, freq_mhz, fast, mode)" },
        { "[]", "$.thing: expected an object (got an array)" },
        { "{\"rows\": [1]}", "$.thing.rows: expected an integer in [1, 64] (got an array)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Thing t = { 0 };
        g_autoptr(GError) error = NULL;
        g_assert_false(apply(cases[i].json, &t, NULL, &error));
        g_assert_error(error, HS_CONFIG_ERROR, error->code);
        g_assert_cmpstr(error->message, ==, cases[i].message);
        hs_param_clear(thing_params, &t);
    }
}

static void
test_units(void)
{
    g_assert_cmpstr(hs_param_unit("peak_gbps"), ==, "GB/s");
    g_assert_cmpstr(hs_param_unit("sram_kib"), ==, "KiB");
    g_assert_cmpstr(hs_param_unit("launch_busy_us"), ==, "us");
    g_assert_cmpstr(hs_param_unit("energy_pj_per_byte"), ==, "pJ/B");
    g_assert_cmpstr(hs_param_unit("tile_rows"), ==, "");
}

static void
test_json_parse_errors(void)
{
    const char *bad1 = "{\n \"a\": 1,\n \"b\" 2}";
    g_autoptr(GError) error = NULL;
    g_assert_null(hs_json_parse(bad1, strlen(bad1), "x.json", 0, &error));
    g_assert_cmpstr(error->message, ==, "x.json: invalid JSON at line 3, column 6");
    g_clear_error(&error);
    g_assert_null(hs_json_parse("{\"a\": ", 6, "x.json", 0, &error));
    g_assert_cmpstr(error->message, ==,
                    "x.json: invalid JSON: unexpected end of file at line 1, column 7");
    g_clear_error(&error);
    g_assert_null(hs_json_parse("{\"a\": 1} x", 10, "x.json", 0, &error));
    g_assert_cmpstr(error->message, ==, "x.json: invalid JSON at line 1, column 10");
}

/* Nested objects and integer arrays: defaults, values, errors with paths,
 * the JSON dump; and a key with a newline escaped in the message. */
typedef struct Inner {
    uint32_t k;
    char *tag;
} Inner;

typedef struct Outer {
    Inner inner;
    uint32_t shapes[4];
    uint32_t n_shapes;
} Outer;

static const HsParam inner_params[] = {
    HS_PARAM_U32("k", Inner, k, 1, 8, 2, "k"),
    HS_PARAM_STR("tag", Inner, tag, "x", NULL, "tag"),
    HS_PARAM_END
};

static const HsParam outer_params[] = {
    HS_PARAM_OBJ("inner", Outer, inner, Inner, inner_params, FALSE, "nested"),
    HS_PARAM_U32_ARRAY("shapes", Outer, shapes, n_shapes, 4, 1, 1024, FALSE, "shapes"),
    HS_PARAM_END
};

static gboolean
apply_outer(const char *json, Outer *o, GError **error)
{
    g_autoptr(cJSON) obj = cJSON_Parse(json);
    g_assert_nonnull(obj);
    hs_param_clear(outer_params, o);
    hs_param_set_defaults(outer_params, o);
    return hs_param_apply(obj, "$", outer_params, o, NULL, NULL, error);
}

static void
test_nested_and_arrays(void)
{
    Outer o = { 0 };
    g_autoptr(GError) error = NULL;
    g_assert_true(apply_outer("{}", &o, &error));
    g_assert_cmpuint(o.inner.k, ==, 2);
    g_assert_cmpstr(o.inner.tag, ==, "x");
    g_assert_cmpuint(o.n_shapes, ==, 0);
    g_assert_true(apply_outer("{\"inner\":{\"k\":5,\"tag\":\"y\"},\"shapes\":[32,64,1024]}",
                              &o, &error));
    g_assert_cmpuint(o.inner.k, ==, 5);
    g_assert_cmpstr(o.inner.tag, ==, "y");
    g_assert_cmpuint(o.n_shapes, ==, 3);
    g_assert_cmpuint(o.shapes[2], ==, 1024);
    g_autoptr(cJSON) dump = cJSON_CreateObject();
    hs_param_dump_json(outer_params, &o, dump);
    g_autofree char *text = hs_json_print(dump, FALSE);
    g_assert_cmpstr(text, ==, "{\"inner\":{\"k\":5,\"tag\":\"y\"},\"shapes\":[32,64,1024]}");

    static const struct {
        const char *json, *message;
    } bad[] = {
        { "{\"inner\":{\"k\":9}}", "$.inner.k: expected an integer in [1, 8] (got 9)" },
        { "{\"inner\":[]}", "$.inner: expected an object (got an array)" },
        { "{\"shapes\":[1,2,3,4,5]}",
          "$.shapes: expected an array of at most 4 integers in [1, 1024] (got an array)" },
        { "{\"shapes\":[1,-1]}", "$.shapes[1]: expected an integer in [1, 1024] (got -1)" },
        { "{\"shapes\":[1,\"2\"]}",
          "$.shapes[1]: expected an integer in [1, 1024] (got \"2\")" },
        { "{\"inner\":{\"k\\nhetero-sim: x\":1}}",
          "$.inner: unknown key \"k\\nhetero-sim: x\" (known keys: k, tag)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_false(apply_outer(bad[i].json, &o, &error));
        g_assert_cmpstr(error->message, ==, bad[i].message);
        g_clear_error(&error);
    }
    hs_param_clear(outer_params, &o);
}

/* Names: a required one must be there and say something; an optional one
 * is NULL when absent, and "" is refused either way. */
typedef struct Named {
    char *id, *why;
} Named;

static const HsParam named_params[] = {
    HS_PARAM_NAME("id", Named, id, "the id"),
    HS_PARAM_NAME_OPT("why", Named, why, "the reason"),
    HS_PARAM_END
};

static void
test_names(void)
{
    static const struct {
        const char *json, *message;
    } cases[] = {
        { "{\"id\":\"a\"}", NULL },
        { "{\"id\":\"a\",\"why\":\"b\"}", NULL },
        { "{}", "$: missing required key \"id\" (a non-empty string, the id)" },
        { "{\"id\":\"\"}", "$.id: expected a non-empty string (got \"\")" },
        { "{\"id\":\"a\",\"why\":\"\"}", "$.why: expected a non-empty string (got \"\")" },
        { "{\"id\":\"a\",\"why\":null}", "$.why: expected a non-empty string (got null)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(cJSON) obj = cJSON_Parse(cases[i].json);
        g_autoptr(GError) error = NULL;
        Named n = { 0 };
        hs_param_set_defaults(named_params, &n);
        gboolean ok = hs_param_apply(obj, "$", named_params, &n, NULL, NULL, &error);
        if (cases[i].message) {
            g_assert_false(ok);
            g_assert_cmpstr(error->message, ==, cases[i].message);
        } else {
            g_assert_no_error(error);
            g_assert_cmpstr(n.id, ==, "a");
            g_assert_cmpstr(n.why, ==, i == 1 ? "b" : NULL);
        }
        hs_param_clear(named_params, &n);
    }
    g_autoptr(GString) help = g_string_new(NULL);
    hs_param_describe(named_params, help);
    g_assert_nonnull(strstr(help->str, "a non-empty string; optional"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/param/defaults-and-values", test_defaults_and_values);
    g_test_add_func("/sim/param/errors", test_errors);
    g_test_add_func("/sim/param/units", test_units);
    g_test_add_func("/sim/param/nested-and-arrays", test_nested_and_arrays);
    g_test_add_func("/sim/param/json-parse-errors", test_json_parse_errors);
    g_test_add_func("/sim/param/names", test_names);
    return g_test_run();
}
