/* Several threads share one in-order queue with no lock: each, on its own kernel and buffer,
 * enqueues the kernel and a non-blocking read of the buffer, then waits with clFinish on the
 * shared queue while the others go on enqueueing to it. A wait covers what the queue held when it
 * began: what another thread enqueues meanwhile has not necessarily finished when it returns, so
 * its read's data must not be taken then. The replay must reproduce each thread's results. */
#include "common.h"

#define N 512
#define ROUNDS 40
#define THREADS 4
static const char *source =
    "__kernel void advance(__global uint *a, uint k) {\n"
    "    size_t i = get_global_id(0); a[i] = a[i] * 3 + k + (uint)i; }\n";

static test_env env;
static cl_command_queue queue;
static cl_program program;

typedef struct {
    int index;
    cl_kernel advance;
    cl_mem a;
    unsigned checksum;
} worker;

static void *run(void *argument) {
    worker *self = argument;
    unsigned want[N], got[N];
    for (int i = 0; i < N; i++) want[i] = (unsigned)(self->index * 1000 + i);
    CHECK(clEnqueueWriteBuffer(queue, self->a, CL_TRUE, 0, sizeof want, want, 0, NULL, NULL));
    CHECK(clSetKernelArg(self->advance, 0, sizeof self->a, &self->a));
    size_t global = N;
    for (int round = 0; round < ROUNDS; round++) {
        unsigned k = (unsigned)(round * 7 + self->index);
        for (int i = 0; i < N; i++) want[i] = want[i] * 3 + k + (unsigned)i;
        CHECK(clSetKernelArg(self->advance, 1, sizeof k, &k));
        CHECK(clEnqueueNDRangeKernel(queue, self->advance, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, self->a, CL_FALSE, 0, sizeof got, got, 0, NULL, NULL));
        CHECK(clFinish(queue));
        if (memcmp(got, want, sizeof got) != 0) {
            fprintf(stderr, "thread %d round %d: wrong values\n", self->index, round);
            exit(1);
        }
    }
    for (int i = 0; i < N; i++) self->checksum ^= got[i] * (unsigned)(i + 1);
    return NULL;
}

int main(void) {
    env = open_env();
    queue = open_queue(&env, 0);
    program = build_program(&env, source, "");
    worker workers[THREADS] = {{0}};
    for (int t = 0; t < THREADS; t++) {
        workers[t].index = t;
        workers[t].advance = make_kernel(program, "advance");
        workers[t].a = make_buffer(&env, CL_MEM_READ_WRITE, N * sizeof(unsigned), NULL);
    }
    run_threads(run, workers, sizeof *workers, THREADS);
    for (int t = 0; t < THREADS; t++) {
        printf("thread %d checksum %u\n", t, workers[t].checksum);
        clReleaseMemObject(workers[t].a);
        clReleaseKernel(workers[t].advance);
    }
    clReleaseCommandQueue(queue);
    clReleaseProgram(program);
    clReleaseContext(env.context);
    return 0;
}
