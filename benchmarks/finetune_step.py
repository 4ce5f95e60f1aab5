"""A fine-tuning step with each run's gradient clipped from its factors, against clipping the formed gradients.

Table 2's steps at the book profile's shapes: phase 2 of R = 6 runs (3 seeds × 2 η) side by side, batches of 16,
the last layer of all-MiniLM-L6-v2 (D = 384, 12 heads) on tokens of `--length` positions; and phase 1, the head
(pooler and classifier) of R = 3 runs on fixed first-token features. Two ways, the same gradient and the same AdamW
update (one thread, inputs drawn at random in the data's shapes: the cost does not depend on the values):
  factors  `firsttoken.loss_and_grad` / `head_loss_and_grad` with `max_grad_norm` = 1: each run's norm from the
           (R, B, ·) factors of its gradient (`firsttoken.outer_norm_sq`), the factors scaled before the products;
  formed   the same functions unclipped, then `clip_grad_norm_`'s arithmetic on the formed (R, D, D) gradients, one
           pass to square and sum them and one to scale them (what the trainer did before).
Both are checked to give the same clipped gradients (to float32 rounding). Prints the milliseconds per step of each
(the best of `--repeats` rounds of `--steps` steps, the two ways alternating) and ends with `ratio N` = formed /
factors for phase 2's step.
Usage: python benchmarks/finetune_step.py [--steps 200] [--repeats 5] [--length 32]
"""

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from benign import speed  # noqa: E402
from benign.realdata import backbones, firsttoken, training  # noqa: E402

R2, R1, B = 6, 3, 16  # runs side by side in phase 2 and phase 1, batch size


def formed_clip(grads: dict, max_grad_norm: float = 1.0) -> None:
    """`clip_grad_norm_` per run on formed gradients (R, ...), in place: the trainer's clipping before."""
    R = next(iter(grads.values())).shape[0]
    norm = sum(g.reshape(R, -1).pow(2).sum(1) for g in grads.values()).sqrt()
    coef = firsttoken.clip_coef(norm, max_grad_norm)
    for g in grads.values():
        g.mul_(coef.view(R, *([1] * (g.dim() - 1))))


def steps_of(gradient, params: dict, clip_formed: bool):
    """A function running k optimizer steps of `gradient(max_grad_norm)` on `params` (stacked) with AdamW."""
    opt = training.RunOptimizer(list(params.values()), "adamw")

    def run(k: int) -> dict:
        for _ in range(k):
            _, grads, _ = gradient(float("inf") if clip_formed else 1.0)
            if clip_formed:
                formed_clip(grads)
            opt.step([grads[name] for name in params], 5e-5)
        return grads

    return run


def timed(ways: dict, steps: int, repeats: int) -> dict:
    """The best milliseconds per step of each way over `repeats` rounds, the ways alternating within a round."""
    best = {name: float("inf") for name in ways}
    for _ in range(repeats):
        for name, run in ways.items():
            started = time.perf_counter()
            run(steps)
            best[name] = min(best[name], (time.perf_counter() - started) / steps * 1e3)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--length", type=int, default=32, help="token positions per sample (Rotten Tomatoes: ~30)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    bb = backbones.Backbone("all-minilm-l6-v2", 2, device="cpu")
    D, gen = bb.tail.W1.shape[1], torch.Generator().manual_seed(0)
    x = torch.randn(R2 * B, args.length, D, generator=gen)
    tokens = firsttoken.Tokens.whole(x[:, 0].contiguous(), torch.randn(R2 * B, D, generator=gen), x,
                                     torch.ones(R2 * B, args.length, dtype=torch.bool))
    y2 = torch.randint(0, 2, (R2, B), generator=gen)
    heads2 = training.stack([bb.seeded_head(s) for s in range(R2)])
    qk = training.stack([bb.reset_qk(s) for s in range(R2)])
    z, y1 = torch.randn(R1, B, D, generator=gen), torch.randint(0, 2, (R1, B), generator=gen)
    heads1 = training.stack([bb.seeded_head(s) for s in range(R1)])

    def phase2(max_norm):
        return firsttoken.loss_and_grad(tokens, y2, qk, heads2, bb.tail, max_norm)

    def phase1(max_norm):
        return firsttoken.head_loss_and_grad(z, y1, heads1, bb.arch, max_norm)

    print(f"all-MiniLM-L6-v2's last layer, D = {D}, one thread; phase 2: {R2} runs × {B} samples × {args.length} "
          f"tokens; phase 1: {R1} runs × {B} samples")
    ratio = None
    for name, gradient, params in (("phase 2", phase2, qk), ("phase 1", phase1, heads1)):
        same = {way: steps_of(gradient, {k: v.clone() for k, v in params.items()}, way == "formed")(1)
                for way in ("factors", "formed")}
        for k in same["factors"]:
            torch.testing.assert_close(same["factors"][k], same["formed"][k], rtol=1e-4, atol=1e-7)
        best = timed({way: steps_of(gradient, {k: v.clone() for k, v in params.items()}, way == "formed")
                      for way in ("factors", "formed")}, args.steps, args.repeats)
        print(f"{name}: factors {best['factors']:.2f} ms per step, formed {best['formed']:.2f} ms per step "
              f"(same clipped gradients)")
        ratio = ratio or best["formed"] / best["factors"]
    print(f"ratio {ratio:.2f}")


if __name__ == "__main__":
    with speed.recorded("finetune_step"):  # also saved as results/benchmarks/finetune_step.json
        main()
