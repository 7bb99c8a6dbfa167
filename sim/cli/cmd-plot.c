/*
 * cmd-plot.c - placeholder, filled in below.
 */
#include "sim/cli/cli.h"

static gboolean
run(int argc, char **argv, GError **error)
{
    return TRUE;
}

const HsCommand hs_cmd_plot = {
    "plot", "DB --x AXIS --y METRIC", "plot a sweep database", run,
};
