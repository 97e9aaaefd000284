#!/usr/bin/env python3
"""The V-trace learner step of `bench_nn --vtrace-step`, in PyTorch, for comparison.

Same model (Nature CNN: u8 [4, 84, 84] / 255, conv 32 8x8/4, conv 64 4x4/2, conv 64 3x3/1,
linear 512, policy and value heads, ReLUs), same batch (T = 20 steps + 1 bootstrap, B = 32,
18 actions), same work per step: the unroll batch is copied from host memory to the device, one
forward over the (T + 1) x B frames, V-trace targets (rho_bar = c_bar = 1, lambda = 1,
gamma = 0.99), policy-gradient + 0.5 baseline + 0.01 entropy loss, backward, global-norm clipping
at 40, RMSProp. Prints one JSON line like bench_nn's per mode.

  /usr/bin/python3 bench/pytorch_vtrace_step.py [--device cuda|cpu] [--seconds 3] [--threads K]
      [--modes eager,tuned,compile,compile-graphs] [--tf32]

Modes, so that a ratio can be taken against PyTorch at its best rather than at its defaults:
  eager           PyTorch's defaults (pageable host memory, cudnn.benchmark off);
  tuned           cudnn.benchmark on, the unroll batch in pinned host memory, copies non-blocking;
  compile         tuned, with the forward and the loss compiled by torch.compile (inductor);
  compile-graphs  the same with mode="reduce-overhead" (CUDA graphs around compiled regions).
A mode that fails (no compiler, say) prints a line with its error instead of a figure.
Arithmetic is strict float32 as in seedrl's CUDA backend (TF32 off for cuDNN and cuBLAS);
--tf32 allows TF32 in both libraries (PyTorch's default for cuDNN convolutions).

Only for benchmarks: seedrl itself never needs Python.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

T, B, A = 20, 32, 18


class NatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 32, 8, 4)
        self.conv2 = nn.Conv2d(32, 64, 4, 2)
        self.conv3 = nn.Conv2d(64, 64, 3, 1)
        self.fc = nn.Linear(64 * 7 * 7, 512)
        self.policy = nn.Linear(512, A)
        self.value = nn.Linear(512, 1)

    def forward(self, frames):
        x = frames.float() / 255.0
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = F.relu(self.fc(x.flatten(1)))
        return self.policy(x), self.value(x).squeeze(-1)


def vtrace(log_rhos, discounts, rewards, values, bootstrap):
    rhos = log_rhos.exp()
    clipped = rhos.clamp(max=1.0)
    cs = rhos.clamp(max=1.0)
    next_values = torch.cat([values[1:], bootstrap[None]], 0)
    deltas = clipped * (rewards + discounts * next_values - values)
    acc = torch.zeros_like(bootstrap)
    vs_minus_v = []
    for t in reversed(range(log_rhos.shape[0])):
        acc = deltas[t] + discounts[t] * cs[t] * acc
        vs_minus_v.append(acc)
    vs = torch.stack(vs_minus_v[::-1]) + values
    next_vs = torch.cat([vs[1:], bootstrap[None]], 0)
    pg_advantages = clipped * (rewards + discounts * next_vs - values)
    return vs.detach(), pg_advantages.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch default)")
    parser.add_argument("--modes", default="eager", help="comma-separated: " + ",".join(MODES))
    parser.add_argument("--tf32", action="store_true", help="allow TF32 in cuDNN and cuBLAS")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    for mode in args.modes.split(","):
        if mode not in MODES:
            parser.error(f"--modes: unknown mode {mode!r} (one of {', '.join(MODES)})")
    for mode in args.modes.split(","):
        try:
            line = run_mode(mode, torch.device(args.device), args.seconds)
        except Exception as e:  # a mode that cannot run here (torch.compile without a compiler)
            line = {"bench": "vtrace_learner_step", "backend": "pytorch-" + args.device,
                    "mode": mode, "error": f"{type(e).__name__}: {e}"[:500]}
        line["tf32"] = args.tf32
        print(json.dumps(line), flush=True)


MODES = ("eager", "tuned", "compile", "compile-graphs")


def run_mode(mode, device, seconds):
    torch.backends.cudnn.benchmark = mode != "eager"
    torch.manual_seed(1)
    net = NatureNet().to(device)
    optimizer = torch.optim.RMSprop(net.parameters(), lr=6e-4, alpha=0.99, eps=1e-5)

    # The unroll batch as a learner receives it: in host memory.
    host = [torch.randint(0, 256, (T + 1, B, 4, 84, 84), dtype=torch.uint8),
            torch.randint(0, A, (T, B)), torch.randn(T, B, A), torch.rand(T, B),
            torch.full((T, B), 0.99)]
    pinned = mode != "eager" and device.type == "cuda"
    if pinned:
        host = [t.pin_memory() for t in host]

    def loss_of(frames, actions, behaviour_logits, rewards, discounts):
        logits, values = net(frames.reshape((T + 1) * B, 4, 84, 84))
        logits = logits.reshape(T + 1, B, A)
        values = values.reshape(T + 1, B)
        target_logp = F.log_softmax(logits[:-1], -1)
        behaviour_logp = F.log_softmax(behaviour_logits, -1)
        taken = target_logp.gather(-1, actions[..., None]).squeeze(-1)
        log_rhos = taken.detach() - behaviour_logp.gather(-1, actions[..., None]).squeeze(-1)
        vs, advantages = vtrace(log_rhos, discounts, rewards,
                                values[:-1].detach(), values[-1].detach())
        policy_loss = -(taken * advantages).sum()
        baseline_loss = 0.5 * 0.5 * ((vs - values[:-1]) ** 2).sum()
        entropy = -(target_logp.exp() * target_logp).sum(-1).sum()
        return (policy_loss + baseline_loss - 0.01 * entropy) / B

    if mode == "compile":
        loss_of = torch.compile(loss_of)
    elif mode == "compile-graphs":
        loss_of = torch.compile(loss_of, mode="reduce-overhead")

    def step():
        loss = loss_of(*(t.to(device, non_blocking=pinned) for t in host))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 40.0)
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()

    warm_start = time.perf_counter()
    for _ in range(5):  # the first calls compile (torch.compile) and search (cudnn.benchmark)
        step()
    warmup_s = time.perf_counter() - warm_start
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < seconds:
        step()
        calls += 1
    step_s = (time.perf_counter() - start) / calls
    return {
        "bench": "vtrace_learner_step",
        "backend": "pytorch-" + device.type,
        "mode": mode,
        "warmup_s": warmup_s,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "model": "nature",
        "unroll": T,
        "batch": B,
        "threads": torch.get_num_threads(),
        "step_ms": step_s * 1e3,
        "frames_per_s": T * B / step_s,
    }


if __name__ == "__main__":
    main()
