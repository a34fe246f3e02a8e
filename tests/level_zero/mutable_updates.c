/* A regular list replayed with changed kernel arguments and group counts and sizes: updated in
 * place through ZE_experimental_mutable_command_list where the driver offers it (its types are not
 * in the 1.4 headers: declared here from the specification), rebuilt where it does not. Prints
 * which way it went. */
#include "common.h"

#define N 256
#define ROUNDS 4

/* ZE_experimental_mutable_command_list 1.0, from the specification (1.9). */
#define STYPE_MUTABLE_COMMAND_LIST_EXP_DESC ((ze_structure_type_t)0x00020016)
#define STYPE_MUTABLE_COMMAND_ID_EXP_DESC ((ze_structure_type_t)0x00020017)
#define STYPE_MUTABLE_COMMANDS_EXP_DESC ((ze_structure_type_t)0x00020018)
#define STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC ((ze_structure_type_t)0x00020019)
#define STYPE_MUTABLE_GROUP_COUNT_EXP_DESC ((ze_structure_type_t)0x0002001A)
#define STYPE_MUTABLE_GROUP_SIZE_EXP_DESC ((ze_structure_type_t)0x0002001B)
typedef struct { ze_structure_type_t stype; const void *pNext; uint32_t flags; } mutable_command_list_desc;
typedef struct { ze_structure_type_t stype; const void *pNext; uint32_t flags; } mutable_command_id_desc;
typedef struct { ze_structure_type_t stype; const void *pNext; uint32_t flags; } mutable_commands_desc;
typedef struct { ze_structure_type_t stype; const void *pNext; uint64_t commandId; uint32_t argIndex; size_t argSize; const void *pArgValue; } mutable_argument_desc;
typedef struct { ze_structure_type_t stype; const void *pNext; uint64_t commandId; const ze_group_count_t *pGroupCount; } mutable_group_count_desc;
typedef struct { ze_structure_type_t stype; const void *pNext; uint64_t commandId; uint32_t groupSizeX, groupSizeY, groupSizeZ; } mutable_group_size_desc;
typedef ze_result_t (*next_command_id_fn)(ze_command_list_handle_t, const mutable_command_id_desc *, uint64_t *);
typedef ze_result_t (*update_commands_fn)(ze_command_list_handle_t, const mutable_commands_desc *);

/* Round r writes base 100*r into `targets[r % 2]` over (r + 1) * 32 items, in groups of 32 or, in
 * odd rounds, 16; then scales the other buffer by r + 2. */
typedef struct {
    int *target, *other;
    int base, factor;
    uint32_t group_size, group_count;
} round_t;

static round_t round_of(int r, int *targets[2]) {
    round_t round = {targets[r % 2], targets[1 - r % 2], 100 * r, r + 2, r % 2 ? 16 : 32, 0};
    round.group_count = (uint32_t)(r + 1) * 32 / round.group_size;
    return round;
}

static void append_round(ze_command_list_handle_t list, ze_kernel_handle_t iota, ze_kernel_handle_t scale, const round_t *round,
                         next_command_id_fn next_id, uint64_t ids[2]) {
    mutable_command_id_desc id_desc = {STYPE_MUTABLE_COMMAND_ID_EXP_DESC, NULL, 0};
    CHECK(zeKernelSetGroupSize(iota, round->group_size, 1, 1));
    set_pointer_arg(iota, 0, round->target);
    set_int_arg(iota, 1, round->base);
    ze_group_count_t count = groups(round->group_count);
    if (next_id) CHECK(next_id(list, &id_desc, &ids[0]));
    CHECK(zeCommandListAppendLaunchKernel(list, iota, &count, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    set_pointer_arg(scale, 0, round->other);
    set_int_arg(scale, 1, round->factor);
    ze_group_count_t all = groups(N / 32);
    if (next_id) CHECK(next_id(list, &id_desc, &ids[1]));
    CHECK(zeCommandListAppendLaunchKernel(list, scale, &all, NULL, 0, NULL));
    CHECK(zeCommandListClose(list));
}

int main(void) {
    ze_env env = open_env();
    ze_module_handle_t module = test_module(&env);
    ze_kernel_handle_t iota = create_kernel(module, "iota");
    ze_kernel_handle_t scale = create_kernel(module, "scale");
    CHECK(zeKernelSetGroupSize(scale, 32, 1, 1));
    int *targets[2] = {shared_alloc(&env, N * sizeof(int)), shared_alloc(&env, N * sizeof(int))};
    int expected[2][N];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < N; i++) targets[b][i] = expected[b][i] = -1;

    next_command_id_fn next_id = NULL;
    update_commands_fn update = NULL;
    if (zeDriverGetExtensionFunctionAddress(env.driver, "zeCommandListGetNextCommandIdExp", (void **)&next_id) != ZE_RESULT_SUCCESS ||
        zeDriverGetExtensionFunctionAddress(env.driver, "zeCommandListUpdateMutableCommandsExp", (void **)&update) != ZE_RESULT_SUCCESS) {
        next_id = NULL;
        update = NULL;
    }
    mutable_command_list_desc mutable_desc = {STYPE_MUTABLE_COMMAND_LIST_EXP_DESC, NULL, 0};
    ze_command_list_handle_t list = create_list(&env, 0, update ? &mutable_desc : NULL);
    ze_command_queue_handle_t queue = create_queue(&env, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    uint64_t ids[2];
    round_t first = round_of(0, targets);
    append_round(list, iota, scale, &first, next_id, ids);
    for (int r = 0; r < ROUNDS; r++) {
        round_t round = round_of(r, targets);
        if (r > 0 && update) {
            mutable_argument_desc target = {STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC, NULL, ids[0], 0, sizeof(int *), &round.target};
            mutable_argument_desc base = {STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC, &target, ids[0], 1, sizeof(int), &round.base};
            ze_group_count_t count = groups(round.group_count);
            mutable_group_count_desc group_count = {STYPE_MUTABLE_GROUP_COUNT_EXP_DESC, &base, ids[0], &count};
            mutable_group_size_desc group_size = {STYPE_MUTABLE_GROUP_SIZE_EXP_DESC, &group_count, ids[0], round.group_size, 1, 1};
            mutable_argument_desc other = {STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC, &group_size, ids[1], 0, sizeof(int *), &round.other};
            mutable_argument_desc factor = {STYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC, &other, ids[1], 1, sizeof(int), &round.factor};
            mutable_commands_desc commands = {STYPE_MUTABLE_COMMANDS_EXP_DESC, &factor, 0};
            CHECK(update(list, &commands));
            CHECK(zeCommandListClose(list));
        } else if (r > 0) {
            CHECK(zeCommandListReset(list));
            append_round(list, iota, scale, &round, NULL, ids);
        }
        CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
        int written = r % 2;
        for (uint32_t i = 0; i < round.group_count * round.group_size; i++) expected[written][i] = round.base + (int)i;
        for (int i = 0; i < N; i++) expected[1 - written][i] *= round.factor;
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < N; i++) EXPECT(targets[b][i] == expected[b][i], "round %d: buffer %d [%d] = %d, not %d", r, b, i, targets[b][i], expected[b][i]);
    }
    printf("updates: %s\n", update ? "native" : "rebuilt");

    CHECK(zeCommandListDestroy(list));
    CHECK(zeCommandQueueDestroy(queue));
    for (int b = 0; b < 2; b++) CHECK(zeMemFree(env.context, targets[b]));
    CHECK(zeKernelDestroy(iota));
    CHECK(zeKernelDestroy(scale));
    CHECK(zeModuleDestroy(module));
    CHECK(zeContextDestroy(env.context));
    return finish("mutable_updates");
}
