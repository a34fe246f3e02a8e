// Launches the shim records off the program's thread, and a fork in the middle of them: the child
// launches on (its recorder is another, so nothing the parent worked out may pass for its own) and
// exits; then the parent goes on. Prints what each computed, and the processes' ids.
#include "driver.h"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void launches(void *function, CUdeviceptr data, int count) {
    for (int i = 0; i < count; i++) add1(function, 0, data, 1);
}
int main(void) {
    if (!open_driver()) return 2;
    F(cuStreamSynchronize, void *);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *function = kernel_named("add1");
    CUdeviceptr data = ints_set_to(0, 4);
    int word;
    launches(function, data, 100);
    pid_t child = fork();
    if (child == 0) {
        launches(function, data, 50);
        cuStreamSynchronize(0);
        cuMemcpyDtoH_v2(&word, data, sizeof word);
        printf("child %d\n", word);
        fflush(stdout);
        exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    launches(function, data, 100);
    cuStreamSynchronize(0);
    cuMemcpyDtoH_v2(&word, data, sizeof word);
    printf("parent %d child exit %d\npids %d %d\n", word, WEXITSTATUS(status), (int)getpid(), (int)child);
    return 0;
}
