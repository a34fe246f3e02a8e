/* Two immediate lists: an in-order one (spec 1.7's queue flag) fills and scales, signalling an
 * event; an out-of-order one adds the result once the event is signalled, and the host waits for
 * the add's event. */
#include "common.h"

#define N 256
/* ZE_COMMAND_QUEUE_FLAG_IN_ORDER (spec 1.7), not in the 1.4 headers. */
#define QUEUE_FLAG_IN_ORDER (1u << 1)

static ze_command_list_handle_t immediate(ze_env *env, ze_command_queue_flags_t flags) {
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, flags, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreateImmediate(env->context, env->device, &desc, &list));
    return list;
}

int main(void) {
    ze_env env = open_env();
    ze_module_handle_t module = test_module(&env);
    ze_kernel_handle_t scale = create_kernel(module, "scale");
    ze_kernel_handle_t add_into = create_kernel(module, "add_into");
    CHECK(zeKernelSetGroupSize(scale, 64, 1, 1));
    CHECK(zeKernelSetGroupSize(add_into, 64, 1, 1));
    int *x = device_alloc(&env, N * sizeof(int));
    int *acc = shared_alloc(&env, N * sizeof(int));
    for (int i = 0; i < N; i++) acc[i] = i;
    ze_event_pool_handle_t pool = create_event_pool(&env, 2, 0);
    ze_event_handle_t scaled = create_event(pool, 0);
    ze_event_handle_t added = create_event(pool, 1);

    ze_command_list_handle_t ordered = immediate(&env, QUEUE_FLAG_IN_ORDER);
    ze_command_list_handle_t unordered = immediate(&env, 0);
    int one = 1;
    ze_group_count_t all = groups(N / 64);
    CHECK(zeCommandListAppendMemoryFill(ordered, x, &one, sizeof one, N * sizeof(int), NULL, 0, NULL));
    set_pointer_arg(scale, 0, x);
    set_int_arg(scale, 1, 3);
    CHECK(zeCommandListAppendLaunchKernel(ordered, scale, &all, scaled, 0, NULL));
    set_pointer_arg(add_into, 0, x);
    set_pointer_arg(add_into, 1, acc);
    CHECK(zeCommandListAppendLaunchKernel(unordered, add_into, &all, added, 1, &scaled));
    CHECK(zeEventHostSynchronize(added, UINT64_MAX));
    for (int i = 0; i < N; i++) EXPECT(acc[i] == i + 3, "acc[%d] = %d", i, acc[i]);

    CHECK(zeCommandListDestroy(ordered));
    CHECK(zeCommandListDestroy(unordered));
    CHECK(zeEventDestroy(scaled));
    CHECK(zeEventDestroy(added));
    CHECK(zeEventPoolDestroy(pool));
    CHECK(zeMemFree(env.context, x));
    CHECK(zeMemFree(env.context, acc));
    CHECK(zeKernelDestroy(scale));
    CHECK(zeKernelDestroy(add_into));
    CHECK(zeModuleDestroy(module));
    CHECK(zeContextDestroy(env.context));
    return finish("event_chain");
}
