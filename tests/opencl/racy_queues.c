/* A race the program never notices: two in-order queues write the same buffer with nothing
 * ordering them, both the same values, so the result is right whichever runs last; one wait for
 * both events closes them in one window. The trace holds the two writes unordered: `replayer
 * validate` and the comparison report them as a hazard. */
#include "common.h"

#define N 1024
static const char *source =
    "__kernel void ones(__global float *out) { out[get_global_id(0)] = 1.0f; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue first = open_queue(&env, 0), second = open_queue(&env, 0);
    cl_kernel ones = make_kernel(build_program(&env, source, NULL), "ones");
    cl_mem buffer = make_buffer(&env, CL_MEM_READ_WRITE, N * sizeof(float), NULL);
    float one = 1.0f, got[N], want[N];
    size_t global = N;
    cl_event written[2];
    CHECK(clEnqueueFillBuffer(first, buffer, &one, sizeof one, 0, sizeof got, 0, NULL, &written[0]));
    CHECK(clSetKernelArg(ones, 0, sizeof(cl_mem), &buffer));
    CHECK(clEnqueueNDRangeKernel(second, ones, 1, NULL, &global, NULL, 0, NULL, &written[1]));
    CHECK(clWaitForEvents(2, written));
    CHECK(clEnqueueReadBuffer(first, buffer, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    for (int i = 0; i < N; i++) want[i] = 1.0f;
    expect_floats("buffer", got, want, N);
    printf("racy_queues: %d ones\n", N);
    return 0;
}
