/*
 * version.c - see version-info.h.
 */
#include "sim/util/version-info.h"
#include "sim/util/version.h"          /* generated: HS_VCS_VERSION */

const char *
hs_version(void)
{
    /* vcs_tag's fallback outside git is the project version itself */
    if (HS_VCS_VERSION[0] == '\0' || __builtin_strcmp(HS_VCS_VERSION, HS_VERSION) == 0) {
        return HS_VERSION;
    }
    return HS_VERSION "+g" HS_VCS_VERSION;
}
