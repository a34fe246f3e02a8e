// Before the capture range (run with REPRISE_CAPTURE=1-): a stream query answering "not ready"
// (the test double's first one does) waited for nothing and ends no window, so the launch after
// it is still window 0's, which the query answering done ends; the launch after that is window 1,
// the first captured.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuStreamQuery, void *);
    F(cuStreamSynchronize, void *);
    void *add = kernel_named("add1");
    CUdeviceptr data = ints_set_to(0, 4);
    add1(add, 0, data, 1);
    int first = cuStreamQuery(0);
    add1(add, 0, data, 1);
    int second = cuStreamQuery(0);
    add1(add, 0, data, 2);
    cuStreamSynchronize(0);
    printf("queries %d %d\n", first, second);
    return 0;
}
