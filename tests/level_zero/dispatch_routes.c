/* Reaches Level Zero without linking it, as runtimes do: the loader opened with dlopen, its
 * functions found with dlsym, and (with REPRISE_TEST_ROUTE=table) the command list and queue functions
 * taken from the loader's dispatch tables (zeGetCommandListProcAddrTable, as SYCL's Unified Runtime
 * and Intel's PTI do) instead of by name. A regular list: iota into shared memory, a barrier, a
 * scale, executed on a queue and waited for. */
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define CHECK(call)                                                                              \
    do {                                                                                         \
        ze_result_t result_ = (call);                                                            \
        if (result_ != ZE_RESULT_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__, #call, (unsigned)result_); \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)

static void *loader;

static void *find(const char *name) {
    void *function = dlsym(loader, name);
    if (function == NULL) {
        fprintf(stderr, "the loader has no %s\n", name);
        exit(2);
    }
    return function;
}

#define FIND(name) name##_t name = (name##_t)find(#name)
typedef ze_result_t (*zeInit_t)(ze_init_flags_t);
typedef ze_result_t (*zeDriverGet_t)(uint32_t *, ze_driver_handle_t *);
typedef ze_result_t (*zeDeviceGet_t)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
typedef ze_result_t (*zeContextCreate_t)(ze_driver_handle_t, const ze_context_desc_t *, ze_context_handle_t *);
typedef ze_result_t (*zeMemAllocShared_t)(ze_context_handle_t, const ze_device_mem_alloc_desc_t *, const ze_host_mem_alloc_desc_t *, size_t, size_t, ze_device_handle_t, void **);
typedef ze_result_t (*zeMemFree_t)(ze_context_handle_t, void *);
typedef ze_result_t (*zeModuleCreate_t)(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t *, ze_module_handle_t *, ze_module_build_log_handle_t *);
typedef ze_result_t (*zeKernelCreate_t)(ze_module_handle_t, const ze_kernel_desc_t *, ze_kernel_handle_t *);
typedef ze_result_t (*zeKernelSetGroupSize_t)(ze_kernel_handle_t, uint32_t, uint32_t, uint32_t);
typedef ze_result_t (*zeKernelSetArgumentValue_t)(ze_kernel_handle_t, uint32_t, size_t, const void *);

int main(void) {
    const char *route = getenv("REPRISE_TEST_ROUTE");
    int through_tables = route != NULL && strcmp(route, "table") == 0;
    loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (loader == NULL) {
        fprintf(stderr, "no Level Zero loader: %s\n", dlerror());
        return 2;
    }
    FIND(zeInit);
    FIND(zeDriverGet);
    FIND(zeDeviceGet);
    FIND(zeContextCreate);
    FIND(zeMemAllocShared);
    FIND(zeMemFree);
    FIND(zeModuleCreate);
    FIND(zeKernelCreate);
    FIND(zeKernelSetGroupSize);
    FIND(zeKernelSetArgumentValue);

    CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    /* The loader gives its tables once initialized. */
    ze_command_list_dditable_t lists;
    ze_command_queue_dditable_t queues;
    if (through_tables) {
        CHECK(((ze_pfnGetCommandListProcAddrTable_t)find("zeGetCommandListProcAddrTable"))(ZE_API_VERSION_CURRENT, &lists));
        CHECK(((ze_pfnGetCommandQueueProcAddrTable_t)find("zeGetCommandQueueProcAddrTable"))(ZE_API_VERSION_CURRENT, &queues));
    } else {
        lists.pfnCreate = (ze_pfnCommandListCreate_t)find("zeCommandListCreate");
        lists.pfnAppendLaunchKernel = (ze_pfnCommandListAppendLaunchKernel_t)find("zeCommandListAppendLaunchKernel");
        lists.pfnAppendBarrier = (ze_pfnCommandListAppendBarrier_t)find("zeCommandListAppendBarrier");
        lists.pfnClose = (ze_pfnCommandListClose_t)find("zeCommandListClose");
        lists.pfnDestroy = (ze_pfnCommandListDestroy_t)find("zeCommandListDestroy");
        queues.pfnCreate = (ze_pfnCommandQueueCreate_t)find("zeCommandQueueCreate");
        queues.pfnExecuteCommandLists = (ze_pfnCommandQueueExecuteCommandLists_t)find("zeCommandQueueExecuteCommandLists");
        queues.pfnSynchronize = (ze_pfnCommandQueueSynchronize_t)find("zeCommandQueueSynchronize");
        queues.pfnDestroy = (ze_pfnCommandQueueDestroy_t)find("zeCommandQueueDestroy");
    }

    ze_driver_handle_t driver;
    ze_device_handle_t device;
    uint32_t count = 1;
    CHECK(zeDriverGet(&count, &driver));
    count = 1;
    CHECK(zeDeviceGet(driver, &count, &device));
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t context;
    CHECK(zeContextCreate(driver, &context_desc, &context));

    const char *path = getenv("REPRISE_TEST_SPIRV");
    FILE *file = path != NULL ? fopen(path, "rb") : NULL;
    if (file == NULL) {
        fprintf(stderr, "REPRISE_TEST_SPIRV (the compiled kernels.cl) cannot be read\n");
        return 2;
    }
    fseek(file, 0, SEEK_END);
    size_t size = (size_t)ftell(file);
    rewind(file);
    unsigned char *spirv = malloc(size);
    if (fread(spirv, 1, size, file) != size) return 2;
    fclose(file);
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, spirv, "", NULL};
    ze_module_handle_t module;
    CHECK(zeModuleCreate(context, device, &module_desc, &module, NULL));
    ze_kernel_desc_t iota_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "iota"};
    ze_kernel_desc_t scale_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "scale"};
    ze_kernel_handle_t iota, scale;
    CHECK(zeKernelCreate(module, &iota_desc, &iota));
    CHECK(zeKernelCreate(module, &scale_desc, &scale));

    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    int *values;
    CHECK(zeMemAllocShared(context, &device_desc, &host_desc, N * sizeof(int), 64, device, (void **)&values));
    int base = 7, factor = 3;
    CHECK(zeKernelSetGroupSize(iota, 32, 1, 1));
    CHECK(zeKernelSetGroupSize(scale, 32, 1, 1));
    CHECK(zeKernelSetArgumentValue(iota, 0, sizeof values, &values));
    CHECK(zeKernelSetArgumentValue(iota, 1, sizeof base, &base));
    CHECK(zeKernelSetArgumentValue(scale, 0, sizeof values, &values));
    CHECK(zeKernelSetArgumentValue(scale, 1, sizeof factor, &factor));

    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue;
    CHECK(queues.pfnCreate(context, device, &queue_desc, &queue));
    ze_command_list_desc_t list_desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
    ze_command_list_handle_t list;
    CHECK(lists.pfnCreate(context, device, &list_desc, &list));
    ze_group_count_t groups = {N / 32, 1, 1};
    CHECK(lists.pfnAppendLaunchKernel(list, iota, &groups, NULL, 0, NULL));
    CHECK(lists.pfnAppendBarrier(list, NULL, 0, NULL));
    CHECK(lists.pfnAppendLaunchKernel(list, scale, &groups, NULL, 0, NULL));
    CHECK(lists.pfnClose(list));
    CHECK(queues.pfnExecuteCommandLists(queue, 1, &list, NULL));
    CHECK(queues.pfnSynchronize(queue, UINT64_MAX));
    int failures = 0;
    for (int i = 0; i < N; i++) failures += values[i] != 3 * (7 + i);

    CHECK(lists.pfnDestroy(list));
    CHECK(queues.pfnDestroy(queue));
    CHECK(zeMemFree(context, values));
    free(spirv);
    if (failures > 0) {
        fprintf(stderr, "%d wrong values\n", failures);
        return 1;
    }
    printf("dispatch_routes (%s): ok\n", through_tables ? "table" : "dlsym");
    return 0;
}
