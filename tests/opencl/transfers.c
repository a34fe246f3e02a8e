/* Every kind of transfer: write, fill, copy, rectangular copy, map for writing and for reading,
 * and read, with a kernel in between so the transfers feed real work. */
#include "common.h"

#define W 16
#define H 8
#define N (W * H)
static const char *source =
    "__kernel void add_index(__global float *v) { size_t i = get_global_id(0); v[i] += (float)i; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel add_index = make_kernel(program, "add_index");
    size_t bytes = N * sizeof(float), global = N;
    cl_mem a = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL), b = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL),
           c = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL);
    float host[N], want[N], got[N];

    /* a = 2 everywhere, then a[i] += i; b = copy of a; c = 7, then a rectangle of b into c. */
    float two = 2.0f, seven = 7.0f;
    CHECK(clEnqueueFillBuffer(queue, a, &two, sizeof two, 0, bytes, 0, NULL, NULL));
    CHECK(clSetKernelArg(add_index, 0, sizeof(cl_mem), &a));
    CHECK(clEnqueueNDRangeKernel(queue, add_index, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueCopyBuffer(queue, a, b, 0, 0, bytes, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(queue, c, &seven, sizeof seven, 0, bytes, 0, NULL, NULL));
    size_t src_origin[3] = {2 * sizeof(float), 1, 0}, dst_origin[3] = {4 * sizeof(float), 3, 0};
    size_t region[3] = {5 * sizeof(float), 4, 1}, pitch = W * sizeof(float);
    CHECK(clEnqueueCopyBufferRect(queue, b, c, src_origin, dst_origin, region, pitch, 0, pitch, 0, 0, NULL, NULL));

    /* The first row of b is overwritten by a write; the map of c for writing negates row 0. */
    for (int i = 0; i < W; i++) host[i] = -1.0f - (float)i;
    CHECK(clEnqueueWriteBuffer(queue, b, CL_TRUE, 0, W * sizeof(float), host, 0, NULL, NULL));
    float *mapped = CHECKED((float *)clEnqueueMapBuffer(queue, c, CL_TRUE, CL_MAP_WRITE, 0, W * sizeof(float), 0,
                                                        NULL, NULL, ERR));
    for (int i = 0; i < W; i++) mapped[i] = -mapped[i];
    CHECK(clEnqueueUnmapMemObject(queue, c, mapped, 0, NULL, NULL));
    CHECK(clSetKernelArg(add_index, 0, sizeof(cl_mem), &c));
    CHECK(clEnqueueNDRangeKernel(queue, add_index, 1, NULL, &global, NULL, 0, NULL, NULL));

    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            int i = y * W + x;
            float from_b = 2.0f + (float)((y - 2) * W + (x - 2));
            float value = (y >= 3 && y < 7 && x >= 4 && x < 9) ? from_b : 7.0f;
            if (y == 0) value = -value;
            want[i] = value + (float)i;
        }
    }
    const float *read_map = CHECKED((float *)clEnqueueMapBuffer(queue, c, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL,
                                                                NULL, ERR));
    memcpy(got, read_map, bytes);
    CHECK(clEnqueueUnmapMemObject(queue, c, (void *)read_map, 0, NULL, NULL));
    expect_floats("c (mapped)", got, want, N);
    float row[W];
    CHECK(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof row, row, 0, NULL, NULL));
    expect_floats("b row 0", row, host, W);
    CHECK(clFinish(queue));
    printf("transfers: sum of c = %.1f, sum of b's first row = %.1f\n", float_sum(got, N), float_sum(row, W));
    return 0;
}
