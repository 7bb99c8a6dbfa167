/*
 * gpu.h - a mobile GPU driven through an OpenCL-like in-order queue.  What
 * its kernels achieve (matmul rate, launch costs) is the stack's
 * (hw/stack.h); only hw/gpu.c reads this struct.
 */
#ifndef HW_GPU_H
#define HW_GPU_H

#include "hw/dev.h"

typedef struct HwGpu {
    HwDev parent;
    double peak_fp16_tflops;         /* datasheet peak (bounds a stack's rate) */
    int arch;                        /* HwGpuArch: whose efficiency a stack applies */
    double preempt_us;               /* save or restore a preempted kernel;
                                      * 0: kernels run to completion */
} HwGpu;

#endif /* HW_GPU_H */
