/* Vector addition on an immediate command list: the queries a program makes first, device, host
 * and shared memory with their properties, a suggested group size, copies and a launch ordered by
 * barriers, and the host waiting on the last copy's event. */
#include "common.h"

#define N 1024

int main(void) {
    ze_env env = open_env();
    ze_device_properties_t device = {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    CHECK(zeDeviceGetProperties(env.device, &device));
    EXPECT(device.type == ZE_DEVICE_TYPE_GPU, "device type %d", device.type);
    ze_device_compute_properties_t compute = {ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    CHECK(zeDeviceGetComputeProperties(env.device, &compute));
    EXPECT(compute.maxTotalGroupSize >= 64, "max group size %u", compute.maxTotalGroupSize);
    uint32_t group_count = 0;
    CHECK(zeDeviceGetCommandQueueGroupProperties(env.device, &group_count, NULL));
    ze_command_queue_group_properties_t group = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
    group_count = 1;
    CHECK(zeDeviceGetCommandQueueGroupProperties(env.device, &group_count, &group));
    EXPECT(group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, "queue group 0 does not compute");

    ze_module_handle_t module = test_module(&env);
    ze_kernel_handle_t add = create_kernel(module, "vector_add");
    ze_kernel_properties_t kernel_properties = {ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    CHECK(zeKernelGetProperties(add, &kernel_properties));
    EXPECT(kernel_properties.numKernelArgs == 3, "vector_add has %u arguments", kernel_properties.numKernelArgs);
    char name[32];
    size_t name_size = sizeof name;
    CHECK(zeKernelGetName(add, &name_size, name));
    EXPECT(strcmp(name, "vector_add") == 0, "kernel name %s", name);

    float *a = host_alloc(&env, N * sizeof(float));
    float *b = shared_alloc(&env, N * sizeof(float));
    float *result = malloc(N * sizeof(float));
    float *device_a = device_alloc(&env, N * sizeof(float));
    float *device_c = device_alloc(&env, N * sizeof(float));
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }

    ze_memory_allocation_properties_t memory = {ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    ze_device_handle_t owner = NULL;
    CHECK(zeMemGetAllocProperties(env.context, device_a + 10, &memory, &owner));
    EXPECT(memory.type == ZE_MEMORY_TYPE_DEVICE && owner == env.device, "device memory is of type %d", memory.type);
    CHECK(zeMemGetAllocProperties(env.context, a, &memory, NULL));
    EXPECT(memory.type == ZE_MEMORY_TYPE_HOST, "host memory is of type %d", memory.type);
    CHECK(zeMemGetAllocProperties(env.context, b + N - 1, &memory, NULL));
    EXPECT(memory.type == ZE_MEMORY_TYPE_SHARED, "shared memory is of type %d", memory.type);
    CHECK(zeMemGetAllocProperties(env.context, result, &memory, NULL));
    EXPECT(memory.type == ZE_MEMORY_TYPE_UNKNOWN, "malloc'd memory is of type %d", memory.type);
    void *base = NULL;
    size_t size = 0;
    CHECK(zeMemGetAddressRange(env.context, (char *)device_c + 100, &base, &size));
    EXPECT(base == device_c && size == N * sizeof(float), "address range %p + %zu", base, size);

    ze_command_queue_desc_t queue = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreateImmediate(env.context, env.device, &queue, &list));
    uint32_t x, y, z;
    CHECK(zeKernelSuggestGroupSize(add, N, 1, 1, &x, &y, &z));
    EXPECT(x > 1 && N % x == 0 && y == 1 && z == 1, "suggested group size %u %u %u", x, y, z);
    CHECK(zeKernelSetGroupSize(add, x, y, z));
    set_pointer_arg(add, 0, device_a);
    set_pointer_arg(add, 1, b);
    set_pointer_arg(add, 2, device_c);
    ze_event_pool_handle_t pool = create_event_pool(&env, 1, 0);
    ze_event_handle_t done = create_event(pool, 0);
    ze_group_count_t launch = groups(N / x);
    CHECK(zeCommandListAppendMemoryCopy(list, device_a, a, N * sizeof(float), NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendLaunchKernel(list, add, &launch, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, result, device_c, N * sizeof(float), done, 0, NULL));
    CHECK(zeEventHostSynchronize(done, UINT64_MAX));
    for (int i = 0; i < N; i++) EXPECT(result[i] == 1.5f * (float)i, "c[%d] = %f", i, result[i]);

    CHECK(zeEventDestroy(done));
    CHECK(zeEventPoolDestroy(pool));
    CHECK(zeCommandListDestroy(list));
    CHECK(zeKernelDestroy(add));
    CHECK(zeModuleDestroy(module));
    void *allocations[] = {a, b, device_a, device_c};
    for (int i = 0; i < 4; i++) CHECK(zeMemFree(env.context, allocations[i]));
    free(result);
    CHECK(zeContextDestroy(env.context));
    return finish("vector_add");
}
