/* Less common paths: a program rebuilt from its binary, kernels from clCreateKernelsInProgram and
 * clCloneKernel, a task launch, rectangular write and read, an event callback and clWaitForEvents. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clEnqueueTask */
#include "common.h"
#include <time.h>

#define W 8
#define H 6
static const char *source =
    "__kernel void add_one(__global float *v) { v[get_global_id(0)] += 1.0f; }\n"
    "__kernel void scale_first(__global float *v, float s) { v[0] *= s; }\n";

static void CL_CALLBACK count_completion(cl_event event, cl_int status, void *counter) {
    (void)event;
    if (status == CL_COMPLETE) __atomic_add_fetch((int *)counter, 1, __ATOMIC_SEQ_CST);
}

/* A callback may run shortly after the event completes: wait up to five seconds for it. */
static int callbacks_seen(int *counter) {
    for (int tries = 0; tries < 5000 && __atomic_load_n(counter, __ATOMIC_SEQ_CST) == 0; tries++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

/* The program built from source, then again from the device binary that build produced. */
static cl_program from_binary(const test_env *env) {
    cl_program built = build_program(env, source, NULL);
    size_t size = 0;
    CHECK(clGetProgramInfo(built, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    unsigned char *binary = malloc(size);
    if (binary == NULL) exit(2);
    CHECK(clGetProgramInfo(built, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
    const unsigned char *binaries[1] = {binary};
    cl_program program = CHECKED(clCreateProgramWithBinary(env->context, 1, &env->device, &size, binaries, NULL, ERR));
    CHECK(clBuildProgram(program, 1, &env->device, NULL, NULL, NULL));
    free(binary);
    CHECK(clReleaseProgram(built));
    return program;
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = from_binary(&env);
    cl_kernel kernels[2];
    cl_uint count = 0;
    CHECK(clCreateKernelsInProgram(program, 2, kernels, &count));
    char name[64] = {0};
    CHECK(clGetKernelInfo(kernels[0], CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL));
    cl_kernel add_one = strcmp(name, "add_one") == 0 ? kernels[0] : kernels[1];
    cl_kernel scale_first = add_one == kernels[0] ? kernels[1] : kernels[0];
    size_t bytes = W * H * sizeof(float);
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL);
    float zero = 0.0f;
    CHECK(clEnqueueFillBuffer(queue, v, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));

    /* A 3x2 block of host values written at column 2, row 1. */
    float block[2][3] = {{1, 2, 3}, {4, 5, 6}};
    size_t buffer_origin[3] = {2 * sizeof(float), 1, 0}, host_origin[3] = {0, 0, 0};
    size_t region[3] = {3 * sizeof(float), 2, 1}, pitch = W * sizeof(float);
    CHECK(clEnqueueWriteBufferRect(queue, v, CL_FALSE, buffer_origin, host_origin, region, pitch, 0,
                                   sizeof block[0], 0, block, 0, NULL, NULL));
    CHECK(clSetKernelArg(add_one, 0, sizeof(cl_mem), &v));
    cl_kernel add_again = CHECKED(clCloneKernel(add_one, ERR));
    size_t global = W * H;
    int completed = 0;
    cl_event first, second;
    CHECK(clEnqueueNDRangeKernel(queue, add_one, 1, NULL, &global, NULL, 0, NULL, &first));
    CHECK(clSetEventCallback(first, CL_COMPLETE, count_completion, &completed));
    CHECK(clEnqueueNDRangeKernel(queue, add_again, 1, NULL, &global, NULL, 0, NULL, &second));
    float s = 10.0f;
    CHECK(clSetKernelArg(scale_first, 0, sizeof(cl_mem), &v));
    CHECK(clSetKernelArg(scale_first, 1, sizeof s, &s));
    CHECK(clEnqueueTask(queue, scale_first, 1, &second, NULL));
    float got_block[2][3];
    cl_event read;
    CHECK(clEnqueueReadBufferRect(queue, v, CL_FALSE, buffer_origin, host_origin, region, pitch, 0,
                                  sizeof got_block[0], 0, got_block, 0, NULL, &read));
    float corner;
    CHECK(clEnqueueReadBuffer(queue, v, CL_FALSE, 0, sizeof corner, &corner, 0, NULL, NULL));
    CHECK(clWaitForEvents(1, &read));
    CHECK(clFinish(queue));
    float want_block[6] = {3, 4, 5, 6, 7, 8};
    expect_floats("block", &got_block[0][0], want_block, 6);
    expect_floats("corner", &corner, (float[]){20.0f}, 1);
    int callbacks = callbacks_seen(&completed);
    if (callbacks != 1) {
        fprintf(stderr, "the completion callback ran %d times\n", callbacks);
        return 1;
    }
    printf("api breadth: block sum = %.1f, corner = %.1f, %u kernels in the program\n",
           float_sum(&got_block[0][0], 6), corner, count);
    return 0;
}
