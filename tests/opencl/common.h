/* Shared by the OpenCL test programs: error checks, platform choice, program building.
 * The platform is the first whose name contains $REPRISE_TEST_PLATFORM (any case), else the first. */
#ifndef REPRISE_TEST_COMMON_H
#define REPRISE_TEST_COMMON_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasestr */
#endif
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        cl_int err_ = (call);                                                \
        if (err_ != CL_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %d\n", #call, err_);                 \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

/* For calls that return an object and report through their last argument. */
#define CHECKED(expr)                                                        \
    ({                                                                       \
        cl_int err_ = CL_SUCCESS;                                            \
        __typeof__(expr) value_ = (expr);                                    \
        if (err_ != CL_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %d\n", #expr, err_);                 \
            exit(2);                                                         \
        }                                                                    \
        value_;                                                              \
    })
#define ERR (&err_)

typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
} test_env;

static inline cl_platform_id choose_platform(void) {
    cl_platform_id platforms[16];
    cl_uint count = 0;
    CHECK(clGetPlatformIDs(16, platforms, &count));
    const char *wanted = getenv("REPRISE_TEST_PLATFORM");
    if (wanted == NULL || *wanted == '\0') return platforms[0];
    for (cl_uint i = 0; i < count && i < 16; i++) {
        char name[256] = {0};
        CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL));
        if (strcasestr(name, wanted) != NULL) return platforms[i];
    }
    fprintf(stderr, "no OpenCL platform named like \"%s\"\n", wanted);
    exit(2);
}

static inline test_env open_env(void) {
    test_env env;
    env.platform = choose_platform();
    CHECK(clGetDeviceIDs(env.platform, CL_DEVICE_TYPE_ALL, 1, &env.device, NULL));
    env.context = CHECKED(clCreateContext(NULL, 1, &env.device, NULL, NULL, ERR));
    return env;
}

static inline cl_command_queue open_queue(const test_env *env, cl_command_queue_properties properties) {
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, properties, 0};
    return CHECKED(clCreateCommandQueueWithProperties(env->context, env->device, list, ERR));
}

static inline cl_program build_program(const test_env *env, const char *source, const char *options) {
    cl_program program = CHECKED(clCreateProgramWithSource(env->context, 1, &source, NULL, ERR));
    if (clBuildProgram(program, 1, &env->device, options, NULL, NULL) != CL_SUCCESS) {
        char log[8192] = {0};
        clGetProgramBuildInfo(program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    return program;
}

/* An extension function of `platform`; exits with 2 (not applicable) when it lacks it. */
#define LOOK_UP(platform, name) ((name##_fn)lookup(platform, #name))
static inline void *lookup(cl_platform_id platform, const char *name) {
    void *function = clGetExtensionFunctionAddressForPlatform(platform, name);
    if (function == NULL) {
        fprintf(stderr, "%s is missing\n", name);
        exit(2);
    }
    return function;
}

static inline cl_kernel make_kernel(cl_program program, const char *name) {
    return CHECKED(clCreateKernel(program, name, ERR));
}

static inline cl_mem make_buffer(const test_env *env, cl_mem_flags flags, size_t size, void *host) {
    return CHECKED(clCreateBuffer(env->context, flags, size, host, ERR));
}

/* Exits with 1 when got[i] differs from want[i] by more than `tolerance`, relative to values above 1. */
static inline void expect_close(const char *what, const float *got, const float *want, size_t n, float tolerance) {
    for (size_t i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) > tolerance * fmaxf(1.0f, fabsf(want[i]))) {
            fprintf(stderr, "%s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
            exit(1);
        }
    }
}

static inline void expect_floats(const char *what, const float *got, const float *want, size_t n) {
    expect_close(what, got, want, n, 1e-5f);
}

/* Runs `run` on each of `count` workers (`size` bytes apart from `workers`), each in a thread of
 * its own, and waits for them all. */
static inline void run_threads(void *(*run)(void *), void *workers, size_t size, int count) {
    pthread_t ids[64];
    if (count > 64) {
        fprintf(stderr, "run_threads: at most 64 threads\n");
        exit(2);
    }
    for (int t = 0; t < count; t++) pthread_create(&ids[t], NULL, run, (char *)workers + (size_t)t * size);
    for (int t = 0; t < count; t++) pthread_join(ids[t], NULL);
}

static inline double float_sum(const float *values, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += values[i];
    return sum;
}

#endif
