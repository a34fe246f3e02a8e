/* Large data read back into the same host memory again and again, as simpleStreams does: each of
 * ROUNDS rounds (argument 1, default 9) fills a 4 MB buffer with round / 3 (so the same data comes
 * three times in a row, then changes, in the last piece only for round 6) and reads all of it back
 * with a blocking read into one host array. The shim hashes data it saw repeat in place and names
 * the blob stored before instead of copying it again; the replay compares every read byte for
 * byte. Self-checking: exits 1 on a wrong value. */
#include "common.h"

#define WORDS (1u << 20)
static const char *source =
    "__kernel void fill(__global uint *data, uint value, uint tail) {\n"
    "    size_t i = get_global_id(0); data[i] = i + 1 == get_global_size(0) ? tail : value; }\n";

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 9;
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel fill = make_kernel(program, "fill");
    cl_mem data = make_buffer(&env, CL_MEM_READ_WRITE, WORDS * sizeof(cl_uint), NULL);
    cl_uint *host = malloc(WORDS * sizeof(cl_uint));
    size_t global = WORDS;
    CHECK(clSetKernelArg(fill, 0, sizeof data, &data));
    unsigned long long sum = 0;
    for (int round = 0; round < rounds; round++) {
        /* Round 6 differs from round 5 only in its last word. */
        cl_uint value = round == 6 ? 1 : (cl_uint)round / 3, tail = (cl_uint)round / 3;
        CHECK(clSetKernelArg(fill, 1, sizeof value, &value));
        CHECK(clSetKernelArg(fill, 2, sizeof tail, &tail));
        CHECK(clEnqueueNDRangeKernel(queue, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, data, CL_TRUE, 0, WORDS * sizeof(cl_uint), host, 0, NULL, NULL));
        for (cl_uint i = 0; i < WORDS; i++) {
            cl_uint want = i + 1 == WORDS ? tail : value;
            if (host[i] != want) {
                fprintf(stderr, "round %d: word %u is %u, expected %u\n", round, i, host[i], want);
                return 1;
            }
            sum += host[i];
        }
    }
    printf("received_again: %d rounds, sum %llu\n", rounds, sum);
    return 0;
}
