/* Images moved every way the recorder follows: written and read (part of a 2D image, with host
 * pitches), copied image to image, image to buffer and buffer to image, filled, a 2D image array
 * and a 3D image written by kernels, a sampler with normalized coordinates and linear filtering
 * reading between texels, and windows of images mapped for reading and for writing (at the pitches
 * the runtime returns). */
#include "common.h"

#define W 8
#define H 6
#define LAYERS 3
#define D 4
static const char *source =
    "__kernel void layers(write_only image2d_array_t out) {\n"
    "    int4 at = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);\n"
    "    write_imagef(out, at, (float4)(at.x, at.y, at.z, 1.0f));\n"
    "}\n"
    "__kernel void volume(read_only image3d_t in, __global float *out) {\n"
    "    int4 at = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);\n"
    "    float4 texel = read_imagef(in, at);\n"
    "    out[(at.z * get_global_size(1) + at.y) * get_global_size(0) + at.x] = texel.x * 2.0f;\n"
    "}\n"
    "__kernel void blur(read_only image2d_t in, sampler_t linear, __global float *out) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float2 at = (float2)((x + 1.0f) / get_image_width(in), (y + 0.5f) / get_image_height(in));\n"
    "    out[y * get_global_size(0) + x] = read_imagef(in, linear, at).x;\n"
    "}\n";

static cl_mem make_image(const test_env *env, cl_mem_object_type type, cl_channel_type channel, size_t w, size_t h, size_t depth, size_t layers) {
    cl_image_format format = {CL_R, channel};
    cl_image_desc desc = {0};
    desc.image_type = type;
    desc.image_width = w;
    desc.image_height = h;
    desc.image_depth = depth;
    desc.image_array_size = layers;
    return CHECKED(clCreateImage(env->context, CL_MEM_READ_WRITE, &format, &desc, NULL, ERR));
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel layers = make_kernel(program, "layers"), volume = make_kernel(program, "volume"), blur = make_kernel(program, "blur");
    size_t zero[3] = {0, 0, 0};

    /* A 2D image: filled, then a 4x3 window written from host rows 24 bytes apart. */
    cl_mem plane = make_image(&env, CL_MEM_OBJECT_IMAGE2D, CL_FLOAT, W, H, 0, 0);
    float fill_color[4] = {0.5f, 0, 0, 0};
    size_t whole[3] = {W, H, 1};
    CHECK(clEnqueueFillImage(queue, plane, fill_color, zero, whole, 0, NULL, NULL));
    float window[3][6];
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 6; x++) window[y][x] = (float)(10 * y + x);
    size_t at[3] = {2, 1, 0}, region[3] = {4, 3, 1};
    CHECK(clEnqueueWriteImage(queue, plane, CL_FALSE, at, region, sizeof window[0], 0, window, 0, NULL, NULL));

    /* Image to image, image to buffer, buffer to image. */
    cl_mem copy = make_image(&env, CL_MEM_OBJECT_IMAGE2D, CL_FLOAT, W, H, 0, 0);
    CHECK(clEnqueueCopyImage(queue, plane, copy, zero, zero, whole, 0, NULL, NULL));
    cl_mem staged = make_buffer(&env, CL_MEM_READ_WRITE, W * H * sizeof(float), NULL);
    CHECK(clEnqueueCopyImageToBuffer(queue, copy, staged, zero, whole, 0, 0, NULL, NULL));
    cl_mem back = make_image(&env, CL_MEM_OBJECT_IMAGE2D, CL_FLOAT, W, H, 0, 0);
    CHECK(clEnqueueCopyBufferToImage(queue, staged, back, 0, zero, whole, 0, NULL, NULL));
    float plane_got[H][W];
    CHECK(clEnqueueReadImage(queue, back, CL_TRUE, zero, whole, 0, 0, plane_got, 0, NULL, NULL));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int inside = x >= 2 && x < 6 && y >= 1 && y < 4;
            float want = inside ? window[y - 1][x - 2] : 0.5f;
            if (plane_got[y][x] != want) {
                fprintf(stderr, "plane[%d][%d] = %g, expected %g\n", y, x, plane_got[y][x], want);
                return 1;
            }
        }

    /* A 2D image array written by a kernel; layer 1 read back alone. */
    cl_image_format rgba = {CL_RGBA, CL_FLOAT};
    cl_image_desc array_desc = {0};
    array_desc.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
    array_desc.image_width = W;
    array_desc.image_height = H;
    array_desc.image_array_size = LAYERS;
    // No access flags: read and write by default (OpenCL-CTS creates images so).
    cl_mem array = CHECKED(clCreateImage(env.context, 0, &rgba, &array_desc, NULL, ERR));
    CHECK(clSetKernelArg(layers, 0, sizeof(cl_mem), &array));
    size_t array_range[3] = {W, H, LAYERS};
    CHECK(clEnqueueNDRangeKernel(queue, layers, 3, NULL, array_range, NULL, 0, NULL, NULL));
    float layer[H][W][4];
    size_t layer_at[3] = {0, 0, 1}, layer_region[3] = {W, H, 1};
    CHECK(clEnqueueReadImage(queue, array, CL_TRUE, layer_at, layer_region, 0, 0, layer, 0, NULL, NULL));
    double layer_sum = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) layer_sum += layer[y][x][0] + layer[y][x][1] + layer[y][x][2];

    /* A 3D image written from the host, read by a kernel. */
    cl_mem cube = make_image(&env, CL_MEM_OBJECT_IMAGE3D, CL_FLOAT, W, H, D, 0);
    float cube_data[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) cube_data[z][y][x] = (float)(x + 10 * y + 100 * z);
    size_t cube_region[3] = {W, H, D};
    CHECK(clEnqueueWriteImage(queue, cube, CL_FALSE, zero, cube_region, 0, 0, cube_data, 0, NULL, NULL));
    cl_mem doubled = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof cube_data, NULL);
    CHECK(clSetKernelArg(volume, 0, sizeof(cl_mem), &cube));
    CHECK(clSetKernelArg(volume, 1, sizeof(cl_mem), &doubled));
    CHECK(clEnqueueNDRangeKernel(queue, volume, 3, NULL, cube_region, NULL, 0, NULL, NULL));
    float doubled_got[D * H * W];
    CHECK(clEnqueueReadBuffer(queue, doubled, CL_TRUE, 0, sizeof doubled_got, doubled_got, 0, NULL, NULL));
    for (int i = 0; i < D * H * W; i++)
        if (doubled_got[i] != 2.0f * ((float *)cube_data)[i]) {
            fprintf(stderr, "doubled[%d] = %g\n", i, doubled_got[i]);
            return 1;
        }

    /* Linear filtering halfway between texels of the window image. */
    cl_sampler_properties properties[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_TRUE, CL_SAMPLER_ADDRESSING_MODE,
                                          CL_ADDRESS_CLAMP_TO_EDGE, CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
    cl_sampler linear = CHECKED(clCreateSamplerWithProperties(env.context, properties, ERR));
    cl_mem blurred = make_buffer(&env, CL_MEM_WRITE_ONLY, W * H * sizeof(float), NULL);
    CHECK(clSetKernelArg(blur, 0, sizeof(cl_mem), &plane));
    CHECK(clSetKernelArg(blur, 1, sizeof(cl_sampler), &linear));
    CHECK(clSetKernelArg(blur, 2, sizeof(cl_mem), &blurred));
    CHECK(clEnqueueNDRangeKernel(queue, blur, 2, NULL, whole, NULL, 0, NULL, NULL));
    float blurred_got[H * W];
    CHECK(clEnqueueReadBuffer(queue, blurred, CL_TRUE, 0, sizeof blurred_got, blurred_got, 0, NULL, NULL));
    /* Between texels x and x+1 of row y: their mean (in the window, 10y + x + 0.5). */
    if (fabsf(blurred_got[2 * W + 3] - (float)(10 * 1 + 1) - 0.5f) > 1e-3f) {
        fprintf(stderr, "blurred[2][3] = %g\n", blurred_got[2 * W + 3]);
        return 1;
    }

    /* A window of the cube mapped for reading, rows and slices at the runtime's pitches. */
    size_t cube_at[3] = {1, 2, 1}, cube_window[3] = {5, 3, 2}, row_pitch = 0, slice_pitch = 0;
    char *seen = CHECKED(clEnqueueMapImage(queue, cube, CL_TRUE, CL_MAP_READ, cube_at, cube_window, &row_pitch, &slice_pitch, 0, NULL, NULL, ERR));
    double seen_sum = 0;
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 3; y++)
            for (size_t x = 0; x < 5; x++) seen_sum += *(float *)(seen + z * slice_pitch + y * row_pitch + x * sizeof(float));
    CHECK(clEnqueueUnmapMemObject(queue, cube, seen, 0, NULL, NULL));
    /* Rows 4 and 5 of the plane mapped for writing: the unmap writes them. */
    size_t plane_at[3] = {1, 4, 0}, plane_window[3] = {3, 2, 1};
    char *written = CHECKED(clEnqueueMapImage(queue, plane, CL_TRUE, CL_MAP_WRITE, plane_at, plane_window, &row_pitch, NULL, 0, NULL, NULL, ERR));
    for (size_t y = 0; y < 2; y++)
        for (size_t x = 0; x < 3; x++) *(float *)(written + y * row_pitch + x * sizeof(float)) = (float)(100 + 3 * y + x);
    CHECK(clEnqueueUnmapMemObject(queue, plane, written, 0, NULL, NULL));
    CHECK(clEnqueueReadImage(queue, plane, CL_TRUE, zero, whole, 0, 0, plane_got, 0, NULL, NULL));
    if (plane_got[5][3] != 105.0f || plane_got[4][0] != 0.5f) {
        fprintf(stderr, "plane[5][3] = %g, plane[4][0] = %g after the mapped write\n", plane_got[5][3], plane_got[4][0]);
        return 1;
    }
    printf("image transfers: layer 1 sum = %.1f, blurred sum = %.3f, mapped cube sum = %.1f, plane sum = %.1f\n", layer_sum,
           float_sum(blurred_got, W * H), seen_sum, float_sum(&plane_got[0][0], W * H));
    CHECK(clReleaseSampler(linear));
    return 0;
}
