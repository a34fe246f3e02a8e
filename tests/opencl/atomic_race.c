/* Nondeterminism as real programs have it: every work-item exchanges its id into a few shared
 * slots (atomic_xchg) again and again, so which item wins each slot depends on how the runtime's
 * threads interleave, from run to run, while an atomic count of the exchanges is exact; a
 * deterministic kernel beside it squares its input. All is read back. A replay must call the
 * winners unstable, not a failure, and still catch a change to the squares. */
#include "common.h"

#define ITEMS (1 << 16)
#define GROUP 64
#define SLOTS 64
#define ROUNDS 256
#define STRINGIFY(x) #x
#define TEXT(x) STRINGIFY(x)
static const char *source =
    "__kernel void race(__global int *counter, __global int *slots) {\n"
    "    int id = (int)get_global_id(0);\n"
    "    for (int round = 0; round < ROUNDS; round++) {\n"
    "        atomic_xchg(&slots[(id + round) % SLOTS], id);\n"
    "        atomic_inc(counter);\n"
    "    }\n"
    "}\n"
    "__kernel void square(__global float *out, __global const float *in, float scale) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = scale * in[i] * in[i];\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-DROUNDS=" TEXT(ROUNDS) " -DSLOTS=" TEXT(SLOTS));
    cl_kernel race = make_kernel(program, "race"), square = make_kernel(program, "square");
    int winners[SLOTS], count = 0;
    static float in[ITEMS], out[ITEMS], want[ITEMS];
    int zero = 0;
    for (int i = 0; i < ITEMS; i++) {
        in[i] = (float)(i % 1000) / 10.0f;
        want[i] = 1.0f * in[i] * in[i];
    }
    cl_mem counter = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero);
    cl_mem slots = make_buffer(&env, CL_MEM_READ_WRITE, sizeof winners, NULL);
    cl_mem input = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in);
    cl_mem squares = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof out, NULL);
    float scale = 1.0f;
    size_t global = ITEMS, local = GROUP;
    CHECK(clSetKernelArg(race, 0, sizeof(cl_mem), &counter));
    CHECK(clSetKernelArg(race, 1, sizeof(cl_mem), &slots));
    CHECK(clSetKernelArg(square, 0, sizeof(cl_mem), &squares));
    CHECK(clSetKernelArg(square, 1, sizeof(cl_mem), &input));
    CHECK(clSetKernelArg(square, 2, sizeof scale, &scale));
    CHECK(clEnqueueNDRangeKernel(queue, race, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, square, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, slots, CL_TRUE, 0, sizeof winners, winners, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, counter, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, squares, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    if (count != ITEMS * ROUNDS) {
        fprintf(stderr, "%d exchanges counted, %d made\n", count, ITEMS * ROUNDS);
        return 1;
    }
    for (int slot = 0; slot < SLOTS; slot++) {
        if (winners[slot] < 0 || winners[slot] >= ITEMS) {
            fprintf(stderr, "slot %d won by %d, no work-item\n", slot, winners[slot]);
            return 1;
        }
    }
    expect_floats("squares", out, want, ITEMS);
    printf("atomic_race: %d exchanges, every slot won by a work-item\n", count);
    return 0;
}
