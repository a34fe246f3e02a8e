# Hugging Face transformers as its users write it: a small GPT-2 built from a config (random weights,
# nothing downloaded), a few AdamW steps under bf16 autocast, then greedy generate.
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=512, n_positions=64)
model = GPT2LMHeadModel(config).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 512, (4, 32), device="cuda")
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(tokens, labels=tokens).loss
    loss.backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    generated = model.generate(tokens[:1, :8], max_new_tokens=8, do_sample=False, pad_token_id=0)
print("transformers: generated shape", tuple(generated.shape), "loss finite", bool(torch.isfinite(loss)))
