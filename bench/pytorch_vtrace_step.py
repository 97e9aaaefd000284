#!/usr/bin/env python3
"""The V-trace learner step of `bench_nn --vtrace-step`, in PyTorch, for comparison.

Same model (Nature CNN: u8 [4, 84, 84] / 255, conv 32 8x8/4, conv 64 4x4/2, conv 64 3x3/1,
linear 512, policy and value heads, ReLUs), same batch (T = 20 steps + 1 bootstrap, B = 32,
18 actions), same work per step: the unroll batch is copied from host memory to the device, one
forward over the (T + 1) x B frames, V-trace targets (rho_bar = c_bar = 1, lambda = 1,
gamma = 0.99), policy-gradient + 0.5 baseline + 0.01 entropy loss, backward, global-norm clipping
at 40, RMSProp. Prints one JSON line like bench_nn's.

  /usr/bin/python3 bench/pytorch_vtrace_step.py [--device cuda|cpu] [--seconds 3] [--threads K]

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
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(1)
    net = NatureNet().to(device)
    optimizer = torch.optim.RMSprop(net.parameters(), lr=6e-4, alpha=0.99, eps=1e-5)

    # The unroll batch as a learner receives it: in host memory.
    frames = torch.randint(0, 256, (T + 1, B, 4, 84, 84), dtype=torch.uint8)
    actions = torch.randint(0, A, (T, B))
    behaviour_logits = torch.randn(T, B, A)
    rewards = torch.rand(T, B)
    discounts = torch.full((T, B), 0.99)

    def step():
        obs = frames.to(device, non_blocking=False)
        logits, values = net(obs.reshape((T + 1) * B, 4, 84, 84))
        logits = logits.reshape(T + 1, B, A)
        values = values.reshape(T + 1, B)
        act = actions.to(device)
        target_logp = F.log_softmax(logits[:-1], -1)
        behaviour_logp = F.log_softmax(behaviour_logits.to(device), -1)
        taken = target_logp.gather(-1, act[..., None]).squeeze(-1)
        log_rhos = taken.detach() - behaviour_logp.gather(-1, act[..., None]).squeeze(-1)
        vs, advantages = vtrace(log_rhos, discounts.to(device), rewards.to(device),
                                values[:-1].detach(), values[-1].detach())
        policy_loss = -(taken * advantages).sum()
        baseline_loss = 0.5 * 0.5 * ((vs - values[:-1]) ** 2).sum()
        entropy = -(target_logp.exp() * target_logp).sum(-1).sum()
        loss = (policy_loss + baseline_loss - 0.01 * entropy) / B
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 40.0)
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):
        step()
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < args.seconds:
        step()
        calls += 1
    step_s = (time.perf_counter() - start) / calls
    line = {
        "bench": "vtrace_learner_step",
        "backend": "pytorch-" + device.type,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "model": "nature",
        "unroll": T,
        "batch": B,
        "threads": torch.get_num_threads(),
        "step_ms": step_s * 1e3,
        "frames_per_s": T * B / step_s,
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
