/* Images of every type mapped for reading and writing at once, as OpenCL-CTS's enqueue_map_image
 * does: a window at a varying origin is read through the map (at the runtime's row and slice
 * pitches; the layers of a 1D array lie a slice pitch apart), changed, unmapped, and the whole
 * image read back. Images created from host memory (CL_MEM_USE_HOST_PTR: the runtime may map that
 * memory itself) and without. */
#include "common.h"

#define SIDE 12
#define TEXEL 4

static cl_mem make(const test_env *env, cl_mem_object_type type, cl_mem_flags flags, void *host, size_t region[3]) {
    cl_image_format format = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {0};
    desc.image_type = type;
    desc.image_width = SIDE;
    region[0] = SIDE, region[1] = 1, region[2] = 1;
    if (type != CL_MEM_OBJECT_IMAGE1D) desc.image_height = region[1] = SIDE;
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) desc.image_height = 0, desc.image_array_size = SIDE;
    if (type == CL_MEM_OBJECT_IMAGE3D) desc.image_depth = region[2] = SIDE / 2;
    if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY) desc.image_array_size = region[2] = SIDE / 2;
    return CHECKED(clCreateImage(env->context, flags, &format, &desc, host, ERR));
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    static cl_uchar host[SIDE * SIDE * SIDE * TEXEL], initial[SIDE * SIDE * SIDE * TEXEL], back[SIDE * SIDE * SIDE * TEXEL];
    const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D,
                                        CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D};
    const cl_mem_flags flag_sets[] = {CL_MEM_READ_WRITE, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR};
    unsigned long checksum = 0;
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof initial; i++) initial[i] = (cl_uchar)(i * 31 + 5);
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++) {
            memcpy(host, initial, sizeof host);
            size_t whole[3], zero[3] = {0, 0, 0};
            int from_host = (flag_sets[f] & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0;
            cl_mem image = make(&env, types[t], flag_sets[f], from_host ? host : NULL, whole);
            if (!from_host) CHECK(clEnqueueWriteImage(queue, image, CL_TRUE, zero, whole, 0, 0, initial, 0, NULL, NULL));
            for (int round = 0; round < 3; round++) {
                size_t at[3], region[3];
                for (int axis = 0; axis < 3; axis++) {
                    seed = seed * 1103515245u + 12345u;
                    at[axis] = whole[axis] > 1 ? seed % (whole[axis] / 2) : 0;
                    region[axis] = whole[axis] > 1 ? whole[axis] / 2 - round : 1;
                }
                size_t row_pitch = 0, slice_pitch = 0;
                cl_uchar *mapped = CHECKED(clEnqueueMapImage(queue, image, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, at, region, &row_pitch,
                                                             &slice_pitch, 0, NULL, NULL, ERR));
                size_t y_pitch = types[t] == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slice_pitch : row_pitch;
                for (size_t z = 0; z < region[2]; z++)
                    for (size_t y = 0; y < region[1]; y++)
                        for (size_t x = 0; x < region[0] * TEXEL; x++) {
                            cl_uchar *byte = mapped + z * slice_pitch + y * y_pitch + x;
                            checksum = checksum * 33 + *byte;
                            *byte = (cl_uchar)(*byte ^ (round + 1) * 17);
                        }
                CHECK(clEnqueueUnmapMemObject(queue, image, mapped, 0, NULL, NULL));
            }
            CHECK(clEnqueueReadImage(queue, image, CL_TRUE, zero, whole, 0, 0, back, 0, NULL, NULL));
            for (size_t i = 0; i < whole[0] * whole[1] * whole[2] * TEXEL; i++) checksum = checksum * 33 + back[i];
            CHECK(clReleaseMemObject(image));
        }
    printf("image maps: checksum %lx\n", checksum);
    return 0;
}
