/* A program that updates its own command buffer between enqueues: one relaxation kernel
 * (Jacobi-style) recorded once in a mutable cl_khr_command_buffer, enqueued every iteration after
 * clUpdateMutableCommandsKHR swaps its two buffers and changes its weight, each enqueue waited for
 * with clFinish. The shim must record each enqueue with the arguments the program last gave.
 * Devices without cl_khr_command_buffer_mutable_dispatch (PoCL) record a new command buffer per
 * iteration instead, so the output is the same on every device. */
#include "common.h"
#include <CL/cl_ext.h>

#define N 256
#define ITERATIONS 6
static const char *source =
    "__kernel void relax(__global float *next, __global const float *current, float weight) {\n"
    "    size_t i = get_global_id(0), n = get_global_size(0);\n"
    "    float left = i > 0 ? current[i - 1] : 0.0f, right = i + 1 < n ? current[i + 1] : 0.0f;\n"
    "    next[i] = (1.0f - weight) * current[i] + weight * 0.5f * (left + right); }\n";

/* The dispatch config of mutable dispatch 0.9.2 and later, which the installed header may predate
 * (it may declare the earlier one, with a structure type and `next` first). */
typedef struct {
    cl_mutable_command_khr command;
    cl_uint num_args, num_svm_args, num_exec_infos, work_dim;
    const cl_mutable_dispatch_arg_khr *arg_list, *arg_svm_list;
    const void *exec_info_list;
    const size_t *global_work_offset, *global_work_size, *local_work_size;
} dispatch_config;
typedef cl_int (*update_from_array_fn)(cl_command_buffer_khr, cl_uint, const cl_uint *, const void **);
typedef cl_int (*update_from_chain_fn)(cl_command_buffer_khr, const void *);
/* The earlier revision's structures: a base config chaining dispatch configs. */
typedef struct {
    cl_uint type;
    const void *next;
    dispatch_config config;
} chained_dispatch_config;
typedef struct {
    cl_uint type;
    const void *next;
    cl_uint num_mutable_dispatch;
    const chained_dispatch_config *mutable_dispatch_list;
} chained_base_config;

/* The version of `extension` the device reports, 0 when it has none. */
static cl_version extension_version(cl_device_id device, const char *extension) {
    cl_name_version versions[256];
    size_t size = 0;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, sizeof versions, versions, &size));
    for (size_t i = 0; i < size / sizeof versions[0]; i++)
        if (strcmp(versions[i].name, extension) == 0) return versions[i].version;
    return 0;
}

static int updates_arguments(cl_device_id device) {
    if (extension_version(device, "cl_khr_command_buffer_mutable_dispatch") == 0) return 0;
    cl_mutable_dispatch_fields_khr fields = 0;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR, sizeof fields, &fields, NULL));
    return (fields & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR) != 0;
}

static void relax_on_host(float *next, const float *current, float weight) {
    for (int i = 0; i < N; i++) {
        float left = i > 0 ? current[i - 1] : 0.0f, right = i + 1 < N ? current[i + 1] : 0.0f;
        next[i] = (1.0f - weight) * current[i] + weight * 0.5f * (left + right);
    }
}

typedef struct {
    cl_platform_id platform;
    cl_command_queue queue;
    cl_kernel relax;
    cl_command_buffer_khr buffer;
    cl_mutable_command_khr command;
} recorder;

static const size_t global = N;

/* A new command buffer holding one launch of `relax` with its arguments as now set. */
static void record_buffer(recorder *r, int mutable) {
    clCreateCommandBufferKHR_fn create = LOOK_UP(r->platform, clCreateCommandBufferKHR);
    clCommandNDRangeKernelKHR_fn command_kernel = LOOK_UP(r->platform, clCommandNDRangeKernelKHR);
    clFinalizeCommandBufferKHR_fn finalize = LOOK_UP(r->platform, clFinalizeCommandBufferKHR);
    cl_command_buffer_properties_khr buffer_properties[] = {CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_MUTABLE_KHR, 0};
    cl_ulong command_properties[] = {CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, 0};
    r->buffer = CHECKED(create(1, &r->queue, mutable ? buffer_properties : NULL, ERR));
    CHECK(command_kernel(r->buffer, NULL, mutable ? (const void *)command_properties : NULL, r->relax, 1, NULL, &global, NULL,
                         0, NULL, NULL, mutable ? &r->command : NULL));
    CHECK(finalize(r->buffer));
}

/* Gives the recorded launch new arguments with clUpdateMutableCommandsKHR, in the signature of the
 * revision the device reports (arrays of configs from 0.9.2). */
static void update_arguments(recorder *r, cl_device_id device, cl_mem next, cl_mem current, float weight) {
    cl_mutable_dispatch_arg_khr args[] = {
        {0, sizeof(cl_mem), &next},
        {1, sizeof(cl_mem), &current},
        {2, sizeof weight, &weight},
    };
    dispatch_config config = {.command = r->command, .num_args = 3, .arg_list = args};
    void *update = lookup(r->platform, "clUpdateMutableCommandsKHR");
    if (extension_version(device, "cl_khr_command_buffer_mutable_dispatch") >= CL_MAKE_VERSION(0, 9, 2)) {
        cl_uint type = 0; /* CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR from 0.9.2 */
        const void *configs[] = {&config};
        CHECK(((update_from_array_fn)update)(r->buffer, 1, &type, configs));
    } else {
        chained_dispatch_config chained = {1, NULL, config}; /* CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR before 0.9.2 */
        chained_base_config base = {0, NULL, 1, &chained};
        CHECK(((update_from_chain_fn)update)(r->buffer, &base));
    }
}

int main(void) {
    test_env env = open_env();
    if (extension_version(env.device, "cl_khr_command_buffer") == 0) {
        printf("own mutable command buffer: the device has no cl_khr_command_buffer\n");
        return 0;
    }
    int mutable = updates_arguments(env.device);
    if (!mutable) fprintf(stderr, "own mutable command buffer: no mutable dispatch; a new command buffer per iteration\n");
    clEnqueueCommandBufferKHR_fn enqueue = LOOK_UP(env.platform, clEnqueueCommandBufferKHR);
    clReleaseCommandBufferKHR_fn release = LOOK_UP(env.platform, clReleaseCommandBufferKHR);

    recorder r = {.platform = env.platform, .queue = open_queue(&env, 0)};
    cl_program program = build_program(&env, source, NULL);
    r.relax = make_kernel(program, "relax");
    float start[N], want[N], expected_next[N], got[N];
    for (int i = 0; i < N; i++) start[i] = want[i] = (i % 32 == 0) ? 100.0f : 0.0f;
    cl_mem buffers[2] = {make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof start, start),
                         make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof start, start)};
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        float weight = 0.5f + 0.05f * (float)iteration;
        cl_mem current = buffers[iteration % 2], next = buffers[(iteration + 1) % 2];
        if (mutable && iteration > 0) {
            update_arguments(&r, env.device, next, current, weight);
        } else {
            CHECK(clSetKernelArg(r.relax, 0, sizeof(cl_mem), &next));
            CHECK(clSetKernelArg(r.relax, 1, sizeof(cl_mem), &current));
            CHECK(clSetKernelArg(r.relax, 2, sizeof weight, &weight));
            if (iteration > 0) CHECK(release(r.buffer));
            record_buffer(&r, mutable);
        }
        CHECK(enqueue(0, NULL, r.buffer, 0, NULL, NULL));
        CHECK(clFinish(r.queue));
        relax_on_host(expected_next, want, weight);
        memcpy(want, expected_next, sizeof want);
    }
    CHECK(clEnqueueReadBuffer(r.queue, buffers[ITERATIONS % 2], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    /* The device may fuse multiply-adds the host does not: a looser tolerance. */
    expect_close("relaxed", got, want, N, 1e-4f);
    printf("own mutable command buffer: %d iterations, sum = %.2f, centre of first peak = %.3f\n", ITERATIONS, float_sum(got, N),
           got[0]);
    CHECK(release(r.buffer));
    return 0;
}
