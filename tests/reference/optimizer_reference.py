#!/usr/bin/env python3
"""The reference side of tests/train/optimizer_reference_test.cpp: the published update rules,
written out here in float64 from their papers and reference implementations (not from
mlm-train's code), run over the steps the C++ test recorded.

    .venv/bin/python tests/reference/optimizer_reference.py IN.safetensors OUT.safetensors \\
        TYPE [key=value ...]

IN holds the starting parameters (init.NAME), each step's gradients (grad.STEP.NAME, STEP
counted from 1), `schedule` ([steps, 3]: lr, clip divisor, found_inf per step) and `decay`
(the names of the decayed group, one 0/1 flag per parameter in `names` order, with
`names` a uint8 tensor of the newline-joined names). A step with found_inf 1 is not taken at
all (the optimizer never sees it; step counts do not advance). OUT gets the parameters after
every step (param.STEP.NAME) and, for stable_adamw, the per-tensor RMS (rms.STEP.NAME).

TYPE and its settings (betas, eps, weight_decay, max_lr, bias_correction, use_nvlamb,
decouple_lr):
  adamw         Loshchilov & Hutter's AdamW as torch.optim.AdamW computes it: w *= 1 - lr wd,
                then w -= lr m^ / (sqrt(v^) + eps)
  lamb          NVIDIA's LAMB (apex FusedLAMB, adam_w_mode, grad_averaging): Adam moments,
                optional bias correction, u = m^ / (sqrt(v^) + eps) + wd w, w -= lr r u with
                r = ||w|| / ||u|| (1 when either is 0) where wd != 0 or use_nvlamb, else 1
  stable_adamw  optimi's StableAdamW as ModernBERT uses it: debiased betas
                beta^ = (beta^t - beta) / (beta^t - 1) keep the moments bias-corrected,
                rms = sqrt(mean(g^2 / max(v, eps^2))), lr_t = lr / max(1, rms),
                w *= 1 - lr_t / max_lr wd (decouple_lr) or 1 - lr_t wd, w -= lr_t m / (sqrt(v) + eps)
"""
import sys

import torch
from safetensors.torch import load_file, save_file


def adamw(w, g, s, lr, t, wd, o):
    b1, b2, eps = o["beta1"], o["beta2"], o["eps"]
    w.mul_(1 - lr * wd)
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    m_hat = s["m"] / (1 - b1**t)
    v_hat = s["v"] / (1 - b2**t)
    w.sub_(lr * m_hat / (v_hat.sqrt() + eps))


def lamb(w, g, s, lr, t, wd, o):
    b1, b2, eps = o["beta1"], o["beta2"], o["eps"]
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    m_hat, v_hat = s["m"], s["v"]
    if o["bias_correction"]:
        m_hat = m_hat / (1 - b1**t)
        v_hat = v_hat / (1 - b2**t)
    update = m_hat / (v_hat.sqrt() + eps) + wd * w
    ratio = 1.0
    if wd != 0 or o["use_nvlamb"]:
        w_norm, u_norm = w.norm().item(), update.norm().item()
        if w_norm != 0 and u_norm != 0:
            ratio = w_norm / u_norm
    w.sub_(lr * ratio * update)


def debiased_beta(beta, t):
    return (beta**t - beta) / (beta**t - 1)


def stable_adamw(w, g, s, lr, t, wd, o):
    b1, b2, eps = debiased_beta(o["beta1"], t), debiased_beta(o["beta2"], t), o["eps"]
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    rms = (g * g / s["v"].clamp_min(eps * eps)).mean().sqrt().item()
    s["rms"] = rms
    lr_t = lr / max(1.0, rms)
    if wd != 0:
        w.mul_(1 - (lr_t / o["max_lr"] if o["decouple_lr"] else lr_t) * wd)
    w.sub_(lr_t * s["m"] / (s["v"].sqrt() + eps))


RULES = {"adamw": adamw, "lamb": lamb, "stable_adamw": stable_adamw}


def main():
    in_path, out_path, kind = sys.argv[1:4]
    options = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-6, "weight_decay": 0.01, "max_lr": 0.0,
               "bias_correction": 1, "use_nvlamb": 0, "decouple_lr": 1}
    for item in sys.argv[4:]:
        key, value = item.split("=")
        options[key] = float(value)
    rule = RULES[kind]
    data = load_file(in_path)
    names = bytes(data["names"].tolist()).decode().split("\n")
    decayed = dict(zip(names, data["decay"].tolist()))
    params = {n: data["init." + n].double().clone() for n in names}
    states = {n: {"m": torch.zeros_like(p), "v": torch.zeros_like(p)} for n, p in params.items()}
    out = {}
    t = 0
    for step, (lr, divisor, found_inf) in enumerate(data["schedule"].tolist(), start=1):
        if found_inf == 0:
            t += 1
            for n in names:
                g = data[f"grad.{step}.{n}"].double() / divisor
                wd = options["weight_decay"] if decayed[n] else 0.0
                rule(params[n], g, states[n], lr, t, wd, options)
        for n in names:
            out[f"param.{step}.{n}"] = params[n].clone()
            if "rms" in states[n]:
                out[f"rms.{step}.{n}"] = torch.tensor(states[n]["rms"], dtype=torch.float64)
    save_file(out, out_path)


if __name__ == "__main__":
    main()
