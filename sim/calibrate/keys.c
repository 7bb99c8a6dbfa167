/*
 * keys.c - what a spec leaves to the config tables: a key's documented
 * range and type (see hs_cal_spec_resolve in calibrate.h).  The tables
 * are walked as data, as tests/test-hw-bounds.c walks them: a processor's
 * class params (by the base SoC's processor name), the SoC's sections,
 * the stack's sections.
 */
#include "sim/calibrate/calibrate.h"
#include "hw/dev.h"
#include "hw/stack.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/override.h"
#include "sim/util/param.h"

#include <math.h>
#include <string.h>

/* the param @name in @table (NULL: none); a dotted name
 * ("arch_matmul_efficiency.mali-valhall5") walks down nested objects'
 * tables, so a key inside one gets its own table's range */
static const HsParam *
find(const HsParam *table, const char *name)
{
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t) (dot - name) : strlen(name);
    for (const HsParam *p = table; p && p->name; p++) {
        if (strncmp(p->name, name, n) != 0 || p->name[n] != '\0') {
            continue;
        }
        if (dot == NULL) {
            return p;
        }
        return p->type == HS_PARAM_T_OBJ ? find(p->sub, dot + 1) : NULL;
    }
    return NULL;
}

/* @path ("memory.peak_gbps") in the sections: the longest section prefix */
static const HsParam *
in_sections(const HsParamSection *secs, const char *path)
{
    for (const HsParamSection *sec = secs; sec->path; sec++) {
        size_t n = strlen(sec->path);
        if (strncmp(path, sec->path, n) == 0 && path[n] == '.') {
            const HsParam *p = find(sec->params, path + n + 1);
            if (p) {
                return p;
            }
        }
    }
    return NULL;
}

gboolean
hs_cal_spec_resolve(HsCalSpec *s, GError **error)
{
    g_autoptr(HwSoc) soc = NULL;
    for (guint k = 0; k < s->n_keys; k++) {
        HsCalKey *key = &s->keys[k];
        g_autofree char *kp = g_strdup_printf("%s: $.keys.%s", s->path, key->path);
        const HsParam *p = NULL;
        if (strcmp(hs_override_doc(key->path), "stack") == 0) {
            p = in_sections(hw_stack_sections(), key->path + strlen("stack."));
        } else {
            if (soc == NULL && (soc = hs_config_load_soc(s->soc, NULL, error)) == NULL) {
                g_prefix_error(error, "%s: $.soc: ", s->path);
                return FALSE;
            }
            const char *dot = strchr(key->path, '.');
            for (guint d = 0; dot && p == NULL && d < soc->devs->len; d++) {
                const HwDev *dev = g_ptr_array_index(soc->devs, d);
                if (strncmp(dev->name, key->path, dot - key->path) == 0 &&
                    dev->name[dot - key->path] == '\0') {
                    p = find(dev->cls->params, dot + 1);
                }
            }
            if (p == NULL) {
                p = in_sections(hw_soc_sections(), key->path);
            }
        }
        gboolean is_int = p && (p->type == HS_PARAM_T_U32 || p->type == HS_PARAM_T_I32 ||
                                p->type == HS_PARAM_T_U64);
        if (!key->has_integer) {
            key->integer = is_int;
        }
        if (!key->has_bounds) {
            if (p == NULL || !hs_param_is_number(p)) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                            "%s: missing keys \"min\" and \"max\" (no numeric key of that path "
                            "in the config tables to take its range from)", kp);
                return FALSE;
            }
            key->lo = p->min;
            key->hi = p->max;
            if (p->min_open) {
                /* (0, max]: a millionth of max stands for the open end */
                key->lo = p->min > 0 ? p->min : p->max * 1e-6;
            }
            key->log = key->lo > 0;
        }
        if ((key->has_start && (key->start < key->lo || key->start > key->hi)) ||
            (key->has_prior && (key->prior < key->lo || key->prior > key->hi))) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.%s: expected a number in [%g, %g] (got %g)", kp,
                        key->has_start && (key->start < key->lo || key->start > key->hi)
                            ? "start" : "prior.value", key->lo, key->hi,
                        key->has_start && (key->start < key->lo || key->start > key->hi)
                            ? key->start : key->prior);
            return FALSE;
        }
    }
    return TRUE;
}
