/*
 * baseline.c - single-processor policies: cpu-only (llama.cpp-like) and
 * gpu-only (the PPL / MNN / MLC OpenCL engines; HeteroLLM's PPL-OpenCL
 * baseline).  Every node of every phase runs whole on one processor at
 * W4A16.
 */
#include "sim/policies/common.h"

static gboolean
cpu_plan(SimBuilder *b, GError **error)
{
    return policy_all_on(b, sim_builder_info(b)->proc_cpu, error);
}

static gboolean
gpu_plan(SimBuilder *b, GError **error)
{
    return policy_all_on(b, sim_builder_info(b)->proc_gpu, error);
}

const SimPolicy sim_policy_cpu_only = {
    SIM_POLICY_ABI, "cpu-only",
    "everything on the CPU cores, W4A16 (llama.cpp-like baseline)", cpu_plan,
    "llama-cpp",
};

const SimPolicy sim_policy_gpu_only = {
    SIM_POLICY_ABI, "gpu-only",
    "everything on the GPU, W4A16 (PPL/MNN/MLC OpenCL-like baseline)", gpu_plan,
    "heterollm",
};
