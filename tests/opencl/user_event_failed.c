/* A fill waits for a user event the host sets to an error, so the runtime never runs it (as
 * OpenCL-CTS callback_on_error_enqueue_command does); a kernel on another queue then cubes the
 * buffer's original contents. The replay must not run the fill either. */
#include "common.h"
#include <unistd.h>

#define N 128
static const char *source =
    "__kernel void cube(__global float *v) { size_t i = get_global_id(0); v[i] = v[i] * v[i] * v[i]; }\n";

static void CL_CALLBACK noticed(cl_event event, cl_int status, void *data) {
    (void)event;
    *(cl_int *)data = status;
}

int main(void) {
    test_env env = open_env();
    cl_command_queue gated = open_queue(&env, 0);
    cl_command_queue other = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel cube = make_kernel(program, "cube");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host[i] = (float)(i % 7) - 3.0f;
        want[i] = host[i] * host[i] * host[i];
    }
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    cl_event gate = CHECKED(clCreateUserEvent(env.context, ERR));
    const float pattern = 10.0f;
    cl_event filled;
    CHECK(clEnqueueFillBuffer(gated, v, &pattern, sizeof pattern, 0, sizeof host, 1, &gate, &filled));
    volatile cl_int fill_status = CL_COMPLETE;
    CHECK(clSetEventCallback(filled, CL_COMPLETE, noticed, (void *)&fill_status));
    CHECK(clSetUserEventStatus(gate, CL_INVALID_VALUE));
    clFinish(gated); /* may report the failure: the fill's status is what counts */
    CHECK(clSetKernelArg(cube, 0, sizeof(cl_mem), &v));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(other, cube, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(other, v, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    expect_floats("v", got, want, N);
    for (int tries = 0; fill_status == CL_COMPLETE && tries < 100; tries++)
        usleep(10000);
    printf("failed user event: fill status %s, sum of cubes = %.1f\n", fill_status < 0 ? "negative" : "not negative", float_sum(got, N));
    CHECK(clReleaseEvent(filled));
    CHECK(clReleaseEvent(gate));
    return 0;
}
