#!/usr/bin/env python3
"""The SAC update of bench_sac, in PyTorch, as CleanRL's sac_continuous_action.py computes it.

HalfCheetah's sizes (17 observations, 6 actions in [-1, 1]), actor and twin critics MLPs of
256 x 256 (the critics on [observation, action]), batch 256 sampled from a replay of 20,000
random transitions, log std bounded to [-5, 2], the critics' targets from the target critics and
the entropy term, the actor loss through the reparameterised sample, the temperature loss, Adam
for each (3e-4 actor, 1e-3 critics and temperature), Polyak averaging of the targets (tau 0.005):
one update per iteration, as bench_sac's. Prints one JSON line.

  /usr/bin/python3 bench/pytorch_sac_update.py [--threads 2] [--seconds 5]

Only for benchmarks: seedrl itself never needs Python. Debian's PyTorch computes with whatever
libblas.so.3 the alternatives system selects (install libopenblas0-pthread before timing it);
the line says which.
"""
import argparse
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

OBS, ACT, HIDDEN, BATCH, WINDOWS = 17, 6, 256, 256, 20_000
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class SoftQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(OBS + ACT, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(OBS, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc_mean = nn.Linear(HIDDEN, ACT)
        self.fc_logstd = nn.Linear(HIDDEN, ACT)

    def get_action(self, x):
        x = F.relu(self.fc2(F.relu(self.fc1(x))))
        mean = self.fc_mean(x)
        log_std = torch.tanh(self.fc_logstd(x))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        normal = torch.distributions.Normal(mean, log_std.exp())
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        log_prob = normal.log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)
        return y_t, log_prob.sum(1, keepdim=True)


def blas_name():
    for path in ("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", "/etc/alternatives/libblas.so.3"):
        if os.path.exists(path):
            return os.path.realpath(path)
    return "unknown"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    actor = Actor()
    qf1, qf2, qf1_target, qf2_target = SoftQNetwork(), SoftQNetwork(), SoftQNetwork(), SoftQNetwork()
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    q_optimizer = torch.optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=1e-3)
    actor_optimizer = torch.optim.Adam(list(actor.parameters()), lr=3e-4)
    log_alpha = torch.zeros(1, requires_grad=True)
    a_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
    target_entropy = -float(ACT)
    gamma, tau = 0.99, 0.005

    observations = torch.randn(WINDOWS, OBS)
    next_observations = torch.randn(WINDOWS, OBS)
    actions = torch.rand(WINDOWS, ACT) * 2 - 1
    rewards = torch.randn(WINDOWS)
    dones = torch.zeros(WINDOWS)

    def update():
        index = torch.randint(0, WINDOWS, (BATCH,))
        obs, next_obs, act = observations[index], next_observations[index], actions[index]
        rew, done = rewards[index], dones[index]
        alpha = log_alpha.exp().item()
        with torch.no_grad():
            next_actions, next_log_pi = actor.get_action(next_obs)
            min_next = torch.min(qf1_target(next_obs, next_actions), qf2_target(next_obs, next_actions))
            min_next = min_next - alpha * next_log_pi
            target = rew + (1 - done) * gamma * min_next.view(-1)
        qf1_loss = 0.5 * F.mse_loss(qf1(obs, act).view(-1), target)
        qf2_loss = 0.5 * F.mse_loss(qf2(obs, act).view(-1), target)
        q_optimizer.zero_grad()
        (qf1_loss + qf2_loss).backward()
        q_optimizer.step()

        pi, log_pi = actor.get_action(obs)
        min_q = torch.min(qf1(obs, pi), qf2(obs, pi))
        actor_loss = ((alpha * log_pi) - min_q).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()

        with torch.no_grad():
            _, log_pi = actor.get_action(obs)
        alpha_loss = (-log_alpha * (log_pi + target_entropy)).mean()
        a_optimizer.zero_grad()
        alpha_loss.backward()
        a_optimizer.step()

        with torch.no_grad():
            for p, tp in zip(qf1.parameters(), qf1_target.parameters()):
                tp.mul_(1 - tau).add_(tau * p)
            for p, tp in zip(qf2.parameters(), qf2_target.parameters()):
                tp.mul_(1 - tau).add_(tau * p)

    for _ in range(5):
        update()
    start = time.perf_counter()
    updates = 0
    while time.perf_counter() - start < args.seconds:
        update()
        updates += 1
    elapsed = time.perf_counter() - start
    rate = updates / elapsed
    print(json.dumps({"bench": "sac_update", "impl": "pytorch", "updates_per_s": round(rate, 1),
                      "ms_per_update": round(1e3 / rate, 3), "threads": args.threads,
                      "torch": torch.__version__, "blas": blas_name()}), flush=True)


if __name__ == "__main__":
    main()
