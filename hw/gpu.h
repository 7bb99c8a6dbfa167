/*
 * gpu.h - a mobile GPU driven through an OpenCL-like in-order queue.
 */
#ifndef HW_GPU_H
#define HW_GPU_H

#include "hw/dev.h"

typedef struct HwGpu {
    HwDev parent;
    double peak_fp16_tflops;         /* datasheet peak */
    double achieved_fp16_tflops;     /* plateau reached by large LLM kernels */
    double launch_busy_us;           /* submit into a queue that still runs */
    double launch_idle_us;           /* extra when the queue ran empty */
    double copy_us;                  /* clEnqueueWriteBuffer-style copy, fixed */
    double preempt_us;               /* save or restore a preempted kernel;
                                      * 0: kernels run to completion */
} HwGpu;

#endif /* HW_GPU_H */
