/*
 * fuzz-calibrate.c - libFuzzer target: a calibration spec as `calibrate`
 * reads it (hs_cal_spec_parse: keys, inline measurements through the
 * points reader; no file is read from memory), and the same bytes as a
 * CSV of measurements (hs_cal_csv_parse).  Seeds: configs/calibration.
 */
#include "fuzz/harness.h"
#include "sim/calibrate/calibrate.h"

static gboolean
load(const uint8_t *data, size_t size, GError **error)
{
    /* the CSV reader's rows are what the spec reader then takes */
    cJSON_Delete(hs_cal_csv_parse((const char *) data, size, "fuzz-input.csv", NULL));
    g_autoptr(HsCalSpec) s = hs_cal_spec_parse((const char *) data, size, "fuzz-input", NULL,
                                               error);
    if (s == NULL) {
        return FALSE;
    }
    for (guint i = 0; i < s->n_meas; i++) {
        g_assert_true(s->meas[i].pt != NULL || s->meas[i].probe.soc != NULL);
        g_assert_nonnull(s->meas[i].metric);
        g_assert_true(s->meas[i].value > 0);
    }
    return TRUE;
}

HS_FUZZ_TARGET(load)
