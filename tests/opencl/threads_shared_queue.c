/* Several threads share one in-order queue under a lock: each, holding the lock, sets its own
 * kernel's argument, enqueues it on its own buffer and reads the buffer back blocking. The
 * queue orders every thread's work; the replay must reproduce each thread's results. */
#include "common.h"

#define N 512
#define ROUNDS 60
#define THREADS 4
static const char *source =
    "__kernel void advance(__global uint *a, uint k) {\n"
    "    size_t i = get_global_id(0); a[i] = a[i] * 5 + k + (uint)i; }\n";

static test_env env;
static cl_command_queue queue;
static cl_program program;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    int index;
    unsigned checksum;
} worker;

static void *run(void *argument) {
    worker *self = argument;
    pthread_mutex_lock(&lock);
    cl_kernel advance = make_kernel(program, "advance");
    cl_mem a = make_buffer(&env, CL_MEM_READ_WRITE, N * sizeof(int), NULL);
    unsigned want[N], got[N];
    for (int i = 0; i < N; i++) want[i] = (unsigned)(self->index - i);
    CHECK(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, sizeof want, want, 0, NULL, NULL));
    CHECK(clSetKernelArg(advance, 0, sizeof a, &a));
    pthread_mutex_unlock(&lock);
    size_t global = N;
    for (int round = 0; round < ROUNDS; round++) {
        unsigned k = (unsigned)(round * (self->index + 1));
        for (int i = 0; i < N; i++) want[i] = want[i] * 5 + k + (unsigned)i;
        pthread_mutex_lock(&lock);
        CHECK(clSetKernelArg(advance, 1, sizeof k, &k));
        CHECK(clEnqueueNDRangeKernel(queue, advance, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        pthread_mutex_unlock(&lock);
        if (memcmp(got, want, sizeof got) != 0) {
            fprintf(stderr, "thread %d round %d: wrong values\n", self->index, round);
            exit(1);
        }
    }
    for (int i = 0; i < N; i++) self->checksum ^= got[i] * (unsigned)(i + 1);
    pthread_mutex_lock(&lock);
    clReleaseMemObject(a);
    clReleaseKernel(advance);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    env = open_env();
    queue = open_queue(&env, 0);
    program = build_program(&env, source, "");
    worker workers[THREADS] = {{0}};
    for (int t = 0; t < THREADS; t++) workers[t].index = t;
    run_threads(run, workers, sizeof *workers, THREADS);
    for (int t = 0; t < THREADS; t++) printf("thread %d checksum %u\n", t, workers[t].checksum);
    clReleaseCommandQueue(queue);
    clReleaseProgram(program);
    clReleaseContext(env.context);
    return 0;
}
