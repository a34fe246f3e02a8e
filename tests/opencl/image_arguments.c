/* What OpenCL-CTS test_profiling's trace revealed: kernels that take an image and a sampler.
 * The recorder records the image as memory and the sampler as a texture object, so replay binds
 * its own image and sampler in their place. */
#include "common.h"

#define SIDE 8
static const char *source =
    "__kernel void paint(write_only image2d_t image) {\n"
    "    int2 at = (int2)(get_global_id(0), get_global_id(1));\n"
    "    write_imagef(image, at, (float4)(at.x, at.y, 0.0f, 1.0f));\n"
    "}\n"
    "__kernel void sample(read_only image2d_t image, sampler_t sampler, __global float *out) {\n"
    "    int2 at = (int2)(get_global_id(0), get_global_id(1));\n"
    "    float4 texel = read_imagef(image, sampler, at);\n"
    "    out[at.y * get_global_size(0) + at.x] = texel.x + 10.0f * texel.y;\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel paint = make_kernel(program, "paint"), sample = make_kernel(program, "sample");
    cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = SIDE;
    desc.image_height = SIDE;
    cl_mem image = CHECKED(clCreateImage(env.context, CL_MEM_READ_WRITE, &format, &desc, NULL, ERR));
    cl_sampler_properties properties[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_ADDRESSING_MODE,
                                          CL_ADDRESS_CLAMP_TO_EDGE, CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
    cl_sampler sampler = CHECKED(clCreateSamplerWithProperties(env.context, properties, ERR));
    float want[SIDE * SIDE], got[SIDE * SIDE];
    cl_mem out = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof got, NULL);
    CHECK(clSetKernelArg(paint, 0, sizeof(cl_mem), &image));
    CHECK(clSetKernelArg(sample, 0, sizeof(cl_mem), &image));
    CHECK(clSetKernelArg(sample, 1, sizeof(cl_sampler), &sampler));
    CHECK(clSetKernelArg(sample, 2, sizeof(cl_mem), &out));
    size_t global[2] = {SIDE, SIDE};
    CHECK(clEnqueueNDRangeKernel(queue, paint, 2, NULL, global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, sample, 2, NULL, global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) want[y * SIDE + x] = (float)x + 10.0f * (float)y;
    expect_floats("out", got, want, SIDE * SIDE);
    printf("image arguments: total = %.1f\n", float_sum(got, SIDE * SIDE));
    return 0;
}
