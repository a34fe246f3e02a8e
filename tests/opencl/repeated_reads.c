/* Large reads that receive contents received before, at the same host memory and elsewhere, and
 * contents that differ from earlier ones in one byte only, at the start or the end: the shim
 * names repeated contents by the blob that held them without copying them (a fingerprint of the
 * memory as it lies), and must never take differing contents for repeated ones. Then the last
 * contents received are written to another buffer: the same contents, reaching the trace as a
 * copy's source, are named by the same blob. */
#include "common.h"

#define N (5 << 20) /* 20 MB of floats: copied and fingerprinted in pieces by several threads */

static const char *source =
    "__kernel void set(__global float *v, float value) { v[get_global_id(0)] = value; }\n"
    "__kernel void poke(__global float *v, uint at, float value) { v[at] = value; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel set = make_kernel(program, "set"), poke = make_kernel(program, "poke");
    size_t bytes = (size_t)N * sizeof(float), global = N, one = 1;
    cl_mem buffer = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL);
    float *places[2] = {malloc(bytes), malloc(bytes)};
    if (!places[0] || !places[1]) return 2;
    /* Per read: the value set everywhere, the element poked (-1: none), the host memory read into. */
    static const struct { float value; int poked; int place; } reads[] = {
        {1, -1, 0}, {1, -1, 0}, {2, -1, 0}, {1, -1, 1}, {1, N - 1, 0}, {1, 0, 1}, {1, -1, 0}, {2, -1, 1}, {1, N - 1, 1},
    };
    CHECK(clSetKernelArg(set, 0, sizeof(cl_mem), &buffer));
    CHECK(clSetKernelArg(poke, 0, sizeof(cl_mem), &buffer));
    for (size_t index = 0; index < sizeof reads / sizeof reads[0]; index++) {
        CHECK(clSetKernelArg(set, 1, sizeof(float), &reads[index].value));
        CHECK(clEnqueueNDRangeKernel(queue, set, 1, NULL, &global, NULL, 0, NULL, NULL));
        if (reads[index].poked >= 0) {
            cl_uint at = (cl_uint)reads[index].poked;
            float poked = 9.0f;
            CHECK(clSetKernelArg(poke, 1, sizeof(cl_uint), &at));
            CHECK(clSetKernelArg(poke, 2, sizeof(float), &poked));
            CHECK(clEnqueueNDRangeKernel(queue, poke, 1, NULL, &one, NULL, 0, NULL, NULL));
        }
        float *host = places[reads[index].place];
        CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
        for (size_t at = 0; at < N; at++) {
            float want = (int)at == reads[index].poked ? 9.0f : reads[index].value;
            if (host[at] != want) {
                fprintf(stderr, "read %zu: element %zu is %f, not %f\n", index, at, host[at], want);
                return 1;
            }
        }
        printf("read %zu: sum %.1f, first %.1f, last %.1f\n", index, float_sum(host, N), host[0], host[N - 1]);
    }
    cl_mem other = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL);
    CHECK(clEnqueueWriteBuffer(queue, other, CL_TRUE, 0, bytes, places[1], 0, NULL, NULL));
    CHECK(clFinish(queue));
    free(places[0]);
    free(places[1]);
    return 0;
}
