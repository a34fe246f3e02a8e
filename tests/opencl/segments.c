/* Three windows of work, each ended by clFinish: the trace holds several segments, and later
 * windows start from what earlier ones left in the buffer. */
#include "common.h"

#define N 300
static const char *source =
    "__kernel void affine(__global float *v, float mul, float add) {\n"
    "    size_t i = get_global_id(0); v[i] = v[i] * mul + add; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel affine = make_kernel(program, "affine");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) host[i] = want[i] = (float)(i % 13);
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    CHECK(clSetKernelArg(affine, 0, sizeof(cl_mem), &v));
    size_t global = N;
    const float muls[3] = {2.0f, -1.0f, 0.5f}, adds[3] = {1.0f, 3.0f, -2.0f};
    for (int window = 0; window < 3; window++) {
        CHECK(clSetKernelArg(affine, 1, sizeof(float), &muls[window]));
        CHECK(clSetKernelArg(affine, 2, sizeof(float), &adds[window]));
        CHECK(clEnqueueNDRangeKernel(queue, affine, 1, NULL, &global, NULL, 0, NULL, NULL));
        if (window == 1) CHECK(clEnqueueNDRangeKernel(queue, affine, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, v, CL_FALSE, 0, sizeof got, got, 0, NULL, NULL));
        CHECK(clFinish(queue));
        int launches = window == 1 ? 2 : 1;
        for (int i = 0; i < N; i++)
            for (int l = 0; l < launches; l++) want[i] = want[i] * muls[window] + adds[window];
        expect_floats("v", got, want, N);
        printf("window %d: sum = %.1f\n", window, float_sum(got, N));
    }
    return 0;
}
