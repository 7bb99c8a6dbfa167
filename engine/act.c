/*
 * act.c - FFN activations: SwiGLU (silu(gate) * up: Llama, Qwen,
 * Mistral), GeGLU with the tanh GELU approximation (Gemma), and an
 * ungated GELU (Phi-2's fc1 -> gelu_new -> fc2), tanh or exact (erf),
 * element by element over a token range and a feature range.
 */
#include "engine/kernels.h"

#include <math.h>

static inline float
silu(float x)
{
    return x / (1.0f + expf(-x));
}

static inline float
gelu_tanh(float x)
{
    const float c = 0.7978845608028654f;     /* sqrt(2 / pi) */
    return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

static inline float
gelu_erf(float x)
{
    /* torch's exact GELU: x * Phi(x), Phi through erf */
    return (float) (0.5 * x * (1.0 + erf(x * 0.7071067811865476)));
}

void
eng_act_rows(const float *gate, const float *up, float *y, size_t d, int act,
             size_t t0, size_t t1, size_t c0, size_t c1)
{
    g_assert(act >= 0 && act < ENG_ACT_COUNT);
    /* y [t, d] = act(gate [t, d]) * up [t, d], or act(gate) alone */
    #pragma omp parallel for schedule(static) if ((t1 - t0) * (c1 - c0) * 16 >= ENG_PAR_MIN_OPS)
    for (size_t t = t0; t < t1; t++) {
        for (size_t c = c0; c < c1; c++) {
            float g = gate[t * d + c];
            float a = act == ENG_ACT_GELU_TANH ? gelu_tanh(g)
                      : act == ENG_ACT_GELU ? gelu_erf(g) : silu(g);
            y[t * d + c] = up ? a * up[t * d + c] : a;
        }
    }
}
