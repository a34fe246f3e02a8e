/* Work the shim does not record: a copy from another context's memory
 * (zeCommandListAppendMemoryCopyFromContext) after a kernel, on a synchronous immediate list. The
 * program runs unchanged; its trace is marked partial. */
#include "common.h"

#define N 64

int main(void) {
    ze_env env = open_env();
    ze_module_handle_t module = test_module(&env);
    ze_kernel_handle_t iota = create_kernel(module, "iota");
    int *values = shared_alloc(&env, N * sizeof(int));
    int *copied = shared_alloc(&env, N * sizeof(int));
    CHECK(zeKernelSetGroupSize(iota, 32, 1, 1));
    set_pointer_arg(iota, 0, values);
    set_int_arg(iota, 1, 5);
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreateImmediate(env.context, env.device, &desc, &list));
    ze_group_count_t launch = groups(N / 32);
    CHECK(zeCommandListAppendLaunchKernel(list, iota, &launch, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopyFromContext(list, copied, env.context, values, N * sizeof(int), NULL, 0, NULL));
    for (int i = 0; i < N; i++) EXPECT(copied[i] == 5 + i, "copied[%d] = %d", i, copied[i]);
    CHECK(zeCommandListDestroy(list));
    CHECK(zeMemFree(env.context, values));
    CHECK(zeMemFree(env.context, copied));
    CHECK(zeKernelDestroy(iota));
    CHECK(zeModuleDestroy(module));
    CHECK(zeContextDestroy(env.context));
    return finish("copy_from_context");
}
