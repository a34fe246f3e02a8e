/* Several threads share one context; each has its own in-order queue, kernel and buffer, and
 * enqueues ROUNDS kernels with a blocking read every tenth, while every thread's kernels also
 * read one shared buffer. A synchronization in one thread must close only that thread's work. */
#include "common.h"

#define N 768
#define ROUNDS 200
#define MAX_THREADS 16
static const char *source =
    "__kernel void bump(__global uint *a, __global const uint *shared, uint k) {\n"
    "    size_t i = get_global_id(0); a[i] = a[i] * 3 + shared[i] + k; }\n";

static test_env env;
static cl_program program;
static cl_mem shared;
static unsigned shared_host[N];

typedef struct {
    int index;
    unsigned checksum;
} worker;

static void *run(void *argument) {
    worker *self = argument;
    cl_command_queue queue = open_queue(&env, 0);
    cl_kernel bump = make_kernel(program, "bump");
    cl_mem a = make_buffer(&env, CL_MEM_READ_WRITE, N * sizeof(int), NULL);
    unsigned want[N], got[N];
    for (int i = 0; i < N; i++) want[i] = (unsigned)(self->index * 1000 + i);
    CHECK(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, sizeof want, want, 0, NULL, NULL));
    CHECK(clSetKernelArg(bump, 0, sizeof a, &a));
    CHECK(clSetKernelArg(bump, 1, sizeof shared, &shared));
    size_t global = N;
    for (int round = 1; round <= ROUNDS; round++) {
        unsigned k = (unsigned)(round + self->index);
        CHECK(clSetKernelArg(bump, 2, sizeof k, &k));
        CHECK(clEnqueueNDRangeKernel(queue, bump, 1, NULL, &global, NULL, 0, NULL, NULL));
        for (int i = 0; i < N; i++) want[i] = want[i] * 3 + shared_host[i] + k;
        if (round % 10 == 0) {
            CHECK(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
            if (memcmp(got, want, sizeof got) != 0) {
                fprintf(stderr, "thread %d round %d: wrong values\n", self->index, round);
                exit(1);
            }
        }
    }
    for (int i = 0; i < N; i++) self->checksum ^= got[i] * (unsigned)(i + 1);
    clReleaseMemObject(a);
    clReleaseKernel(bump);
    clReleaseCommandQueue(queue);
    return NULL;
}

int main(void) {
    int threads = getenv("THREADS") ? atoi(getenv("THREADS")) : 8;
    if (threads < 1 || threads > MAX_THREADS) threads = 8;
    env = open_env();
    program = build_program(&env, source, "");
    for (int i = 0; i < N; i++) shared_host[i] = (unsigned)((i * 7) % 13);
    shared = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof shared_host, shared_host);
    worker workers[MAX_THREADS] = {{0}};
    for (int t = 0; t < threads; t++) workers[t].index = t;
    run_threads(run, workers, sizeof *workers, threads);
    for (int t = 0; t < threads; t++) printf("thread %d checksum %u\n", t, workers[t].checksum);
    clReleaseMemObject(shared);
    clReleaseProgram(program);
    clReleaseContext(env.context);
    return 0;
}
