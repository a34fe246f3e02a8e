/* Regular command lists executed several times: out-of-order lists ordered by barriers, an event
 * from a list on one queue to a list on another, fences, an in-order list (spec 1.7's flag) without
 * barriers, a list waiting for an event the host signals, kernel timestamps, local memory, and a
 * synchronous queue. */
#include "common.h"

#define N 256
#define ROUNDS 3
/* ZE_COMMAND_LIST_FLAG_IN_ORDER (spec 1.7), not in the 1.4 headers. */
#define LIST_FLAG_IN_ORDER (1u << 3)

static void sync_fence(ze_fence_handle_t fence) {
    CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
    CHECK(zeFenceReset(fence));
}

int main(void) {
    ze_env env = open_env();
    ze_module_handle_t module = test_module(&env);
    ze_kernel_handle_t scale = create_kernel(module, "scale");
    ze_kernel_handle_t add_into = create_kernel(module, "add_into");
    ze_kernel_handle_t iota = create_kernel(module, "iota");
    ze_kernel_handle_t group_sums = create_kernel(module, "group_sums");
    CHECK(zeKernelSetGroupSize(scale, 64, 1, 1));
    CHECK(zeKernelSetGroupSize(add_into, 64, 1, 1));
    CHECK(zeKernelSetGroupSize(iota, 64, 1, 1));
    ze_group_count_t all = groups(N / 64);

    int *x = device_alloc(&env, N * sizeof(int));
    int *acc = shared_alloc(&env, N * sizeof(int));
    int *acc2 = shared_alloc(&env, N * sizeof(int));
    int *ordered = device_alloc(&env, N * sizeof(int));
    int *acc3 = shared_alloc(&env, N * sizeof(int));
    memset(acc, 0, N * sizeof(int));
    memset(acc2, 0, N * sizeof(int));
    memset(acc3, 0, N * sizeof(int));

    ze_command_queue_handle_t first = create_queue(&env, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_queue_handle_t second = create_queue(&env, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence;
    CHECK(zeFenceCreate(first, &fence_desc, &fence));
    ze_event_pool_handle_t pool = create_event_pool(&env, 4, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    ze_event_handle_t produced = create_event(pool, 0);
    ze_event_handle_t host = create_event(pool, 1);
    ze_event_handle_t timed = create_event(pool, 2);

    /* A: x = 1; x *= 3; acc += x, signalling `produced`; ordered by barriers only. */
    ze_command_list_handle_t a = create_list(&env, 0, NULL);
    int one = 1;
    CHECK(zeCommandListAppendMemoryFill(a, x, &one, sizeof one, N * sizeof(int), NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(a, NULL, 0, NULL));
    set_pointer_arg(scale, 0, x);
    set_int_arg(scale, 1, 3);
    CHECK(zeCommandListAppendLaunchKernel(a, scale, &all, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(a, NULL, 0, NULL));
    set_pointer_arg(add_into, 0, x);
    set_pointer_arg(add_into, 1, acc);
    CHECK(zeCommandListAppendLaunchKernel(a, add_into, &all, produced, 0, NULL));
    CHECK(zeCommandListClose(a));
    /* B, on the other queue: acc2 += x once A signalled `produced`, then resets it. */
    ze_command_list_handle_t b = create_list(&env, 0, NULL);
    set_pointer_arg(add_into, 1, acc2);
    CHECK(zeCommandListAppendLaunchKernel(b, add_into, &all, NULL, 1, &produced));
    CHECK(zeCommandListAppendBarrier(b, NULL, 0, NULL));
    CHECK(zeCommandListAppendEventReset(b, produced));
    CHECK(zeCommandListClose(b));
    /* The arguments set after appending do not change what A holds. */
    set_int_arg(scale, 1, 1000);
    for (int round = 0; round < ROUNDS; round++) {
        /* B is submitted first: it waits on the device for A's event. */
        CHECK(zeCommandQueueExecuteCommandLists(second, 1, &b, NULL));
        CHECK(zeCommandQueueExecuteCommandLists(first, 1, &a, fence));
        sync_fence(fence);
        CHECK(zeCommandQueueSynchronize(second, UINT64_MAX));
    }
    for (int i = 0; i < N; i++) {
        EXPECT(acc[i] == 3 * ROUNDS, "acc[%d] = %d", i, acc[i]);
        EXPECT(acc2[i] == 3 * ROUNDS, "acc2[%d] = %d", i, acc2[i]);
    }
    EXPECT(zeEventQueryStatus(produced) == ZE_RESULT_NOT_READY, "B reset the event it waited for");

    /* In order without barriers: ordered = i; ordered *= 2; acc3 += ordered; the last is timed. */
    ze_command_list_handle_t in_order = create_list(&env, LIST_FLAG_IN_ORDER, NULL);
    set_pointer_arg(iota, 0, ordered);
    set_int_arg(iota, 1, 0);
    CHECK(zeCommandListAppendLaunchKernel(in_order, iota, &all, NULL, 0, NULL));
    set_pointer_arg(scale, 0, ordered);
    set_int_arg(scale, 1, 2);
    CHECK(zeCommandListAppendLaunchKernel(in_order, scale, &all, NULL, 0, NULL));
    set_pointer_arg(add_into, 0, ordered);
    set_pointer_arg(add_into, 1, acc3);
    CHECK(zeCommandListAppendLaunchKernel(in_order, add_into, &all, timed, 0, NULL));
    CHECK(zeCommandListClose(in_order));
    for (int round = 0; round < ROUNDS; round++) {
        CHECK(zeCommandQueueExecuteCommandLists(first, 1, &in_order, fence));
        sync_fence(fence);
    }
    for (int i = 0; i < N; i++) EXPECT(acc3[i] == 2 * i * ROUNDS, "acc3[%d] = %d", i, acc3[i]);
    ze_kernel_timestamp_result_t time;
    CHECK(zeEventQueryKernelTimestamp(timed, &time));
    EXPECT(time.global.kernelEnd >= time.global.kernelStart && time.global.kernelStart > 0, "timestamps %llu..%llu",
           (unsigned long long)time.global.kernelStart, (unsigned long long)time.global.kernelEnd);

    /* A list that waits for the host: nothing runs until the host signals. */
    ze_command_list_handle_t gated = create_list(&env, 0, NULL);
    set_pointer_arg(scale, 0, acc);
    set_int_arg(scale, 1, 5);
    CHECK(zeCommandListAppendLaunchKernel(gated, scale, &all, NULL, 1, &host));
    CHECK(zeCommandListClose(gated));
    CHECK(zeCommandQueueExecuteCommandLists(second, 1, &gated, NULL));
    EXPECT(zeCommandQueueSynchronize(second, 1000000) == ZE_RESULT_NOT_READY, "the gated list ran before the host signal");
    EXPECT(acc[0] == 3 * ROUNDS, "acc changed before the host signal: %d", acc[0]);
    CHECK(zeEventHostSignal(host));
    CHECK(zeCommandQueueSynchronize(second, UINT64_MAX));
    for (int i = 0; i < N; i++) EXPECT(acc[i] == 15 * ROUNDS, "acc[%d] = %d after the gated list", i, acc[i]);
    CHECK(zeEventHostReset(host));
    EXPECT(zeEventQueryStatus(host) == ZE_RESULT_NOT_READY, "a reset event is not signalled");

    /* Local memory, on a synchronous queue: done when the call returns. */
    ze_command_queue_handle_t synchronous = create_queue(&env, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_command_list_handle_t sums = create_list(&env, 0, NULL);
    int *in = shared_alloc(&env, N * sizeof(int));
    int *out = shared_alloc(&env, (N / 32) * sizeof(int));
    for (int i = 0; i < N; i++) in[i] = i;
    CHECK(zeKernelSetGroupSize(group_sums, 32, 1, 1));
    set_pointer_arg(group_sums, 0, in);
    set_pointer_arg(group_sums, 1, out);
    CHECK(zeKernelSetArgumentValue(group_sums, 2, 32 * sizeof(int), NULL));
    ze_group_count_t eight = groups(N / 32);
    CHECK(zeCommandListAppendLaunchKernel(sums, group_sums, &eight, NULL, 0, NULL));
    CHECK(zeCommandListClose(sums));
    CHECK(zeCommandQueueExecuteCommandLists(synchronous, 1, &sums, NULL));
    for (int g = 0; g < N / 32; g++) EXPECT(out[g] == 32 * 32 * g + 31 * 16, "group %d summed %d", g, out[g]);

    ze_command_list_handle_t lists[] = {a, b, in_order, gated, sums};
    for (int i = 0; i < 5; i++) CHECK(zeCommandListDestroy(lists[i]));
    ze_command_queue_handle_t queues[] = {first, second, synchronous};
    CHECK(zeFenceDestroy(fence));
    for (int i = 0; i < 3; i++) CHECK(zeCommandQueueDestroy(queues[i]));
    ze_event_handle_t events[] = {produced, host, timed};
    for (int i = 0; i < 3; i++) CHECK(zeEventDestroy(events[i]));
    CHECK(zeEventPoolDestroy(pool));
    void *allocations[] = {x, acc, acc2, ordered, acc3, in, out};
    for (int i = 0; i < 7; i++) CHECK(zeMemFree(env.context, allocations[i]));
    ze_kernel_handle_t kernels[] = {scale, add_into, iota, group_sums};
    for (int i = 0; i < 4; i++) CHECK(zeKernelDestroy(kernels[i]));
    CHECK(zeModuleDestroy(module));
    CHECK(zeContextDestroy(env.context));
    return finish("regular_lists");
}
