"""The protocol, the tasks (a data set with the backbone of its kind) and every run of the table, cached on disk.

A run is one (data set, seed, η, n) cell entry. Runs are cached one JSON file each under a hash of everything that
decides them: the protocol, the data, the backbone's weights, the seed, η, n — and the code that computes them
(`records.code_fingerprint` of this module, which covers every module of the package it imports, with the torch,
numpy, transformers and tokenizers versions), so a change of the code is recomputed, never served stale. Table 2
and Figures 8/9 read the same runs. A run is written as soon as its group (its n) finishes, so an interrupted grid
resumes where it stopped.
"""

from __future__ import annotations

import functools
import time
import uuid
from dataclasses import asdict, dataclass, field, fields

import numpy as np
import pandas as pd
import torch

from ..checks import ParameterError, check_all
from ..device import cpu_threads, resolve_device, stop_workers, worker_processes
from ..paths import cache_dir
from ..records import cache_key, code_fingerprint, environment, read_cached, write_cached
from .backbones import BACKBONE_LABELS, Backbone, backbone_folder
from .image_backbone import NAME as IMAGE_BACKBONE, cached as image_backbone_cached
from .datasets import RawData, add_label_noise, load, split_indices, take
from .firsttoken import frozen_flops, head_flops, head_logits, step_flops
from .reach import Reach, reach
from .training import Encoded, Schedule, encode, phase1, phase2, predict, stack

SEEDS = (42, 314, 2718)
PAPER_GRID = dict(seeds=list(SEEDS), noise_ratios=[0.0, 0.2], sample_sizes=[20, 200, 1000])
CODE = __name__  # the module whose code (and everything it imports) keys the cache
CODE_PACKAGES = ("torch", "numpy", "transformers", "tokenizers")


@dataclass(frozen=True)
class Protocol:
    """Everything that decides a run besides data set, backbone, seed, η and n (defaults: the paper's)."""

    pretrain_num_epochs: int = 300  # phase 1
    num_epochs: int = 2000  # phase 2's schedule: the learning rate decays to 0 over this many epochs
    stop_when_fitted: bool = False  # stop a run once it predicts every training label, noisy ones included
    max_epochs: int = 0  # phase 2 runs at most this many epochs (where n >= max_epochs_from_n), 0: num_epochs
    max_epochs_from_n: int = 0  # the cap applies to these n and larger (0: to every n)
    batch_size: int = 16
    optimizer: str = "adamw"
    add_special_tokens: bool = False
    pretrain_size: int = 0  # 0: the size for the data set (the paper's for its data sets)
    max_test: int = 0  # 0: the whole test split

    def __post_init__(self):
        check_all(**asdict(self))

    def phase1(self) -> Schedule:
        return Schedule(self.pretrain_num_epochs, self.batch_size, self.optimizer)

    def phase2(self, n: int) -> Schedule:
        cap = self.max_epochs if n >= self.max_epochs_from_n else 0
        return Schedule(self.num_epochs, self.batch_size, self.optimizer, cap, self.stop_when_fitted)


PROTOCOL_PARAMETERS = tuple(f.name for f in fields(Protocol))
PHASE2_ONLY = ("num_epochs", "stop_when_fitted", "max_epochs", "max_epochs_from_n")  # the rest decides phase 1 too


def protocol_from(parameters: dict) -> Protocol:
    """The protocol a notebook's parameters ask for (the one place a Protocol is built from them)."""
    return Protocol(**{k: parameters[k] for k in PROTOCOL_PARAMETERS})


@dataclass
class Task:
    """One row of the table: a data set (by its short name) with the backbone of its kind."""

    dataset: str
    backbone: str
    data: RawData = field(repr=False)
    bb: Backbone = field(repr=False)

    @property
    def label(self) -> str:
        return f"{self.dataset} · {BACKBONE_LABELS.get(self.backbone, self.backbone)}"


def prepare(dataset: str | RawData, text_backbone: str, image_backbone: str, vit_recipe: dict | None = None,
            progress: bool = False, device: str = "auto") -> Task:
    """A data set (its name, loaded here, or already loaded) with the backbone of its kind (text: BERT, images: ViT)
    and a head for its classes."""
    data = dataset if isinstance(dataset, RawData) else load(dataset)
    name = text_backbone if data.kind == "text" else image_backbone
    bb = Backbone(name, data.num_classes, vit_recipe, progress, device)
    if bb.kind != data.kind:
        raise ParameterError(f"backbone {name!r} reads {bb.kind}, but {data.name!r} holds {data.kind}: "
                             f"choose a {data.kind} backbone")
    return Task(data.name, name, data, bb)


def pretrain_size(data: RawData, protocol: Protocol, sample_sizes) -> int:
    """The clean phase-1 subset's size: the protocol's, or the data set's, leaving room for the smallest n."""
    return min(protocol.pretrain_size or data.pretrain_size, len(data.train_labels) - min(sample_sizes))


def fitting_sizes(data: RawData, protocol: Protocol, sample_sizes) -> list[int]:
    """The n that fit beside the pretrain subset in the pool (the others are n/a, as the paper's BreastMNIST 1000)."""
    pretrain = pretrain_size(data, protocol, sample_sizes)
    return sorted(n for n in sample_sizes if pretrain >= 1 and pretrain + n <= len(data.train_labels))


# --------------------------------------------------------------------------------------------- the cache
@functools.cache
def code_of(module: str) -> str:
    """The fingerprint of the code this process computes runs with (`records.code_fingerprint` of `module`), taken
    when it first keys a run and kept: a process keys what it computes by the code it imported, whatever its source
    files become while it runs (a changed source is a new key in the next process)."""
    return code_fingerprint(module, packages=CODE_PACKAGES)


def _read(key: str):
    return read_cached(cache_dir("finetune"), key)  # missing, or damaged: computed again


def _plan(data: RawData, backbone: str, device: str, protocol: Protocol, seeds, noise_ratios, sample_sizes):
    """The cache key of every (seed, η, n) run of a data set with a backbone (its fingerprint) on a device (type),
    its pretrain size and the fingerprint of the code."""
    pretrain = pretrain_size(data, protocol, sample_sizes)
    sizes = fitting_sizes(data, protocol, sample_sizes)
    if not sizes:
        raise ParameterError(f"{data.name} has {len(data.train_labels)} training samples: too few for pretrain_size "
                             f"{protocol.pretrain_size or data.pretrain_size} and n = {min(sample_sizes)}")
    code = code_of(CODE)
    common = dict(dataset=data.name, data=data.fingerprint(), backbone=backbone, protocol=asdict(protocol),
                  pretrain=pretrain, code=code, device=device)
    keys = {(s, float(eta), n): cache_key({**common, "seed": s, "noise_ratio": float(eta), "n": n})
            for n in sizes for eta in noise_ratios for s in seeds}
    return keys, pretrain, code


def _planned(task: Task, protocol: Protocol, seeds, noise_ratios, sample_sizes):
    """`_plan` for a task, and each run as the cache holds it (None where it does not)."""
    keys, pretrain, code = _plan(task.data, task.bb.fingerprint, task.bb.device.type, protocol, list(seeds),
                                 noise_ratios, sample_sizes)
    return keys, pretrain, code, {k: _read(v) for k, v in keys.items()}


def cached_grid(task: Task, protocol: Protocol, seeds, noise_ratios, sample_sizes) -> pd.DataFrame:
    """The runs of a grid that the cache holds, none computed (an empty table when it holds none)."""
    return pd.DataFrame([row for row in _planned(task, protocol, seeds, noise_ratios, sample_sizes)[3].values()
                         if row is not None])


def run_grid(task: Task, protocol: Protocol, seeds, noise_ratios, sample_sizes, progress: bool = False) -> pd.DataFrame:
    """Every (seed, η, n) run of one task, from the disk cache where possible; one row per run.

    Columns: dataset, backbone, seed, noise_ratio, n, pretrain_size, base_acc, train_loss, train_acc, test_acc,
    fitted (stopped because every label was predicted), fitted_noisy (share of flipped labels fitted), reach_free
    and reach_token (shares of flipped labels free scores can fit, and some single token gives: `reach`), epochs_run,
    loss and max_attention (per epoch), and how the run was made (protocol, versions, device, threads, code).
    """
    return run_grids(task, [(protocol, seeds, noise_ratios, sample_sizes)], progress)[0]


def run_grids(task: Task, grids: list[tuple], progress: bool = False) -> list[pd.DataFrame]:
    """`run_grid` for several grids (protocol, seeds, noise_ratios, sample_sizes) of one task, one table each. Grids
    whose protocols differ only in phase 2's length or stopping (`PHASE2_ONLY`) share the frozen layers and phase 1:
    the runs either lacks are computed together, each group of equal n and protocol under its own phase 2."""
    plans, missing = [], {}
    for protocol, seeds, noise_ratios, sample_sizes in grids:
        keys, pretrain, code, done = _planned(task, protocol, seeds, noise_ratios, sample_sizes)
        plans.append(done)
        shared = (pretrain, *(v for k, v in asdict(protocol).items() if k not in PHASE2_ONLY))
        for k, row in done.items():
            if row is None:
                missing.setdefault(shared, {}).setdefault((protocol, *k), []).append((done, keys[k]))
    for (pretrain, *_), wanted in missing.items():
        def save(cell, row, wanted=wanted):
            row["code"] = code
            for done, key in wanted[cell]:  # a run two grids ask for is computed once
                write_cached(cache_dir("finetune"), key, row)
                done[cell[1:]] = row

        seeds = list(dict.fromkeys(s for _, s, _, _ in wanted))
        _compute(task, pretrain, seeds, list(wanted), save, progress)
    return [pd.DataFrame(list(done.values())) for done in plans]


# ------------------------------------------------------------------------------------------ computing runs
@dataclass
class _Prepared:
    """The frozen layers' outputs for one task: finetune samples and test set with tokens, the rest features only."""

    fin: Encoded
    test: Encoded
    row_of: dict  # training-pool index -> row of `fin`
    z_of: dict  # training-pool index -> phase-1 feature
    encode_s: float
    encode_flops: float  # the frozen layers' counted work (`frozen_flops`)


def _encode_all(task: Task, protocol: Protocol, splits: dict, test_rows: np.ndarray) -> _Prepared:
    data, bb = task.data, task.bb
    started = time.perf_counter()
    fin_union = np.unique(np.concatenate([fin for _, fin in splits.values()]))
    pre_union = np.setdiff1d(np.unique(np.concatenate([pre for pre, _ in splits.values()])), fin_union)
    fin = encode(bb, take(data.train_inputs, fin_union), protocol.add_special_tokens)
    test = encode(bb, take(data.test_inputs, test_rows), protocol.add_special_tokens)
    z_of = {int(i): fin.z[r] for r, i in enumerate(fin_union)}
    encoded = [fin, test]
    if len(pre_union):
        encoded.append(encode(bb, take(data.train_inputs, pre_union), protocol.add_special_tokens, keep_tokens=False))
        z_of.update({int(i): encoded[-1].z[r] for r, i in enumerate(pre_union)})
    lengths = torch.cat([e.lengths for e in encoded]).double()
    frozen = bb.model.config.num_hidden_layers - 1
    work = frozen_flops(bb.tail, frozen, lengths.sum().item(), lengths.square().sum().item())
    return _Prepared(fin, test, {int(i): r for r, i in enumerate(fin_union)}, z_of, time.perf_counter() - started, work)


def _phase1_heads(task: Task, protocol: Protocol, splits: dict, seeds: list[int], prep: _Prepared,
                  test_y: torch.Tensor):
    """Phase 1 for every seed side by side; returns per-seed heads, base accuracies and the Fit."""
    bb, labels = task.bb, torch.as_tensor(task.data.train_labels)
    z = torch.stack([torch.stack([prep.z_of[int(i)] for i in splits[s][0]]) for s in seeds])
    y = torch.stack([labels[torch.as_tensor(splits[s][0])] for s in seeds]).to(bb.device)
    result = phase1(bb, z, y, [bb.seeded_head(s) for s in seeds], protocol.phase1(), seeds)
    with torch.no_grad():
        logit = head_logits(prep.test.z[None].expand(len(seeds), -1, -1), result.params, bb.arch)
    base = (logit.argmax(-1) == test_y).double().mean(1).cpu().numpy()
    heads = {s: {k: v[i] for k, v in result.params.items()} for i, s in enumerate(seeds)}
    return heads, base, result


def _phase2_group(task: Task, protocol: Protocol, splits: dict, group: list[tuple], prep: _Prepared,
                  heads: dict, test_y: torch.Tensor, progress: bool) -> list[dict]:
    """Phase 2 of the runs (seed, η, n) of one n side by side; one result dict per run."""
    data, bb, dev = task.data, task.bb, task.bb.device
    rows, noisy, flipped = [], [], []
    for s, eta, n in group:
        idx = splits[s][1][:n]
        labels, flips = add_label_noise(data.train_labels[idx], eta, data.num_classes, s)
        rows.append(torch.as_tensor([prep.row_of[int(i)] for i in idx]))
        noisy.append(torch.as_tensor(labels))
        flipped.append(flips)
    sample_idx, y = torch.stack(rows).to(dev), torch.stack(noisy).to(dev)
    run_heads = stack([heads[s] for s, _, _ in group])
    result = phase2(bb, prep.fin, sample_idx, y, run_heads, [bb.reset_qk(s) for s, _, _ in group],
                    protocol.phase2(group[0][2]), [s for s, _, _ in group], progress=progress)
    started = time.perf_counter()
    test_pred = predict(bb, prep.test, torch.arange(len(test_y), device=dev), run_heads, result.params)
    test_acc = (test_pred == test_y).double().mean(1).cpu().numpy()
    right = (predict(bb, prep.fin, sample_idx, run_heads, result.params) == y).cpu().numpy()
    evaluate_s, started = time.perf_counter() - started, time.perf_counter()
    within = [_reach_of(task, prep.fin, sample_idx[r], y[r], flipped[r], {k: v[r] for k, v in run_heads.items()})
              for r in range(len(group))]
    reach_s = time.perf_counter() - started
    group_id = uuid.uuid4().hex[:12]  # the runs computed together: their group's times are one measurement
    per_sample = step_flops(bb.tail, prep.fin.lengths[sample_idx.flatten()], data.num_classes) / sample_idx.numel()
    phase2_flops = per_sample * result.sample_steps  # the training steps' counted work (`step_flops`)
    out = []
    for r in range(len(group)):
        out.append(dict(train_loss=float(result.epoch_loss[r][-1]), train_acc=float(right[r].mean()),
                        reach_free=within[r].free_share, reach_token=within[r].token_share,
                        fitted=bool(result.fitted[r]),
                        fitted_noisy=float(right[r][flipped[r]].mean()) if flipped[r].any() else None,
                        n_flipped=int(flipped[r].sum()), test_acc=float(test_acc[r]),
                        epochs_run=int(result.epochs_run[r]), loss=result.epoch_loss[r].tolist(),
                        max_attention=result.epoch_max_attention[r].tolist(),
                        phase2_s=round(result.wall_s - result.epoch_end_s, 2),
                        phase2_epoch_end_s=round(result.epoch_end_s, 2), phase2_sample_steps=result.sample_steps,
                        phase2_group=group_id,
                        evaluate_s=round(evaluate_s, 2), reach_s=round(reach_s, 2), phase2_flops=phase2_flops))
    return out


def _reach_of(task: Task, cache: Encoded, rows: torch.Tensor, labels: torch.Tensor, flips: np.ndarray,
              head: dict) -> Reach:
    """The reach of a run's flipped samples (`reach`): free scores, and single tokens, with its phase-1 head."""
    at = rows[torch.as_tensor(np.flatnonzero(flips), dtype=torch.long, device=rows.device)]
    L = int(cache.lengths[at].max()) if len(at) else 1
    return reach(cache.x[at, :L], cache.mask[at, :L], cache.h0[at], labels[torch.as_tensor(flips, device=rows.device)],
                 head, task.bb.tail)


def _compute(task: Task, pretrain: int, seeds: list[int], wanted: list[tuple], save, progress: bool) -> None:
    """The wanted runs (protocol, seed, η, n), their protocols alike but for phase 2: frozen layers once, phase 1
    once per seed, phase 2 by groups of equal protocol and n, each group saved (save(cell, row)) as soon as it is
    done."""
    data, protocol = task.data, wanted[0][0]  # phase 1 is the same under every protocol wanted
    need_seeds = sorted({s for _, s, _, _ in wanted}, key=seeds.index)
    splits = {s: split_indices(len(data.train_labels), pretrain, max(n for *_, n in wanted), s) for s in need_seeds}
    test_rows = np.arange(len(data.test_labels))[:protocol.max_test or None]
    test_y = torch.as_tensor(data.test_labels[test_rows], device=task.bb.device)
    prep = _encode_all(task, protocol, splits, test_rows)
    heads, base, p1 = _phase1_heads(task, protocol, splits, need_seeds, prep, test_y)
    made = dict(computation=uuid.uuid4().hex[:12], pretrain_size=pretrain, n_test=len(test_rows),
                encode_s=round(prep.encode_s, 2),
                phase1_s=round(p1.wall_s, 2), encode_flops=prep.encode_flops,
                phase1_flops=p1.sample_steps * head_flops(task.bb.tail, data.num_classes),
                threads=torch.get_num_threads(), **environment(task.bb.device))
    for group_protocol, n in dict.fromkeys((c[0], c[3]) for c in sorted(wanted, key=lambda c: c[3])):
        group = [c[1:] for c in wanted if c[0] == group_protocol and c[3] == n]
        for (s, eta, _), result in zip(group, _phase2_group(task, group_protocol, splits, group, prep, heads, test_y,
                                                              progress)):
            i = need_seeds.index(s)
            save((group_protocol, s, eta, n), dict(
                dataset=task.dataset, backbone=task.backbone, seed=s, noise_ratio=eta, n=n, base_acc=float(base[i]),
                phase1_loss=float(p1.epoch_loss[i][-1]), **result, protocol=asdict(group_protocol), **made))


def recipe_from(p: dict) -> dict:
    """The image backbone's recipe overrides a notebook's parameters ask for."""
    return dict(epochs=p["vit_pretrain_epochs"], samples=p["vit_pretrain_samples"], layers=p["vit_layers"])


def _grid_of(parameters: dict, dataset: str) -> None:
    """One row's runs, computed (in a worker process) and left in the cache."""
    p = parameters
    with cpu_threads(p["cpu_threads"]):
        task = prepare(dataset, p["text_backbone"], p["image_backbone"], recipe_from(p), p["progress"], p["device"])
        run_grid(task, protocol_from(p), p["seeds"], p["noise_ratios"], p["sample_sizes"], p["progress"])


def _compute_in_workers(parameters: dict, data: dict, protocol: Protocol, device: str) -> None:
    """The rows whose runs are not all cached, computed side by side in `processes` worker processes (left in the
    cache), longest first — text rows, then the larger pools — so the last rows to start are the shortest. The image
    backbone, when it is to be made, is the workers' first job, and the image rows are given to them once it is made:
    every process keeps to one thread and the cores hold one job each."""
    p = parameters
    backbones = {name: p["text_backbone"] if d.kind == "text" else p["image_backbone"] for name, d in data.items()}
    for backbone in set(backbones.values()) - {IMAGE_BACKBONE}:
        backbone_folder(backbone)  # a bad name or folder fails here, before any row starts
    pool = worker_processes(p["processes"])
    try:
        futures, made = [], None
        if IMAGE_BACKBONE in backbones.values() and not image_backbone_cached(recipe_from(p)):
            made = pool.submit(backbone_folder, IMAGE_BACKBONE, recipe_from(p), p["progress"])
        for name in sorted(data, key=lambda name: (data[name].kind != "text", -len(data[name].train_labels))):
            if made is not None and backbones[name] == IMAGE_BACKBONE:
                made.result()  # the text rows are under way meanwhile
                made = None  # waited for once
            fingerprint = backbone_folder(backbones[name], recipe_from(p), p["progress"])[1]
            keys = _plan(data[name], fingerprint, device, protocol, p["seeds"], p["noise_ratios"], p["sample_sizes"])[0]
            if any(_read(k) is None for k in keys.values()):
                futures.append(pool.submit(_grid_of, p, name))
        for future in futures:
            future.result()  # a row's error, raised here
    except KeyboardInterrupt:
        stop_workers(pool)  # Ctrl-C: now, not when the running rows finish; their finished runs stay cached
        raise
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # rows not started yet are dropped
        raise
    pool.shutdown(wait=True)


def runs_from(parameters: dict) -> tuple[Protocol, list[Task], pd.DataFrame]:
    """What a notebook's parameters ask for: the protocol, the prepared tasks and every (cached) run, one per row.

    With `processes` > 1, rows whose runs are not all cached are computed first, side by side in that many worker
    processes with `cpu_threads` threads each, longest rows first (text, then the larger pools) — separate processes
    share two cores far better than two threads of one program do on a busy machine — the image backbone, if it is
    missing, made first by a worker while the other starts the text rows; with one process, each row computes what
    the cache lacks in turn. An n that no data set's pool can hold is an error; one that only some can hold is n/a
    for the others.
    """
    p = parameters
    protocol = protocol_from(p)
    device = resolve_device(p["device"]).type
    data = {name: load(name) for name in p["datasets"]}
    for n in p["sample_sizes"]:
        if not any(n in fitting_sizes(d, protocol, p["sample_sizes"]) for d in data.values()):
            pools = ", ".join(f"{d.name} {len(d.train_labels)}" for d in data.values())
            raise ParameterError(f"n = {n} is larger than every training pool allows beside its pretrain subset "
                                 f"(pools: {pools}): use smaller sample_sizes")
    if p["processes"] > 1:
        code = code_of(CODE)  # the code this process runs
        _compute_in_workers(p, data, protocol, device)
        if code_fingerprint(CODE, packages=CODE_PACKAGES) != code:  # the workers ran another: this one would recompute
            raise RuntimeError("benign's source changed while the worker processes computed the runs: run it again, "
                               "so that every run is computed, and cached, by one version of the code")
    # every task is prepared (a bad backbone fails) before any row computes; run_grid computes what the cache lacks
    with cpu_threads(p["cpu_threads"]):
        tasks = [prepare(data[name], p["text_backbone"], p["image_backbone"], recipe_from(p), p["progress"],
                         p["device"]) for name in p["datasets"]]
        runs = pd.concat([run_grid(task, protocol, p["seeds"], p["noise_ratios"], p["sample_sizes"], p["progress"])
                          for task in tasks], ignore_index=True)
    return protocol, tasks, runs
