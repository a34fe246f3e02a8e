/* Images created, used by a kernel and released one after another, as OpenCL-CTS's image tests do
 * (test_basic's image sub-tests go through 36 GB of them): a replay that held every image at once
 * would not fit its memory budget, so past it the images share storage, each created again when
 * its turn comes, and command buffers that named an earlier one are built again. */
#include "common.h"

#define SIDE 128
#define ROUNDS 6
static const char *source =
    "__kernel void sum_rows(read_only image2d_t in, __global uint *out) {\n"
    "    int y = get_global_id(0);\n"
    "    uint sum = 0;\n"
    "    for (int x = 0; x < get_image_width(in); x++) sum += read_imageui(in, (int2)(x, y)).x;\n"
    "    out[y] = sum;\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel sum_rows = make_kernel(program, "sum_rows");
    cl_mem sums = make_buffer(&env, CL_MEM_READ_WRITE, SIDE * sizeof(cl_uint), NULL);
    static cl_uint texels[SIDE * SIDE * 4];
    unsigned long total = 0;
    for (int round = 0; round < ROUNDS; round++) {
        cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT32};
        cl_image_desc desc = {0};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = SIDE;
        desc.image_height = SIDE;
        cl_mem image = CHECKED(clCreateImage(env.context, CL_MEM_READ_ONLY, &format, &desc, NULL, ERR));
        for (int i = 0; i < SIDE * SIDE * 4; i++) texels[i] = (cl_uint)(i * (round + 1) % 1000);
        size_t zero[3] = {0, 0, 0}, whole[3] = {SIDE, SIDE, 1}, rows = SIDE;
        CHECK(clEnqueueWriteImage(queue, image, CL_FALSE, zero, whole, 0, 0, texels, 0, NULL, NULL));
        CHECK(clSetKernelArg(sum_rows, 0, sizeof image, &image));
        CHECK(clSetKernelArg(sum_rows, 1, sizeof sums, &sums));
        CHECK(clEnqueueNDRangeKernel(queue, sum_rows, 1, NULL, &rows, NULL, 0, NULL, NULL));
        cl_uint got[SIDE];
        CHECK(clEnqueueReadBuffer(queue, sums, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        for (int y = 0; y < SIDE; y++) total += got[y];
        CHECK(clReleaseMemObject(image));
    }
    printf("images one at a time: total %lu\n", total);
    return 0;
}
