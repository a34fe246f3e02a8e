/* Modules beyond SPIR-V in, kernels out: the driver's native binary of a module built from SPIR-V
 * builds a module too (and is written to $REPRISE_TEST_NATIVE_OUT when set, for traces of native
 * programs), bytes that are no module are refused, the kernel names are listed, and a launch at a
 * global offset (ZE_experimental_global_offset) writes where it should. */
#include "common.h"

#define N 128

int main(void) {
    ze_env env = open_env();
    ze_module_handle_t module = test_module(&env);
    uint32_t count = 0;
    CHECK(zeModuleGetKernelNames(module, &count, NULL));
    const char *names[16];
    EXPECT(count == 5, "%u kernels", count);
    count = count > 16 ? 16 : count;
    CHECK(zeModuleGetKernelNames(module, &count, names));
    int found = 0;
    for (uint32_t i = 0; i < count; i++) found += strcmp(names[i], "iota") == 0;
    EXPECT(found == 1, "iota is not among the kernel names");

    size_t size = 0;
    CHECK(zeModuleGetNativeBinary(module, &size, NULL));
    unsigned char *binary = malloc(size);
    CHECK(zeModuleGetNativeBinary(module, &size, binary));
    ze_module_handle_t native = build_module(&env, ZE_MODULE_FORMAT_NATIVE, binary, size);
    const char *out_path = getenv("REPRISE_TEST_NATIVE_OUT");
    if (out_path != NULL) {
        FILE *out_file = fopen(out_path, "wb");
        if (out_file == NULL || fwrite(binary, 1, size, out_file) != size || fclose(out_file) != 0) {
            fprintf(stderr, "cannot write %s\n", out_path);
            return 2;
        }
    }

    ze_module_desc_t bad = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, 8, (const uint8_t *)"garbage!", "", NULL};
    ze_module_handle_t unused;
    EXPECT(zeModuleCreate(env.context, env.device, &bad, &unused, NULL) == ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "garbage is a native binary");

    /* iota from the native module, over items 16..N-1 of a launch at global offset 16. */
    ze_kernel_handle_t iota = create_kernel(native, "iota");
    int *out = shared_alloc(&env, N * sizeof(int));
    for (int i = 0; i < N; i++) out[i] = -1;
    CHECK(zeKernelSetGroupSize(iota, 16, 1, 1));
    CHECK(zeKernelSetGlobalOffsetExp(iota, 16, 0, 0));
    set_pointer_arg(iota, 0, out);
    set_int_arg(iota, 1, 1000);
    ze_command_queue_desc_t synchronous = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreateImmediate(env.context, env.device, &synchronous, &list));
    ze_group_count_t launch = groups((N - 16) / 16);
    CHECK(zeCommandListAppendLaunchKernel(list, iota, &launch, NULL, 0, NULL));
    for (int i = 0; i < N; i++) EXPECT(out[i] == (i < 16 ? -1 : 1000 + i), "out[%d] = %d", i, out[i]);

    CHECK(zeCommandListDestroy(list));
    CHECK(zeKernelDestroy(iota));
    CHECK(zeMemFree(env.context, out));
    CHECK(zeModuleDestroy(native));
    CHECK(zeModuleDestroy(module));
    free(binary);
    CHECK(zeContextDestroy(env.context));
    return finish("modules");
}
