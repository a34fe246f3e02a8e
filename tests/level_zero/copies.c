/* Copies and fills in a regular command list: linear copies between malloc'd, host, device and
 * shared memory, fills with patterns of 1 to 16 bytes, and 2D and 3D region copies between pitched
 * layouts; each checked against the same work done on the host. */
#include "common.h"

#define N 512
#define WIDTH 16  /* ints per row of the source matrix */
#define ROWS 8
#define SLICES 3

/* Copies the region (x, y, z bytes/rows/slices; width bytes, height rows, depth slices) as the
 * device must, for the expected result. */
static void copy_region(unsigned char *dst, const ze_copy_region_t *d, size_t dst_pitch, size_t dst_slice,
                        const unsigned char *src, const ze_copy_region_t *s, size_t src_pitch, size_t src_slice) {
    for (uint32_t z = 0; z < s->depth; z++)
        for (uint32_t y = 0; y < s->height; y++)
            memcpy(dst + (d->originZ + z) * dst_slice + (d->originY + y) * dst_pitch + d->originX,
                   src + (s->originZ + z) * src_slice + (s->originY + y) * src_pitch + s->originX, s->width);
}

int main(void) {
    ze_env env = open_env();
    ze_command_queue_handle_t queue = create_queue(&env, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_list_handle_t list = create_list(&env, 0, NULL);

    /* Linear: malloc -> device -> shared -> host -> malloc. */
    int *source = malloc(N * sizeof(int));
    int *back = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) source[i] = i * 7 - 3;
    int *device = device_alloc(&env, N * sizeof(int));
    int *shared = shared_alloc(&env, N * sizeof(int));
    int *host = host_alloc(&env, N * sizeof(int));
    CHECK(zeCommandListAppendMemoryCopy(list, device, source, N * sizeof(int), NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, shared, device, N * sizeof(int), NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, host, shared, N * sizeof(int), NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, back, host + 8, (N - 8) * sizeof(int), NULL, 0, NULL));

    /* Fills: 1, 2, 4, 8 and 16-byte patterns into disjoint parts of one allocation. */
    unsigned char *filled = device_alloc(&env, 5 * 64);
    unsigned char patterns[16];
    for (int i = 0; i < 16; i++) patterns[i] = (unsigned char)(0xa0 + i);
    for (int k = 0; k < 5; k++) {
        size_t size = (size_t)1 << k;
        CHECK(zeCommandListAppendMemoryFill(list, filled + k * 64, patterns, size, 64, NULL, 0, NULL));
    }
    unsigned char *filled_back = malloc(5 * 64);
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK(zeCommandListAppendMemoryCopy(list, filled_back, filled, 5 * 64, NULL, 0, NULL));

    /* Regions: a 3D source of SLICES x ROWS x WIDTH ints; a 2D block of it into a 48-byte-pitched
     * device matrix, and a 3D block into malloc'd memory with its own pitches. */
    size_t src_pitch = WIDTH * sizeof(int), src_slice = ROWS * src_pitch;
    unsigned char *volume = malloc(SLICES * src_slice);
    for (size_t i = 0; i < SLICES * src_slice; i++) volume[i] = (unsigned char)(i * 13 + 5);
    unsigned char *device_volume = device_alloc(&env, SLICES * src_slice);
    ze_copy_region_t whole = {0, 0, 0, (uint32_t)src_pitch, ROWS, SLICES};
    CHECK(zeCommandListAppendMemoryCopyRegion(list, device_volume, &whole, src_pitch, src_slice, volume, &whole, src_pitch, src_slice, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    size_t plane_pitch = 48;
    unsigned char *plane = device_alloc(&env, plane_pitch * ROWS);
    CHECK(zeCommandListAppendMemoryFill(list, plane, patterns, 1, plane_pitch * ROWS, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    ze_copy_region_t block_src = {8, 2, 1, 12, 4, 1}, block_dst = {4, 1, 0, 12, 4, 1};
    CHECK(zeCommandListAppendMemoryCopyRegion(list, plane, &block_dst, plane_pitch, 0, device_volume, &block_src, src_pitch, src_slice, NULL, 0, NULL));
    size_t out_pitch = 40, out_slice = 40 * 5;
    unsigned char *out = calloc(2, out_slice);
    ze_copy_region_t cube_src = {4, 3, 1, 20, 5, 2}, cube_dst = {8, 0, 0, 20, 5, 2};
    CHECK(zeCommandListAppendMemoryCopyRegion(list, out, &cube_dst, out_pitch, out_slice, device_volume, &cube_src, src_pitch, src_slice, NULL, 0, NULL));
    CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    unsigned char *plane_back = malloc(plane_pitch * ROWS);
    CHECK(zeCommandListAppendMemoryCopy(list, plane_back, plane, plane_pitch * ROWS, NULL, 0, NULL));
    CHECK(zeCommandListClose(list));

    /* Twice: the list is the same work each time. */
    for (int round = 0; round < 2; round++) {
        memset(back, 0, N * sizeof(int));
        CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
        for (int i = 0; i < N - 8; i++) EXPECT(back[i] == source[i + 8], "round %d: back[%d] = %d", round, i, back[i]);
        for (int k = 0; k < 5; k++)
            for (int i = 0; i < 64; i++)
                EXPECT(filled_back[k * 64 + i] == patterns[i % (1 << k)], "fill %d byte %d = %x", k, i, filled_back[k * 64 + i]);
        unsigned char *expected_plane = malloc(plane_pitch * ROWS);
        memset(expected_plane, patterns[0], plane_pitch * ROWS);
        copy_region(expected_plane, &block_dst, plane_pitch, 0, volume, &block_src, src_pitch, src_slice);
        EXPECT(memcmp(plane_back, expected_plane, plane_pitch * ROWS) == 0, "the 2D region copy differs");
        unsigned char *expected_out = calloc(2, out_slice);
        copy_region(expected_out, &cube_dst, out_pitch, out_slice, volume, &cube_src, src_pitch, src_slice);
        EXPECT(memcmp(out, expected_out, 2 * out_slice) == 0, "the 3D region copy differs");
        free(expected_plane);
        free(expected_out);
    }

    CHECK(zeCommandListDestroy(list));
    CHECK(zeCommandQueueDestroy(queue));
    void *allocations[] = {device, shared, host, filled, device_volume, plane};
    for (int i = 0; i < 6; i++) CHECK(zeMemFree(env.context, allocations[i]));
    CHECK(zeContextDestroy(env.context));
    return finish("copies");
}
