/*
 * report-fields.c - see report-fields.h.
 */
#include "sim/cli/report-fields.h"

#include <stddef.h>
#include <string.h>

#define NAME(n, path) { (n), (path), HS_FIELD_NAME, NULL, (n), FALSE, 0 }
#define COUNT(n, path, member) \
    { (n), (path), HS_FIELD_COUNT, NULL, (n), FALSE, offsetof(SimRunReport, member) }
#define REAL(n, path, member, fmt, label) \
    { (n), (path), HS_FIELD_REAL, (fmt), (label), TRUE, offsetof(SimRunReport, member) }

const HsReportField hs_report_fields[] = {
    NAME("soc", "soc"),
    NAME("model", "model"),
    NAME("policy", "policy"),
    NAME("sync", "sync"),
    COUNT("prompt", "prompt_tokens", workload.prompt),
    COUNT("decode", "decode_tokens", workload.decode),
    COUNT("batch", "batch", workload.batch),
    REAL("prefill_ms", "prefill.time_ms", prefill.time_ms, "%.4f", "prefill time (ms)"),
    REAL("prefill_tokens_per_s", "prefill.tokens_per_s", prefill.tokens_per_s, "%.4f",
         "prefill tokens/s"),
    REAL("decode_ms", "decode.time_ms", decode.time_ms, "%.4f", "decode time (ms)"),
    REAL("decode_tokens_per_s", "decode.tokens_per_s", decode.tokens_per_s, "%.4f",
         "decode tokens/s"),
    REAL("tpot_ms", "decode.tpot_ms", tpot_ms, "%.4f", "time per output token (ms)"),
    REAL("ttft_ms", "ttft_ms", ttft_ms, "%.4f", "time to first token (ms)"),
    REAL("prefill_gbps", "dram.prefill_avg_gbps", prefill.dram_gbps, "%.3f",
         "prefill DRAM bandwidth (GB/s)"),
    REAL("decode_gbps", "dram.decode_avg_gbps", decode.dram_gbps, "%.3f",
         "decode DRAM bandwidth (GB/s)"),
    REAL("peak_gbps", "dram.peak_gbps", peak_gbps, "%.3f", "peak DRAM bandwidth (GB/s)"),
    REAL("prefill_j", "energy.prefill_j", prefill.energy_j, "%.5f", "prefill energy (J)"),
    REAL("decode_j", "energy.decode_j", decode.energy_j, "%.5f", "decode energy (J)"),
    REAL("prefill_w", "energy.prefill_avg_w", prefill.avg_w, "%.4f", "prefill power (W)"),
    REAL("decode_w", "energy.decode_avg_w", decode.avg_w, "%.4f", "decode power (W)"),
    { NULL, NULL, 0, NULL, NULL, FALSE, 0 },
};

double
hs_report_field_value(const HsReportField *f, const SimRunReport *r)
{
    g_assert(f->type == HS_FIELD_REAL);
    return *(const double *) ((const char *) r + f->offset);
}

char *
hs_report_field_text(const HsReportField *f, const SimRunReport *r)
{
    switch (f->type) {
    case HS_FIELD_NAME:
        if (strcmp(f->name, "sync") == 0) {
            return g_strdup(sim_sync_name[r->workload.sync]);
        }
        return g_strdup(strcmp(f->name, "soc") == 0 ? r->soc
                        : strcmp(f->name, "model") == 0 ? r->model : r->policy);
    case HS_FIELD_COUNT:
        return g_strdup_printf("%u", *(const uint32_t *) ((const char *) r + f->offset));
    case HS_FIELD_REAL:
    default:
        return g_strdup_printf(f->csv_format, hs_report_field_value(f, r));
    }
}

const HsReportField *
hs_report_field_find(const char *name)
{
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}
