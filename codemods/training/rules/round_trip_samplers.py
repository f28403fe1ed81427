"""Cases of XLA203's round trips (rules/round_trips.py): a rollout sampler that moves the policy an
optimizer steps to the CPU and back through a helper of its module."""

# A sampler that takes the policy to the CPU and back through a helper of its module, built after the
# optimizer over it (the rollouts run on the CPU): reported where the sampler is handed the policy.
SAMPLED_ON_THE_CPU = """
import torch
import torch.nn as nn


def move_all(device, *modules):
    return [m.to(device) for m in modules]


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        move_all(torch.device("cpu"), self.policy)
        with torch.no_grad():
            obs = torch.randn(n, 4)
            self.policy(obs)
        move_all(self.device, self.policy)
        return obs


device = torch.device("cuda")
policy = nn.Linear(4, 2).to(device)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
sampler = Sampler(policy, device)
for it in range(3):
    obs = sampler.collect(16).to(device)
    optimizer.zero_grad()
    policy(obs).sum().backward()
    optimizer.step()
"""
SAMPLED_ON_THE_CPU_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


def move_all(device, *modules):
    return [m.to(device) for m in modules]


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        move_all(torch.device("cpu"), self.policy)
        with torch.no_grad():
            obs = torch.randn(n, 4)
            self.policy(obs)
        move_all(self.device, self.policy)
        return obs


device = torch_xla.device()
policy = nn.Linear(4, 2).to(device)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
sampler = Sampler(policy, device)
for it in range(3):
    obs = sampler.collect(16).to(device)
    optimizer.zero_grad()
    policy(obs).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""
# The same sampler running a CPU copy of the policy: the optimizer's parameters stay where they are.
SAMPLED_WITH_A_CPU_COPY = """
import copy

import torch
import torch.nn as nn


def move_all(device, *modules):
    return [m.to(device) for m in modules]


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        cpu_policy = copy.deepcopy(self.policy).cpu()
        with torch.no_grad():
            obs = torch.randn(n, 4)
            cpu_policy(obs)
        return obs


device = torch.device("cuda")
policy = nn.Linear(4, 2).to(device)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
sampler = Sampler(policy, device)
for it in range(3):
    obs = sampler.collect(16).to(device)
    optimizer.zero_grad()
    policy(obs).sum().backward()
    optimizer.step()
"""
SAMPLED_WITH_A_CPU_COPY_PORTED = """
import copy

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


def move_all(device, *modules):
    return [m.to(device) for m in modules]


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        cpu_policy = copy.deepcopy(self.policy).cpu()
        with torch.no_grad():
            obs = torch.randn(n, 4)
            cpu_policy(obs)
        return obs


device = torch_xla.device()
policy = nn.Linear(4, 2).to(device)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
sampler = Sampler(policy, device)
for it in range(3):
    obs = sampler.collect(16).to(device)
    optimizer.zero_grad()
    policy(obs).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""
