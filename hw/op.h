/*
 * op.h - what the simulator hands a processor model: one kernel described
 * by its kind, its GEMM-like shape, the storage type of each operand, its
 * operations and its compulsory DRAM traffic.  Never tensor values, never
 * model names.
 *
 * Shapes: a matmul is [m, k] x [k, n].  A weight-stationary NPU keeps the
 * right operand (k x n) in its array and streams the m rows of the left
 * one, so which matrix sits on the right is what HeteroLLM calls the
 * *order* of a matmul.  Attention: m query tokens, k head_dim, n keys.
 */
#ifndef HW_OP_H
#define HW_OP_H

#include <glib.h>
#include <stdint.h>

typedef enum {
    HW_OP_MATMUL,
    HW_OP_ATTENTION,
    HW_OP_ELEMWISE,          /* norms, RoPE, activations, adds, embedding */
    HW_OP_PREPARE,           /* build a static NPU graph (read_bytes: its tensors) */
    HW_OP_SYNC,              /* a hand-off between processors (see sync.h) */
    HW_OP_RENDER,            /* a graphics frame (GPU): busy_ps alone + its bytes */
    HW_OP_COUNT
} HwOpKind;

extern const char *const hw_op_name[];   /* HW_OP_COUNT entries: checked where defined */

typedef enum {
    HW_DTYPE_FP16,
    HW_DTYPE_INT8,
    HW_DTYPE_INT4,           /* grouped weights, dequantised on the fly */
    HW_DTYPE_COUNT
} HwDtype;

extern const char *const hw_dtype_name[];   /* HW_DTYPE_COUNT entries: checked where defined */

/* How a matmul's weights are stored, i.e. what the kernel library must do
 * to turn them into its datapath's type (a stack profile prices each).
 * Same order as models/graph.h's precisions, which sim/cost.c maps here;
 * hw/ does not see models. */
typedef enum {
    HW_WFMT_W4A16,           /* INT4, groups of 128, FP16 scale */
    HW_WFMT_W8A16,           /* INT8, a scale per row */
    HW_WFMT_W8A8,            /* INT8 per tensor, INT8 activations */
    HW_WFMT_W4A8,            /* INT4 groups, INT8 activations */
    HW_WFMT_FP16,            /* FP16: nothing to dequantise */
    HW_WFMT_W8A8_SHADOW,     /* W8A8 plus float outlier channels */
    HW_WFMT_FP4A16,          /* E0M4 FP4, groups of 128 (shift and OR) */
    HW_WFMT_Q4_0,            /* INT4, groups of 32 (llama.cpp Q4_0) */
    HW_WFMT_Q8_0,            /* INT8, groups of 32 (llama.cpp Q8_0) */
    HW_WFMT_COUNT
} HwWfmt;

/* "w4a16", ... "w8a8-shadow", ...: the precision names of models/graph.h */
extern const char *const hw_wfmt_name[];   /* HW_WFMT_COUNT entries: checked where defined */

typedef struct HwOp {
    HwOpKind kind;
    uint64_t m, k, n;        /* [m, k] x [k, n] */
    HwDtype a_dtype;         /* left operand (streamed on the NPU) */
    HwDtype b_dtype;         /* right operand (stationary on the NPU) */
    HwDtype compute;         /* datapath: FP16 or INT8 */
    HwWfmt wfmt;             /* matmul: how its weights are stored */
    uint64_t weight_bytes;   /* matmul: stored weight bytes it reads */
    uint64_t flops;
    uint64_t read_bytes;     /* compulsory DRAM reads */
    uint64_t write_bytes;    /* DRAM writes */
    uint64_t busy_ps;        /* HW_OP_RENDER: device time of the frame alone */
    uint64_t serial_elems;   /* CPU: elements one thread walks in scalar code,
                              * at the stack's cpu.serial_cycles_per_elem */
} HwOp;

/* What an op costs on one processor, alone.  Breakdown fields are filled
 * by the models that have them (NPU: tiles). */
typedef struct HwCost {
    uint64_t overhead_ps;    /* launch / submission before it runs */
    uint64_t compute_ps;     /* time if memory were infinitely fast */
    uint64_t dram_bytes;     /* DRAM traffic, the model's own extras included */
    uint64_t alone_ps;       /* overhead + max(compute, bytes at the cap) */
    uint64_t cycles;         /* NPU: the longest of array, HVX, DMA */
    uint64_t compute_cycles; /* NPU: array cycles */
    uint64_t weight_loads;   /* NPU: stationary tiles loaded into the array */
    uint64_t passes;         /* NPU: passes over the streamed operand */
    /* a part of the cost came to a time beyond SIM_TIME_HORIZON_PS, not
     * finite or negative (hw_cost_ps; its field then holds the horizon):
     * that part in words naming the keys it follows from, and the time
     * as computed; NULL when every part is in range */
    const char *beyond;
    double beyond_ps;
} HwCost;

/* Heads x query-key scores of an HW_OP_ATTENTION @op: its flops are
 * heads x scores x (4 head_dim + 5) (QK^T and PV, 2 head_dim flops a score
 * each, and 5 of softmax), head_dim its k. */
double hw_op_attention_scores(const HwOp *op);

#endif /* HW_OP_H */
