# The PyTorch case, timed on its own: a small CNN trained with SGD, one loss.item() per step;
# prints the wall time of STEPS steps after one warm-up step (start-up and cuDNN's first calls excluded).
#   python3 scripts/bench/pytorch_steps.py [STEPS]   -> "loop_s SECONDS"
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(16 * 7 * 7, 10),
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.rand(steps + 1, 32, 1, 28, 28, device="cuda")
labels = torch.randint(0, 10, (steps + 1, 32), device="cuda")


def step(index):
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(images[index]), labels[index])
    loss.backward()
    optimizer.step()
    return loss.item()


step(steps)
started = time.perf_counter()
for index in range(steps):
    step(index)
print("loop_s %.4f" % (time.perf_counter() - started))
