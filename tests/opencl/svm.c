/* Coarse-grained SVM: map for writing, a kernel through an SVM pointer (one into the middle of
 * the allocation), an SVM copy and fill, then a map for reading and a free on the queue. Without
 * SVM it says so and exits 0. */
#include "common.h"

#define N 256
static const char *source =
    "__kernel void square_plus(__global float *out, __global const float *in, float plus) {\n"
    "    size_t i = get_global_id(0); out[i] = in[i] * in[i] + plus; }\n";

int main(void) {
    test_env env = open_env();
    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(env.device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) != CL_SUCCESS ||
        !(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        printf("svm: the device has no coarse-grained SVM\n");
        return 0;
    }
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-cl-std=CL2.0");
    cl_kernel kernel = make_kernel(program, "square_plus");
    size_t bytes = N * sizeof(float), global = N / 2;
    float *in = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    float *out = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    float *copy = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    if (in == NULL || out == NULL || copy == NULL) {
        fprintf(stderr, "clSVMAlloc failed\n");
        return 2;
    }
    CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, in, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) in[i] = (float)(i % 11);
    CHECK(clEnqueueSVMUnmap(queue, in, 0, NULL, NULL));
    float zero = 0.0f, plus = 0.5f;
    CHECK(clEnqueueSVMMemFill(queue, out, &zero, sizeof zero, bytes, 0, NULL, NULL));
    /* The second half of `in` squared into the second half of `out`. */
    CHECK(clSetKernelArgSVMPointer(kernel, 0, out + N / 2));
    CHECK(clSetKernelArgSVMPointer(kernel, 1, in + N / 2));
    CHECK(clSetKernelArg(kernel, 2, sizeof plus, &plus));
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueSVMMemcpy(queue, CL_FALSE, copy, out, bytes, 0, NULL, NULL));
    CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, copy, bytes, 0, NULL, NULL));
    float want[N];
    for (int i = 0; i < N; i++) {
        float v = (float)(i % 11);
        want[i] = i < N / 2 ? 0.0f : v * v + plus;
    }
    expect_floats("copy", copy, want, N);
    printf("svm: sum of copy = %.1f\n", float_sum(copy, N));
    CHECK(clEnqueueSVMUnmap(queue, copy, 0, NULL, NULL));
    /* `copy` goes with the queue's work, as pyopencl frees SVM: its contents are read before. */
    void *queued[1] = {copy};
    CHECK(clEnqueueSVMFree(queue, 1, queued, NULL, NULL, 0, NULL, NULL));
    CHECK(clFinish(queue));
    clSVMFree(env.context, in);
    clSVMFree(env.context, out);
    return 0;
}
