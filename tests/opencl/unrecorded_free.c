/* A program whose trace is partial: it frees an SVM allocation with clEnqueueSVMFree, a command
 * the shim does not record. What it left out touches no memory the kernel uses, so a replay's
 * results equal the recording; the verdict must still say that the trace left work out. Without
 * SVM it says so and exits 0. */
#include "common.h"

#define N 256
static const char *source =
    "__kernel void twice(__global float *out, __global const float *in) {\n"
    "    size_t i = get_global_id(0); out[i] = 2.0f * in[i]; }\n";

int main(void) {
    test_env env = open_env();
    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(env.device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) != CL_SUCCESS ||
        !(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        printf("unrecorded free: the device has no coarse-grained SVM\n");
        return 0;
    }
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-cl-std=CL2.0");
    cl_kernel kernel = make_kernel(program, "twice");
    size_t bytes = N * sizeof(float), global = N;
    float *in = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    float *out = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    void *spare = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    if (in == NULL || out == NULL || spare == NULL) {
        fprintf(stderr, "clSVMAlloc failed\n");
        return 2;
    }
    float host[N], got[N];
    for (int i = 0; i < N; i++) host[i] = (float)(i % 13);
    CHECK(clEnqueueSVMMemcpy(queue, CL_FALSE, in, host, bytes, 0, NULL, NULL));
    CHECK(clSetKernelArgSVMPointer(kernel, 0, out));
    CHECK(clSetKernelArgSVMPointer(kernel, 1, in));
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueSVMMemcpy(queue, CL_TRUE, got, out, bytes, 0, NULL, NULL));
    CHECK(clEnqueueSVMFree(queue, 1, &spare, NULL, NULL, 0, NULL, NULL));
    CHECK(clFinish(queue));
    clSVMFree(env.context, in);
    clSVMFree(env.context, out);
    printf("unrecorded free: sum = %.1f\n", float_sum(got, N));
    return 0;
}
