/* Shared by the Level Zero test programs: error checks, the first driver and device, a context,
 * and modules from the SPIR-V file $REPRISE_TEST_SPIRV (tests/level_zero/kernels.cl, compiled).
 * They are ordinary programs against libze-dev's headers (spec 1.4), linked with -lze_loader. */
#ifndef REPRISE_ZE_COMMON_H
#define REPRISE_ZE_COMMON_H
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        ze_result_t result_ = (call);                                        \
        if (result_ != ZE_RESULT_SUCCESS) {                                  \
            fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__,  \
                    #call, (unsigned)result_);                               \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

/* Counts a wrong value; programs exit 1 when any was seen. */
static int failures = 0;
#define EXPECT(condition, ...)                                               \
    do {                                                                     \
        if (!(condition)) {                                                  \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            failures++;                                                      \
        }                                                                    \
    } while (0)

typedef struct {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
} ze_env;

static inline ze_env open_env(void) {
    ze_env env;
    CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    CHECK(zeDriverGet(&count, &env.driver));
    count = 1;
    CHECK(zeDeviceGet(env.driver, &count, &env.device));
    ze_context_desc_t desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CHECK(zeContextCreate(env.driver, &desc, &env.context));
    return env;
}

static inline unsigned char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    rewind(file);
    unsigned char *bytes = malloc(*size);
    if (fread(bytes, 1, *size, file) != *size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(file);
    return bytes;
}

/* Builds a module from bytes of `format`; prints the build log and exits on failure. */
static inline ze_module_handle_t build_module(ze_env *env, ze_module_format_t format, const unsigned char *bytes, size_t size) {
    ze_module_desc_t desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, format, size, bytes, "", NULL};
    ze_module_handle_t module;
    ze_module_build_log_handle_t log;
    ze_result_t result = zeModuleCreate(env->context, env->device, &desc, &module, &log);
    if (result != ZE_RESULT_SUCCESS) {
        size_t length = 0;
        zeModuleBuildLogGetString(log, &length, NULL);
        char *text = malloc(length);
        zeModuleBuildLogGetString(log, &length, text);
        fprintf(stderr, "zeModuleCreate failed: 0x%x\n%s\n", (unsigned)result, text);
        exit(2);
    }
    CHECK(zeModuleBuildLogDestroy(log));
    return module;
}

/* The test kernels, from $REPRISE_TEST_SPIRV. */
static inline ze_module_handle_t test_module(ze_env *env) {
    const char *path = getenv("REPRISE_TEST_SPIRV");
    if (path == NULL) {
        fprintf(stderr, "REPRISE_TEST_SPIRV (the compiled tests/level_zero/kernels.cl) is not set\n");
        exit(2);
    }
    size_t size;
    unsigned char *bytes = read_file(path, &size);
    ze_module_handle_t module = build_module(env, ZE_MODULE_FORMAT_IL_SPIRV, bytes, size);
    free(bytes);
    return module;
}

static inline ze_kernel_handle_t create_kernel(ze_module_handle_t module, const char *name) {
    ze_kernel_desc_t desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t kernel;
    CHECK(zeKernelCreate(module, &desc, &kernel));
    return kernel;
}

static inline void *device_alloc(ze_env *env, size_t size) {
    ze_device_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    void *pointer;
    CHECK(zeMemAllocDevice(env->context, &desc, size, 64, env->device, &pointer));
    return pointer;
}

static inline void *host_alloc(ze_env *env, size_t size) {
    ze_host_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *pointer;
    CHECK(zeMemAllocHost(env->context, &desc, size, 64, &pointer));
    return pointer;
}

static inline void *shared_alloc(ze_env *env, size_t size) {
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *pointer;
    CHECK(zeMemAllocShared(env->context, &device_desc, &host_desc, size, 64, env->device, &pointer));
    return pointer;
}

static inline ze_command_queue_handle_t create_queue(ze_env *env, ze_command_queue_mode_t mode) {
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue;
    CHECK(zeCommandQueueCreate(env->context, env->device, &desc, &queue));
    return queue;
}

static inline ze_command_list_handle_t create_list(ze_env *env, ze_command_list_flags_t flags, const void *next) {
    ze_command_list_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, next, 0, flags};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreate(env->context, env->device, &desc, &list));
    return list;
}

static inline ze_event_pool_handle_t create_event_pool(ze_env *env, uint32_t count, ze_event_pool_flags_t flags) {
    ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, flags | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, count};
    ze_event_pool_handle_t pool;
    CHECK(zeEventPoolCreate(env->context, &desc, 1, &env->device, &pool));
    return pool;
}

static inline ze_event_handle_t create_event(ze_event_pool_handle_t pool, uint32_t index) {
    ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event;
    CHECK(zeEventCreate(pool, &desc, &event));
    return event;
}

static inline void set_pointer_arg(ze_kernel_handle_t kernel, uint32_t index, const void *pointer) {
    CHECK(zeKernelSetArgumentValue(kernel, index, sizeof pointer, &pointer));
}

static inline void set_int_arg(ze_kernel_handle_t kernel, uint32_t index, int value) {
    CHECK(zeKernelSetArgumentValue(kernel, index, sizeof value, &value));
}

static inline ze_group_count_t groups(uint32_t x) {
    ze_group_count_t count = {x, 1, 1};
    return count;
}

static inline int finish(const char *name) {
    if (failures > 0) {
        fprintf(stderr, "%s: %d wrong values\n", name, failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}
#endif
