/* A buffer made over coarse-grained SVM (clCreateBuffer with CL_MEM_USE_HOST_PTR on the SVM
 * pointer, as pyopencl's SVMAllocation.as_buffer does, and a second one over the allocation's
 * second half) and the SVM pointer name one memory: a kernel doubles it through the buffer, another
 * through the pointer, a third adds one through the half's buffer, and the host reads 17 * 4 + 1
 * where it went through all three (pyopencl's test_coarse_grain_svm). A replay that kept them apart
 * would read 34 or 68. Without SVM it says so and exits 0. */
#include "common.h"

#define N 256
static const char *source =
    "__kernel void twice(__global int *x) { size_t i = get_global_id(0); x[i] *= 2; }\n"
    "__kernel void plus_one(__global int *x) { size_t i = get_global_id(0); x[i] += 1; }\n";

int main(void) {
    test_env env = open_env();
    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(env.device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) != CL_SUCCESS ||
        !(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        printf("buffer over svm: the device has no coarse-grained SVM\n");
        return 0;
    }
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-cl-std=CL2.0");
    cl_kernel twice = make_kernel(program, "twice"), plus_one = make_kernel(program, "plus_one");
    size_t bytes = N * sizeof(int), global = N, half = N / 2;
    int *x = clSVMAlloc(env.context, CL_MEM_READ_WRITE, bytes, 0);
    if (x == NULL) {
        fprintf(stderr, "clSVMAlloc failed\n");
        return 2;
    }
    CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, x, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) x[i] = 17;
    CHECK(clEnqueueSVMUnmap(queue, x, 0, NULL, NULL));
    cl_mem whole = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, x);
    cl_mem second_half = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes / 2, x + half);
    CHECK(clSetKernelArg(twice, 0, sizeof whole, &whole));
    CHECK(clEnqueueNDRangeKernel(queue, twice, 1, NULL, &global, NULL, 0, NULL, NULL));
    cl_kernel twice_again = CHECKED(clCloneKernel(twice, ERR));
    CHECK(clSetKernelArgSVMPointer(twice_again, 0, x));
    CHECK(clEnqueueNDRangeKernel(queue, twice_again, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clSetKernelArg(plus_one, 0, sizeof second_half, &second_half));
    CHECK(clEnqueueNDRangeKernel(queue, plus_one, 1, NULL, &half, NULL, 0, NULL, NULL));
    CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, x, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) {
        int want = i < N / 2 ? 68 : 69;
        if (x[i] != want) {
            fprintf(stderr, "x[%d] = %d, want %d\n", i, x[i], want);
            return 1;
        }
    }
    printf("buffer over svm: x[0] = %d, x[%d] = %d\n", x[0], N - 1, x[N - 1]);
    CHECK(clEnqueueSVMUnmap(queue, x, 0, NULL, NULL));
    CHECK(clFinish(queue));
    clReleaseMemObject(second_half);
    clReleaseMemObject(whole);
    clSVMFree(env.context, x);
    return 0;
}
