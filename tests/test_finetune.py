"""The real-data protocol (Table 2, Figures 8/9) on tiny random backbones and fixture data sets built here, offline.

Tiny BERT and ViT checkpoints are saved to a temporary folder and loaded through the same from_pretrained path as
the real ones; the fixture data sets carry the hub's schemas (column and label names) and MedMNIST's .npz layout.
"""

import functools
import json
import re
import socket
import urllib.request
from importlib import metadata

import numpy as np
import pandas as pd
import pytest
import torch

from benign import expected, notebooks, pages, plots, settings
from benign.checks import ParameterError
from benign.realdata import (backbones, findings, firsttoken, image_backbone, reach, reading, reference, report, runs,
                             study, training)
from benign.realdata import datasets as rdata  # (`datasets` is the Hugging Face library)
from benign.words import marked

WORDS = ("good bad great awful fine dull film movie plot actor story boring superb weak fun slow sharp "
         "the a an is was very not quite rather and but").split()


# ------------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A random 2-layer BERT with its tokenizer, saved as a backbone checkpoint (no classifier, like bert-base)."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_vit(tmp_path_factory):
    """A random 2-layer ViT for 28×28 images with its image processor."""
    from transformers import ViTConfig, ViTModel

    folder = tmp_path_factory.mktemp("tiny-vit")
    torch.manual_seed(0)
    ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                       image_size=28, patch_size=7), add_pooling_layer=False).save_pretrained(folder)
    image_backbone.image_processor_for(28).save_pretrained(folder)
    return folder


def _sentences(n, rng):
    return [" ".join(rng.choice(WORDS, size=rng.integers(3, 12))) for _ in range(n)]


@pytest.fixture(scope="module")
def sst2_folder(tmp_path_factory):
    """GLUE SST-2's schema: sentence, label (negative, positive), idx; the test split is unlabelled (-1)."""
    import datasets

    rng = np.random.default_rng(0)
    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["negative", "positive"]),
                                  "idx": datasets.Value("int32")})

    def split(n, labelled=True):
        labels = rng.integers(0, 2, n).tolist() if labelled else [-1] * n
        return datasets.Dataset.from_dict({"sentence": _sentences(n, rng), "label": labels,
                                           "idx": list(range(n))}, features=features)

    folder = tmp_path_factory.mktemp("hub") / "glue"
    datasets.DatasetDict({"train": split(300), "validation": split(40), "test": split(30, False)}) \
        .save_to_disk(str(folder))
    return folder


@pytest.fixture(scope="module")
def mnist_folder(tmp_path_factory):
    """The hub's mnist schema: image (PIL), label (0..9); train and test splits."""
    import datasets
    from PIL import Image

    rng = np.random.default_rng(1)
    features = datasets.Features({"image": datasets.Image(),
                                  "label": datasets.ClassLabel(names=[str(i) for i in range(10)])})

    def split(n):
        images = [Image.fromarray(rng.integers(0, 256, (28, 28), dtype=np.uint8)) for _ in range(n)]
        return datasets.Dataset.from_dict({"image": images, "label": rng.integers(0, 10, n).tolist()},
                                          features=features)

    folder = tmp_path_factory.mktemp("hub") / "mnist"
    datasets.DatasetDict({"train": split(120), "test": split(30)}).save_to_disk(str(folder))
    return folder


# ------------------------------------------------------------------------------------------------ data sets
def test_hub_schema_folders_load_like_the_hub(sst2_folder, mnist_folder, tmp_path):
    import datasets

    sst2 = rdata.load(str(sst2_folder))
    assert sst2.kind == "text" and sst2.label_names == ["negative", "positive"]
    assert len(sst2.train_labels) == 300 and len(sst2.test_labels) == 40  # GLUE's test is unlabelled: validation
    assert sst2.pretrain_size == 10000 and isinstance(sst2.train_inputs[0], str)
    mnist = rdata.load(str(mnist_folder))
    assert mnist.kind == "image" and mnist.train_inputs.shape == (120, 28, 28) and mnist.num_classes == 10
    trec = datasets.Dataset.from_dict(
        {"text": ["what is a film ?"] * 8, "coarse_label": [0, 1, 2, 3, 4, 5, 0, 1], "fine_label": [0] * 8},
        features=datasets.Features({"text": datasets.Value("string"),
                                    "coarse_label": datasets.ClassLabel(names=["ABBR", "ENTY", "DESC", "HUM", "LOC",
                                                                               "NUM"]),
                                    "fine_label": datasets.Value("int64")}))
    datasets.DatasetDict({"train": trec, "test": trec}).save_to_disk(str(tmp_path / "trec"))
    loaded = rdata.load(str(tmp_path / "trec"))
    assert loaded.num_classes == 6 and loaded.pretrain_size == 3000 and list(loaded.train_labels[:3]) == [0, 1, 2]


def test_medmnist_npz_layout(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {f"{s}_images": rng.integers(0, 256, (k, 28, 28), dtype=np.uint8) for s, k in
              (("train", 50), ("val", 10), ("test", 20))}
    arrays.update({f"{s}_labels": rng.integers(0, 2, (k, 1)) for s, k in (("train", 50), ("val", 10), ("test", 20))})
    np.savez(tmp_path / "breastmnist.npz", **arrays)
    data = rdata.load(str(tmp_path / "breastmnist.npz"))
    assert data.name == "breastmnist" and data.pretrain_size == 200 and data.num_classes == 2
    assert data.train_inputs.shape == (50, 28, 28) and data.train_labels.shape == (50,)
    assert rdata.to_rgb(data.train_inputs).shape == (50, 28, 28, 3)
    np.savez(tmp_path / "broken.npz", train_images=arrays["train_images"])
    with pytest.raises(ParameterError, match="not in the MedMNIST layout"):
        rdata.load(str(tmp_path / "broken.npz"))


def test_offline_assets_are_real_and_fixed():
    rt = rdata.load("rotten_tomatoes")
    assert rt.kind == "text" and rt.label_names == ["rotten", "fresh"] and len(rt.test_labels) == 1000
    assert len(set(rt.train_inputs) & set(rt.test_inputs)) == 0 and 0.5 < rt.train_labels.mean() < 0.65
    rt3 = rdata.load("rotten_tomatoes_3class")
    assert rt3.label_names == ["rotten", "fresh", "plot"] and len(rt3.test_labels) == 1000
    assert 0.05 < (rt3.train_labels == 2).mean() < 0.12  # plot summaries: about 8 % of the file
    assert len(set(rt3.train_inputs) & set(rt3.test_inputs)) == 0
    digits = rdata.load("mnist_5k")
    assert digits.train_inputs.shape == (2000, 28, 28) and len(digits.test_labels) == 1000
    assert np.bincount(digits.test_labels).min() > 60  # the test split is a random subset, not one class
    assert rdata.load("mnist_5k").fingerprint() == digits.fingerprint()
    for data in (rt, rt3, digits):  # the page shows the source: a package and file, never a path on this machine
        assert "/" not in data.source, data.source


@pytest.mark.skipif(not rdata.FASHION_MNIST.exists(), reason="Debian's dataset-fashion-mnist is not installed "
                    "(make installs it as root; .ci/run always)")
def test_fashion_mnist_is_debians_full_set():
    fashion = rdata.load("fashion_mnist")
    assert fashion.train_inputs.shape == (60000, 28, 28) and len(fashion.test_labels) == 10000
    assert fashion.pretrain_size == 3000 and fashion.num_classes == 10
    assert fashion.source == "debian:dataset-fashion-mnist"  # the page shows it: no path on this machine


@pytest.mark.parametrize("name", ["mnist", "sst2", "fancyzhx/ag_news", "pneumoniamnist"])
def test_online_names_fail_at_once_offline(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(rdata, "MEDMNIST_ROOT", rdata.Path("/nonexistent"))

    def network(*args, **kwargs):
        raise AssertionError("the network was tried although the hub is switched off")

    monkeypatch.setattr(socket, "create_connection", network)
    monkeypatch.setattr(urllib.request, "urlopen", network)
    with pytest.raises(ParameterError) as err:  # at once: before any connection, retry or download
        rdata.load(name)
    message = str(err.value)
    assert "\n" not in message and ("offline assets" in message and "local folder" in message)


def test_online_backbones_fail_at_once_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("bert-base-uncased", "google/vit-base-patch16-224-in21k"):
        with pytest.raises(ParameterError, match="use the offline assets .* or a local folder"):
            backbones.backbone_folder(name)


def test_unknown_names_and_kind_mismatch(tiny_vit):
    with pytest.raises(ParameterError, match="dataset 'imagenet' is unknown"):
        rdata.load("imagenet")
    with pytest.raises(ParameterError, match="reads image, but 'rotten_tomatoes' holds text"):
        runs.prepare("rotten_tomatoes", str(tiny_vit), str(tiny_vit), device="cpu")


# ------------------------------------------------------------------------------------ subsets and label noise
def test_splits_are_disjoint_nested_and_seeded():
    pre, fin = rdata.split_indices(500, 100, 50, seed=42)
    pre2, fin2 = rdata.split_indices(500, 100, 20, seed=42)
    assert len(set(pre) & set(fin)) == 0 and len(pre) == 100 and len(fin) == 50
    assert (pre == pre2).all() and (fin[:20] == fin2).all()  # phase 1 shared by every n; subsets nested
    assert not (rdata.split_indices(500, 100, 50, seed=314)[0] == pre).all()
    with pytest.raises(ParameterError, match="pretrain_size \\+ n = 501 is not allowed"):
        rdata.split_indices(500, 100, 401, seed=0)


@pytest.mark.parametrize("classes", [2, 6, 10])
def test_label_noise_rate_and_different_class(classes):
    labels = np.random.default_rng(0).integers(0, classes, 20000)
    noisy, flipped = rdata.add_label_noise(labels, 0.2, classes, seed=42)
    rate = flipped.mean()
    assert abs(rate - 0.2) < 4 * np.sqrt(0.2 * 0.8 / len(labels))
    assert (noisy[flipped] != labels[flipped]).all() and (noisy[~flipped] == labels[~flipped]).all()
    shift = (noisy[flipped] - labels[flipped]) % classes  # uniform over the other classes
    counts = np.bincount(shift, minlength=classes)[1:]
    assert counts.min() > 0.8 * counts.mean() and counts.max() < 1.2 * counts.mean()
    again, _ = rdata.add_label_noise(labels, 0.2, classes, seed=42)
    assert (again == noisy).all() and (rdata.add_label_noise(labels, 0.0, classes, 1)[0] == labels).all()


# ---------------------------------------------------------------------------------------- the protocol itself
@pytest.fixture(scope="module", params=["bert", "vit"])
def setting(request, tiny_bert, tiny_vit):
    """A tiny backbone with 20 training inputs, labels, a seeded head and re-initialised query/key."""
    rng = np.random.default_rng(3)
    if request.param == "bert":
        bb = backbones.Backbone(str(tiny_bert), 2, device="cpu")
        inputs = _sentences(20, rng)
    else:
        bb = backbones.Backbone(str(tiny_vit), 3, device="cpu")
        inputs = rng.integers(0, 256, (20, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, bb.num_labels, 20)
    return bb, inputs, labels, bb.seeded_head(42), bb.reset_qk(42)


def _one(d: dict) -> dict:
    return {k: v[None] for k, v in d.items()}


def test_cached_first_token_output_matches_the_full_model(setting):
    bb, inputs, _, _, _ = setting
    enc = training.encode(bb, inputs)
    head = _one(bb.seeded_head(0))
    full = reference.full_logits(bb, inputs, {k: v[0] for k, v in head.items()})
    cached = firsttoken.head_logits(enc.z[None], head, bb.arch)[0]
    torch.testing.assert_close(cached, full, rtol=1e-4, atol=1e-5)


def test_a_one_layer_vits_last_layer_reads_the_embeddings(tmp_path):
    """The family's shallowest backbone: no layer before the last, the cached path still equals the full model."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                       image_size=28, patch_size=7), add_pooling_layer=False).save_pretrained(tmp_path)
    image_backbone.image_processor_for(28).save_pretrained(tmp_path)
    bb = backbones.Backbone(str(tmp_path), 3, device="cpu")
    inputs = np.random.default_rng(0).integers(0, 256, (6, 28, 28), dtype=np.uint8)
    head = bb.seeded_head(0)
    cached = firsttoken.head_logits(training.encode(bb, inputs).z[None], _one(head), bb.arch)[0]
    torch.testing.assert_close(cached, reference.full_logits(bb, inputs, head), rtol=1e-4, atol=1e-5)


def test_hand_written_backward_is_autograds(setting):
    """The first-token path's gradient, written out by hand, against autograd through the same forward."""
    bb, inputs, labels, head, qk = setting
    enc = training.encode(bb, inputs)
    rows = torch.arange(16).view(2, 8)
    tokens = enc.tokens(rows, group=5)  # groups of different lengths, in the text case
    y = torch.as_tensor(labels)[rows]
    qk2 = {k: torch.stack([v, v.flip(0)]) for k, v in qk.items()}  # two runs, different query and key
    heads = training.stack([head, bb.seeded_head(7)])
    loss, grads, norm = firsttoken.loss_and_grad(tokens, y, qk2, heads, bb.tail)
    leaves = {k: v.clone().requires_grad_(True) for k, v in qk2.items()}
    logits, _, _ = firsttoken.forward(tokens, leaves, heads, bb.tail)
    auto = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(2, 8).mean(1)
    auto.sum().backward()
    torch.testing.assert_close(loss, auto.detach(), rtol=1e-6, atol=1e-7)
    for k in ("Wq", "bq", "Wk"):
        torch.testing.assert_close(grads[k], leaves[k].grad, rtol=1e-4, atol=1e-7)
    assert leaves["bk"].grad is None and (grads["bk"] == 0).all()  # the key bias drops out of the scores
    _assert_clipped_per_run(lambda max_norm: firsttoken.loss_and_grad(tokens, y, qk2, heads, bb.tail, max_norm),
                            {k: leaves[k].grad for k in ("Wq", "bq", "Wk")}, norm)


def test_the_heads_gradient_is_autograds(setting):
    """Phase 1's hand-written gradient of the head (BERT's with its pooler, ViT's classifier alone) against autograd,
    and its clipping per run against clip_grad_norm_ on each run alone."""
    bb, inputs, labels, head, _ = setting
    z = training.encode(bb, inputs).z[:16].view(2, 8, -1)
    y = torch.as_tensor(labels[:16]).view(2, 8)
    heads = training.stack([head, bb.seeded_head(7)])
    loss, grads, norm = firsttoken.head_loss_and_grad(z, y, heads, bb.arch)
    leaves = {k: v.clone().requires_grad_(True) for k, v in heads.items()}
    logits = firsttoken.head_logits(z, leaves, bb.arch)
    auto = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(2, 8).mean(1)
    auto.sum().backward()
    torch.testing.assert_close(loss, auto.detach(), rtol=1e-6, atol=1e-7)
    for k in heads:
        torch.testing.assert_close(grads[k], leaves[k].grad, rtol=1e-4, atol=1e-7)
    _assert_clipped_per_run(lambda max_norm: firsttoken.head_loss_and_grad(z, y, heads, bb.arch, max_norm),
                            {k: leaves[k].grad for k in heads}, norm)


def _assert_clipped_per_run(loss_and_grad, auto: dict, norm: torch.Tensor) -> None:
    """The norm before clipping is each run's whole gradient's, and with a bound between the runs' norms the
    gradients come as clip_grad_norm_ leaves each run's autograd gradient (one run clipped, one not)."""
    R = norm.shape[0]
    whole = sum(g.reshape(R, -1).square().sum(1) for g in auto.values()).sqrt()
    torch.testing.assert_close(norm, whole, rtol=1e-5, atol=0.0)
    assert whole[0] != whole[1]
    bound = float(whole.mean())
    clipped = loss_and_grad(bound)[1]
    for r in range(R):
        singles = [torch.nn.Parameter(torch.zeros_like(g[r])) for g in auto.values()]
        for p, g in zip(singles, auto.values()):
            p.grad = g[r].clone()
        torch.nn.utils.clip_grad_norm_(singles, bound)
        for k, p in zip(auto, singles):
            torch.testing.assert_close(clipped[k][r], p.grad, rtol=1e-4, atol=1e-7)


def _phase2_both(setting, schedule):
    bb, inputs, labels, head, qk = setting
    enc = training.encode(bb, inputs)
    fast = training.phase2(bb, enc, torch.arange(len(labels))[None], torch.as_tensor(labels)[None], _one(head), [qk],
                           schedule, [42])
    model, loss, att, _ = reference.full_forward_phase2(bb, inputs, labels, head, qk, schedule, 42)
    return fast, model, loss, att


def test_cached_and_full_forward_training_agree(setting):
    bb, _, _, _, qk = setting
    fast, model, loss, att = _phase2_both(setting, training.Schedule(num_epochs=3))
    np.testing.assert_allclose(fast.epoch_loss[0], loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fast.epoch_max_attention[0], att, rtol=1e-5, atol=1e-6)
    trained = dict(model.named_parameters())
    for key, name in zip(("Wq", "Wk", "bq", "bk"), bb.qk_names()):
        torch.testing.assert_close(fast.params[key][0], trained[name].detach(), rtol=1e-4, atol=1e-6)
    assert not torch.allclose(fast.params["Wq"][0], qk["Wq"])  # it did train
    assert fast.epoch_max_attention[0][-1] != fast.epoch_max_attention[0][0]


def test_a_few_steps_of_the_full_schedule_agree_with_decay_and_clipping(setting):
    """The paper's 2000-epoch schedule (the learning rate decaying from its first step), stopped after 4 epochs, with
    clipping acting (its threshold a tenth of the first gradient's norm), AdamW and SGD. Over 4 of 2000 epochs the
    decay moves the rate by 0.2 %, below what the comparison sees: it checks that a stopped run keeps the full
    schedule's rates (not a decay over max_epochs); the decay's formula is seen over 3 epochs in
    test_cached_and_full_forward_training_agree."""
    bb, inputs, labels, head, qk = setting
    enc = training.encode(bb, inputs)
    first = firsttoken.loss_and_grad(enc.tokens(torch.arange(16)[None]), torch.as_tensor(labels[:16])[None],
                                     _one(qk), _one(head), bb.tail)[2]
    threshold = float(first[0]) / 10
    for optimizer in ("adamw", "sgd"):
        schedule = training.Schedule(num_epochs=2000, max_epochs=4, optimizer=optimizer, max_grad_norm=threshold)
        assert schedule.learning_rate(1, 2) < schedule.learning_rate(0, 2)  # the rate decays from step 0
        fast, model, loss, _ = _phase2_both(setting, schedule)
        np.testing.assert_allclose(fast.epoch_loss[0], loss, rtol=1e-5, atol=1e-6)
        trained = dict(model.named_parameters())
        for key, name in zip(("Wq", "Wk", "bq"), bb.qk_names()):
            torch.testing.assert_close(fast.params[key][0], trained[name].detach(), rtol=1e-4, atol=1e-7)
            assert not torch.equal(fast.params[key][0], qk[key])  # it trained


def test_stop_when_fitted_stops_where_the_reference_does(tiny_vit):
    """Labels another query and key produce (so attention alone can fit them): phase 2 stops at the same epoch, the
    first after which every label is predicted, in the fast path and in the whole model."""
    bb = backbones.Backbone(str(tiny_vit), 3, device="cpu")
    inputs = np.random.default_rng(3).integers(0, 256, (20, 28, 28), dtype=np.uint8)
    enc = training.encode(bb, inputs)
    original = _one(bb.original_qk())
    start = training.phase1(bb, enc.z[None], torch.as_tensor(np.arange(20) % 3)[None], [bb.seeded_head(42)],
                            training.Schedule(num_epochs=200, peak_learning_rate=3e-2), [0])
    head = {k: v[0] for k, v in start.params.items()}  # a head that tells the three classes apart
    sharp = _one({k: 8 * v for k, v in bb.reset_qk(7).items()})  # another query and key, attention concentrated
    labels = training.predict(bb, enc, torch.arange(20), start.params, sharp)[0].numpy()
    assert len(set(labels)) > 1 and (training.predict(bb, enc, torch.arange(20), start.params, original)[0].numpy()
                                      != labels).any()
    schedule = training.Schedule(num_epochs=2000, max_epochs=100, stop_when_fitted=True, peak_learning_rate=1e-3)
    fast, model, loss, _ = _phase2_both((bb, inputs, labels, head, bb.reset_qk(42)), schedule)
    assert fast.fitted[0] and 1 < fast.epochs_run[0] == len(loss) < 100
    np.testing.assert_allclose(fast.epoch_loss[0], loss, rtol=1e-4, atol=1e-6)
    pred = training.predict(bb, enc, torch.arange(20), _one(head), fast.params)
    assert (pred[0].numpy() == labels).all()


def test_batched_runs_equal_the_same_runs_one_at_a_time(setting):
    """Four runs in one program — one whose labels are fitted from the start (it stops after the first epoch), three
    with random labels — against each run alone."""
    bb, inputs, labels, head, _ = setting
    enc = training.encode(bb, inputs)
    seeds = [42, 314, 2718, 7]
    rows = torch.stack([torch.randperm(20, generator=torch.Generator().manual_seed(s))[:12] for s in range(4)])
    heads = [bb.seeded_head(s) for s in seeds]
    qks = [bb.reset_qk(s) for s in seeds]
    y = torch.as_tensor(np.random.default_rng(0).integers(0, bb.num_labels, (4, 12)))
    y[0] = training.predict(bb, enc, rows[0], _one(heads[0]), _one(qks[0]))[0]
    schedule = training.Schedule(num_epochs=2000, max_epochs=4, stop_when_fitted=True)
    together = training.phase2(bb, enc, rows, y, training.stack(heads), qks, schedule, seeds)
    assert together.epochs_run[0] == 1 and together.fitted[0] and max(together.epochs_run) > 1
    for r in range(4):
        alone = training.phase2(bb, enc, rows[r:r + 1], y[r:r + 1], _one(heads[r]), [qks[r]], schedule, [seeds[r]])
        assert alone.epochs_run[0] == together.epochs_run[r] and alone.fitted[0] == together.fitted[r]
        np.testing.assert_allclose(together.epoch_loss[r], alone.epoch_loss[0], rtol=1e-5)
        np.testing.assert_allclose(together.epoch_max_attention[r], alone.epoch_max_attention[0], rtol=1e-5)
        for k in ("Wq", "bq", "Wk"):
            torch.testing.assert_close(together.params[k][r], alone.params[k][0], rtol=1e-5, atol=1e-7)


def test_the_early_leaving_fit_check_says_what_a_full_pass_says(setting):
    """`all_predicted` (a run leaves at its first wrong prediction) against every sample's prediction: five runs, one
    predicting all its labels, the others one, three or many wrong, each with stale wrong flags in every pattern."""
    bb, inputs, _, _, _ = setting
    enc = training.encode(bb, inputs)
    seeds = [42, 314, 2718, 7, 11]
    rows = torch.stack([torch.randperm(20, generator=torch.Generator().manual_seed(s))[:15] for s in range(5)])
    heads, qk = training.stack([bb.seeded_head(s) for s in seeds]), training.stack([bb.reset_qk(s) for s in seeds])
    pred = training.predict(bb, enc, rows, heads, qk)
    top = firsttoken.forward(enc.tokens(rows), qk, heads, bb.tail)[0].topk(2, -1).values
    assert (top[..., 0] - top[..., 1]).min() > 1e-3  # no near-tie: another batching cannot change a prediction
    y = pred.clone()
    for r, wrong_at in [(1, [14]), (2, [0, 7, 9]), (3, list(range(15)))]:
        y[r, wrong_at] = (pred[r, wrong_at] + 1) % bb.num_labels
    y[4] = torch.as_tensor(np.random.default_rng(1).integers(0, bb.num_labels, 15))
    for stale in (torch.ones_like(y, dtype=torch.bool), torch.zeros_like(y, dtype=torch.bool),
                  torch.as_tensor(np.random.default_rng(2).random(y.shape) < 0.3)):
        done, wrong = training.all_predicted(bb, enc, rows, y, heads, qk, stale, first=2)
        assert done.tolist() == (pred == y).all(1).tolist()
        assert done[0] and not wrong[0].any()  # a run declared fitted had every sample checked
        checked = wrong != stale
        assert ((pred != y) | ~wrong | ~checked).all()  # a flag it changed is that sample's own verdict
        assert all(wrong[r][(pred[r] != y[r])].any() for r in range(1, 5))  # each unfitted run's wrong sample found


def test_phase2_changes_exactly_the_last_query_and_key(setting):
    bb, inputs, labels, head, qk = setting
    before = {n: p.detach().clone() for n, p in bb.model.named_parameters()}
    model, _, _, _ = reference.full_forward_phase2(bb, inputs, labels, head, qk,
                                                   training.Schedule(num_epochs=2, optimizer="sgd"), seed=42)
    start = dict(zip(bb.qk_names(), (qk["Wq"], qk["Wk"], qk["bq"], qk["bk"])))
    after = dict(model.named_parameters())
    assert all(torch.equal(after[n], head[n]) for n in head)  # the phase-1 head stays as it was given
    assert sorted(n for n, p in after.items() if p.requires_grad) == sorted(bb.qk_names())
    changed = sorted(n for n, p in after.items() if n not in head and not torch.equal(p, start.get(n, before[n])))
    # the key bias is trained too, but adds the same number to every score of a row, which softmax ignores: its
    # gradient is zero (up to rounding), so it stays put, in the authors' runs as here
    key_bias = bb.qk_names()[3]
    assert changed == sorted(n for n in bb.qk_names() if n != key_bias)
    assert (after[key_bias] - start[key_bias]).abs().max() < 1e-6
    last = bb.model.config.num_hidden_layers - 1
    prefix = f"bert.encoder.layer.{last}.attention.self." if bb.arch == "bert" else f"vit.layers.{last}.attention."
    assert all(n.startswith(prefix) for n in changed)
    assert all(torch.equal(p, before[n]) for n, p in bb.model.named_parameters())  # the cached backbone untouched


def test_reset_is_reset_parameters_and_seeded(setting):
    bb = setting[0]
    a, b, c = bb.reset_qk(42), bb.reset_qk(42), bb.reset_qk(314)
    assert all(torch.equal(a[k], b[k]) for k in a) and not torch.equal(a["Wq"], c["Wq"])
    bound = 1 / np.sqrt(bb.hidden)  # nn.Linear.reset_parameters: U(-1/√in, 1/√in) for weight and bias
    assert a["Wq"].abs().max() <= bound and a["Wq"].abs().max() > 0.9 * bound
    assert not torch.equal(a["Wq"], bb.query.weight)


def test_phase1_on_cached_features_matches_training_the_full_model(setting):
    bb, inputs, labels, head, _ = setting
    enc = training.encode(bb, inputs)
    schedule = training.Schedule(num_epochs=3)
    cached = training.phase1(bb, enc.z[None], torch.as_tensor(labels)[None], [head], schedule, seeds=[42])
    assert sorted(cached.params) == sorted(bb.head_names())
    assert ("bert.pooler.dense.weight" in cached.params) == (bb.arch == "bert")  # BERT: pooler + classifier
    # the reference: the whole model, everything frozen but the head, as the authors' phase 1
    model = reference.with_parameters(bb, head, {})
    for name, p in model.named_parameters():
        p.requires_grad_(name in head)
    named = dict(model.named_parameters())
    batch = bb.model_inputs(inputs)
    y = torch.as_tensor(labels)

    def batch_loss(idx):
        return torch.nn.functional.cross_entropy(model(**{k: v[idx] for k, v in batch.items()}).logits, y[idx])

    loss, _ = reference.reference_fit([named[n] for n in head], batch_loss, len(labels), schedule, seed=42)
    np.testing.assert_allclose(cached.epoch_loss[0], loss, rtol=1e-5, atol=1e-6)
    for n in head:
        torch.testing.assert_close(cached.params[n][0], named[n].detach(), rtol=1e-4, atol=1e-6)
        assert not torch.equal(cached.params[n][0], head[n])


def test_run_optimizer_is_torch_optim_per_run():
    """Three runs stacked, gradients of very different norms, against torch.optim's AdamW and SGD on each run alone."""
    torch.manual_seed(0)
    for optimizer in ("adamw", "sgd"):
        stacked = [torch.randn(3, 4, 5), torch.randn(3, 5)]
        singles = [[torch.nn.Parameter(p[r].clone()) for p in stacked] for r in range(3)]
        opt = training.RunOptimizer(stacked, optimizer)
        refs = [(torch.optim.AdamW if optimizer == "adamw" else torch.optim.SGD)(
            params, **training.OPTIMIZERS[optimizer], **({"weight_decay": 0.0} if optimizer == "adamw" else {}))
            for params in singles]
        for step in range(3):
            grads = [torch.randn_like(p) * torch.tensor([0.01, 1.0, 10.0]).view(3, *([1] * (p.dim() - 1)))
                     for p in stacked]
            for r, params in enumerate(singles):
                for p, g in zip(params, grads):
                    p.grad = g[r].clone()
                for group in refs[r].param_groups:
                    group["lr"] = 1e-3 * (3 - step)
                refs[r].step()
            opt.step(grads, 1e-3 * (3 - step))
        for r in range(3):
            for p, s in zip(singles[r], opt.params):
                torch.testing.assert_close(s[r], p.detach(), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------------------------------ runs and caching
@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "finetune"


def test_run_grid_on_a_hub_schema_folder_is_cached(tiny_bert, sst2_folder, cache, monkeypatch):
    task = runs.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = runs.Protocol(pretrain_num_epochs=2, num_epochs=3, pretrain_size=60, max_test=20)
    grid = runs.run_grid(task, protocol, [42, 314], [0.0, 0.2], [20, 40])
    assert len(grid) == 8 and set(grid.n) == {20, 40} and (grid.pretrain_size == 60).all()
    assert all(len(r) == 3 for r in grid.max_attention) and all(len(r) == 3 for r in grid.loss)
    assert ((grid.max_attention.map(min) > 0) & (grid.max_attention.map(max) <= 1)).all()
    assert (grid.groupby("seed").base_acc.nunique() == 1).all()  # one phase-1 head per seed serves every cell
    assert {"versions", "device", "protocol", "code", "threads"} <= set(grid.columns)
    assert grid.versions.iloc[0]["torch"] == metadata.version("torch") and grid.device.iloc[0] == "cpu"
    assert len(list(cache.glob("*.json"))) == 8

    def boom(*args, **kwargs):
        raise AssertionError("recomputed a cached run")

    monkeypatch.setattr(runs, "_compute", boom)
    again = runs.run_grid(task, protocol, [42, 314], [0.0, 0.2], [20, 40])
    pd.testing.assert_frame_equal(grid, again)
    summary = report.summarize(grid)
    table = report.table(summary, protocol.num_epochs)
    assert list(table.columns) == ["base", "n = 20", "n = 40"] and list(table.index.get_level_values("η")) == [0, 0.2]
    assert report.epochs_table(summary).to_numpy().tolist() == [["3 (0/2 fitted)"] * 2] * 2
    metrics = report.table_metrics(summary, protocol.num_epochs)
    assert isinstance(metrics["glue_noise0.2_n40_test_acc"], float) and "glue_base_acc" in metrics
    assert "glue_noise0.2_n40_train_loss" in metrics and 0 <= metrics["glue_noise0.2_n40_reach_free"] <= 1
    # a loss is compared like with like: one that stopped before the schedule's end is not the paper's final loss
    assert "glue_noise0.2_n40_train_loss" not in report.table_metrics(summary, 2000)
    assert report.table(summary, 2000).iloc[0, 1].startswith(f"{summary.train_loss.iloc[0]:.2f} at epoch 3, ")
    # phase 2 never fits a flipped label that free attention cannot: reach is an upper bound (per run)
    noisy = grid[grid.noise_ratio > 0]
    assert (noisy.reach_free >= noisy.fitted_noisy - 1e-9).all() and (noisy.reach_free >= noisy.reach_token).all()
    checks = findings.row_checks(summary)
    assert list(checks.columns[:3]) == ["dataset", "clean_train_acc", "reach_free"]
    found = findings.findings(summary, {task.dataset: task.data.kind}, checks)
    assert list(found.n) == [20, 40] and findings.finding_metrics(found)["text_rows"] == 1
    curves = report.curves(grid)
    assert len(curves) == 8 * 3 and len(report.attention_ends(grid)) == 4


def test_an_interrupted_grid_resumes_from_its_cache(tiny_bert, sst2_folder, cache, monkeypatch):
    task = runs.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = runs.Protocol(pretrain_num_epochs=1, num_epochs=2, pretrain_size=60, max_test=10)
    real = runs._phase2_group
    groups = []

    def interrupted(*args, **kwargs):
        groups.append(args[3][0][2])
        if len(groups) == 2:
            raise KeyboardInterrupt  # the second group (n = 40) never finishes
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "_phase2_group", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runs.run_grid(task, protocol, [42], [0.0, 0.2], [20, 40])
    assert len(list(cache.glob("*.json"))) == 2 and not list(cache.glob(".*"))  # n = 20 kept, nothing half-written
    groups.clear()
    monkeypatch.setattr(runs, "_phase2_group", lambda *a, **k: (groups.append(a[3][0][2]), real(*a, **k))[1])
    done = runs.run_grid(task, protocol, [42], [0.0, 0.2], [20, 40])
    assert groups == [40] and len(done) == 4  # only the missing group was computed


def test_changed_code_is_recomputed_not_served(tiny_bert, sst2_folder, cache, monkeypatch, tmp_path):
    """The cache key holds the fingerprint of the code that computes runs: a changed source is a new key (in the next
    process: one keeps the code it first keyed a run with, `runs.code_of`, emptied here as a new process has it)."""
    module = tmp_path / "kernel_under_test.py"
    module.write_text("SCALE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(runs, "CODE", "kernel_under_test")
    task = runs.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = runs.Protocol(pretrain_num_epochs=1, num_epochs=1, pretrain_size=60, max_test=10)
    real, calls = runs._compute, []
    monkeypatch.setattr(runs, "_compute", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    first = runs.run_grid(task, protocol, [42], [0.2], [20])
    runs.run_grid(task, protocol, [42], [0.2], [20])
    assert len(calls) == 1  # unchanged code: served from the cache
    module.write_text("SCALE = 2  # the computation changed\n")
    runs.code_of.cache_clear()
    second = runs.run_grid(task, protocol, [42], [0.2], [20])
    assert len(calls) == 2 and len(list(cache.glob("*.json"))) == 2  # recomputed, the old entry left as it was
    assert first.code.iloc[0] != second.code.iloc[0]


def test_too_large_n_is_left_out_like_breastmnist_or_refused(tiny_bert, sst2_folder, cache):
    task = runs.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = runs.Protocol(pretrain_num_epochs=1, num_epochs=1, pretrain_size=250, max_test=10)
    grid = runs.run_grid(task, protocol, [42], [0.2], [20, 1000])
    assert list(grid.n) == [20]
    assert list(report.table(report.summarize(grid), protocol.num_epochs).columns) == ["base", "n = 20"]
    before = sorted(p.read_bytes() for p in cache.glob("*.json"))
    params = {**notebooks.resolve("table2_finetune", "smoke"), "datasets": [str(sst2_folder)],
              "text_backbone": str(tiny_bert), "device": "cpu", "sample_sizes": [5000]}
    with pytest.raises(ParameterError, match=r"^n = 5000 is larger than every training pool allows"):
        runs.runs_from(params)
    assert sorted(p.read_bytes() for p in cache.glob("*.json")) == before  # earlier runs untouched


def test_a_backbone_folder_without_weights_is_refused(tiny_bert, tmp_path):
    folder = tmp_path / "no-weights"
    folder.mkdir()
    (folder / "config.json").write_text((tiny_bert / "config.json").read_text())
    with pytest.raises(ParameterError, match="has no weights"):
        backbones.Backbone(str(folder), 2, device="cpu")
    with pytest.raises(ParameterError, match="no model folder"):
        backbones.Backbone(str(tmp_path), 2, device="cpu")


def test_image_backbone_is_made_once_with_a_record(cache, monkeypatch):
    recipe = dict(epochs=1, samples=64)
    assert not image_backbone.cached(recipe)
    folder = image_backbone.make(recipe)
    assert image_backbone.cached(recipe)
    record = json.loads((folder / "record.json").read_text())
    assert record["recipe"]["samples"] == 64 and "not ViT-B/16-in21k" in record["what"]
    assert len(record["data"]["file_sha256"]) == 64 and 0 <= record["test_accuracy"] <= 1
    stamp = (folder / "model.safetensors").stat().st_mtime
    assert image_backbone.make(recipe) == folder and (folder / "model.safetensors").stat().st_mtime == stamp
    bb = backbones.Backbone(image_backbone.NAME, 10, recipe, device="cpu")
    assert bb.arch == "vit" and bb.kind == "image" and bb.model.config.num_hidden_layers == 4
    with pytest.raises(ParameterError, match="vit_pretrain_samples = 5000 is not allowed"):
        image_backbone.make(dict(samples=5000))
    monkeypatch.setattr(image_backbone, "code_fingerprint", lambda *args, **kwargs: "other code")
    assert image_backbone.make(recipe) != folder  # made anew by changed code, never served from the older make


def test_the_image_backbone_is_pre_trained_on_one_thread_whatever_the_caller_s(cache, monkeypatch):
    """How many threads share a product changes its rounding, and training carries it into other weights (two threads
    made another backbone than one, by up to 0.17 in a weight): every step of the pre-training runs on `THREADS`, so
    the recipe makes one backbone on any machine, in the notebook's process or in a worker."""
    seen, augment = [], image_backbone.augment
    monkeypatch.setattr(image_backbone, "augment", lambda *a: seen.append(torch.get_num_threads()) or augment(*a))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        folder = image_backbone.make(dict(epochs=2, samples=64))
        assert torch.get_num_threads() == 2  # the caller's threads, given back
    finally:
        torch.set_num_threads(before)
    assert image_backbone.THREADS == 1 and seen == [1, 1]
    assert json.loads((folder / "record.json").read_text())["threads"] == 1


def test_the_backbone_family_changes_only_its_shape_and_rejects_bad_shapes_in_one_line():
    default = image_backbone.recipe()
    assert default["architecture"] == image_backbone.ARCHITECTURE  # the default backbone's recipe is unchanged
    two = image_backbone.recipe(layers=2, epochs=3)
    assert two["architecture"] == {**image_backbone.ARCHITECTURE, "num_hidden_layers": 2} and two["epochs"] == 3
    wide = image_backbone.recipe(width=64, heads=2, patch=4)["architecture"]
    assert (wide["hidden_size"], wide["intermediate_size"], wide["num_attention_heads"], wide["patch_size"]) == (
        64, 128, 2, 4)
    for bad, message in [(dict(layers=0), "layers = 0 is not allowed: it must be an integer >= 1"),
                         (dict(layers=13), "layers = 13 is not allowed: at most 12"),
                         (dict(layers=2.5), "layers = 2.5 is not allowed"),
                         (dict(width=130), "width 130 is not a multiple of its heads 4"),
                         (dict(patch=5), "patch 5 does not divide the 28-pixel digits"),
                         (dict(depth=2), "unknown pre-training setting 'depth'")]:
        with pytest.raises(ParameterError, match=re.escape(message)) as err:
            image_backbone.make(bad)
        assert "\n" not in str(err.value)


def test_the_study_runs_the_cheapest_missing_backbone_first_and_makes_the_others_meanwhile(monkeypatch):
    p = dict(vit_pretrain_epochs=30, vit_pretrain_samples=2000, vit_depths=[4, 3, 2, 1], vit_widths=[64, 128])
    family = study.shapes(p)
    assert family == [(4, 128), (3, 128), (2, 128), (1, 128), (4, 64)]  # the deepest at each other width
    assert study.recipe_of(p, 4, 64)["width"] == 64 and "width" not in study.recipe_of(p, 4)  # the default unchanged
    assert study.backbone_label(4, 64) == "ViT, 4 layers, width 64" and study.backbone_label(1) == "ViT, 1 layer"
    monkeypatch.setattr(image_backbone, "cached", lambda overrides: overrides["layers"] == 2)
    assert [(f.__name__, s) for f, s in study.jobs(p, family)] == [
        ("_shape_grid", (1, 128)), ("_make", (4, 128)), ("_make", (3, 128)), ("_make", (4, 64)),
        ("_shape_grid", (4, 128)), ("_shape_grid", (3, 128)), ("_shape_grid", (2, 128)), ("_shape_grid", (4, 64))]
    monkeypatch.setattr(image_backbone, "cached", lambda overrides: True)
    assert [(f.__name__, s) for f, s in study.jobs(p, [(1, 128), (3, 128), (2, 128)])] == [
        ("_shape_grid", (3, 128)), ("_shape_grid", (2, 128)), ("_shape_grid", (1, 128))]


def test_the_backbones_digits_never_reach_the_protocol():
    images, labels, positions = rdata.mnist_5k_backbone_digits()
    digits = rdata.mnist_5k()
    assert len(positions) == 2000 and len(digits.train_labels) == 2000 and len(digits.test_labels) == 1000
    seen = {im.tobytes() for im in np.concatenate([digits.train_inputs, digits.test_inputs])}
    assert not any(im.tobytes() in seen for im in images)  # no pre-training digit is a pool or test digit


def test_protocol_rejects_bad_values_in_one_line():
    with pytest.raises(ParameterError, match="^optimizer = 'adam' is not allowed: optimizer must be adamw or sgd$"):
        runs.Protocol(optimizer="adam")
    with pytest.raises(ParameterError, match="num_epochs = 0 is not allowed"):
        runs.Protocol(num_epochs=0)
    with pytest.raises(ParameterError, match=r"noise_ratios = \[0.2, 1.0\] is not allowed"):
        notebooks.resolve("table2_finetune", "smoke", {"noise_ratios": "[0.2, 1.0]"})


def test_differences_show_what_the_book_reduces():
    same = report.differences(runs.Protocol(), [42, 314, 2718], [0.0, 0.2], [20, 200, 1000])
    assert list(same.setting) == ["none"]
    book = notebooks.resolve("table2_finetune", "book")
    diff = report.differences(runs.protocol_from(book), book["seeds"], book["noise_ratios"], book["sample_sizes"])
    assert diff.to_dict(orient="records") == [  # only stopping, every value in words (no 0 for "no cap")
        {"setting": "phase 2 stops a run once it fits every training label", "paper": "no", "here": "yes"},
        {"setting": "phase 2 epochs at most", "paper": "no cap", "here": "300 for n ≥ 1000"}]
    assert book["seeds"] == [42, 314, 2718] and book["sample_sizes"] == [20, 200, 1000]
    assert book["num_epochs"] == 2000 and book["pretrain_num_epochs"] == 300 and book["stop_when_fitted"]
    paper = notebooks.resolve("table2_finetune", "paper")
    assert list(report.differences(runs.protocol_from(paper), paper["seeds"], paper["noise_ratios"],
                                   paper["sample_sizes"]).setting) == ["none"]
    assert len(paper["datasets"]) == 8 and paper["image_backbone"] == "google/vit-base-patch16-224-in21k"


def test_differences_say_every_setting_in_words():
    smoke = notebooks.resolve("table2_finetune", "smoke")
    diff = report.differences(runs.protocol_from(smoke), smoke["seeds"], smoke["noise_ratios"], smoke["sample_sizes"])
    said = dict(zip(diff.setting, zip(diff.paper, diff.here)))
    assert said["phase 1 epochs"] == ("300", "2") and said["seeds"] == ("42, 314 and 2718", "42 and 314")
    assert said["pretrain subset"] == ("the data set's", "32 samples")
    assert said["test samples"] == ("the whole test split", "32") and said["n"] == ("20, 200 and 1000", "20")
    assert said["phase 2 epochs at most"] == ("no cap", "300 for n ≥ 1000")
    assert report.epoch_cap(300, 0) == "300" and report.epoch_cap(0, 1000) == "no cap"


def checks_table(clean_train_acc: float, reach_free: float, tests_claim: bool) -> pd.DataFrame:
    """`row_checks` for the Fashion-MNIST row alone."""
    return pd.DataFrame([{"dataset": "fashion_mnist", "clean_train_acc": clean_train_acc, "clean_capped": 0,
                          "reach_free": reach_free,
                          "reach_token": 0.24, "fitted_noisy": 0.41, "test_minus_base": -12.3,
                          "tests_claim": tests_claim, "why": ""}])


def fashion_cells(reach: list[float], fitted: list[float]) -> pd.DataFrame:
    """`findings` for the Fashion-MNIST row alone, at n = 20, 200 and 1000."""
    return pd.DataFrame({"dataset": "fashion_mnist", "kind": "image", "n": [20, 200, 1000],
                         "within reach of free attention (%)": reach, "a single token gives it (%)": [39.0, 26.0, 26.0],
                         "flipped labels fitted (%)": fitted, "test − base (points)": [-19.6, -14.0, -4.5],
                         "epochs": [2000, 2000, 300]})


def test_check_words_say_the_clean_fit_against_its_threshold():
    words = findings.check_words(checks_table(0.92, 0.71, False))
    assert words["fashion_reading"] == (  # why not is the row's reading's, said once
        "as its reading above says, the row does not test the claim: it stays in the table for what it shows, outside "
        "the paper-vs-here count")
    reading = findings.rows_reading(fashion_cells([61.0, 74.0, 78.0], [61.0, 51.0, 11.0]),
                                    checks_table(0.92, 0.71, False))
    assert reading["image_rows_reading"] == (
        "Fashion-MNIST: 71% of the flipped labels within reach, 30% given by a single token, 41% fitted by phase 2, "
        "test minus base −12.7 points (not testable with this backbone: on clean labels phase 2 fits 92% of the "
        "training labels, fewer than the 95% that count as fitted)")
    assert findings.check_words(checks_table(1.0, 0.71, True))["fashion_reading"] == (
        "on clean labels phase 2 fits all of the training labels, at least the 95% that count as fitted, and the row "
        "tests the claim and is counted")
    capped = checks_table(0.9575, 0.68, True).assign(clean_capped=1)  # the book build: 95.0% and 96.5%, n = 1000 capped
    assert findings.check_words(capped)["fashion_reading"] == (
        "on clean labels phase 2 fits 96% of the training labels over the clean cells whose fit is measured (1 cell "
        "that the epoch cap stopped before fitting left out), at least the 95% that count as fitted, and the row "
        "tests the claim and is counted")
    out_of_reach = findings.rows_reading(fashion_cells([30.0] * 3, [20.0] * 3), checks_table(0.97, 0.3, False))
    assert out_of_reach["image_rows_reading"].endswith(
        "(not testable with this backbone: free attention over its last layer's tokens reaches 30% of its flipped "
        "labels, below the 50% a test of the claim needs)")
    assert findings.check_words(checks_table(0.97, 0.3, False))["fashion_reading"].startswith(
        "as its reading above says, the row does not test the claim")


def test_a_rows_reading_reads_reach_and_fit_over_the_same_cells():
    """The book build's Fashion-MNIST row: reach 61, 74, 69 and fitted 61, 51, 13 with n = 1000 capped. Over every
    cell reach averaged 68% beside 56% fitted over two: now both over the two cells whose fit is measured."""
    cells = fashion_cells([61.0, 74.0, 69.0], [61.0, 51.0, 13.0])
    stopped = findings.capped(cells, 300, 1000)
    assert stopped.tolist() == [False, False, True]
    reading = findings.rows_reading(cells, checks_table(0.96, 0.68, True), stopped)["image_rows_reading"]
    assert reading == ("Fashion-MNIST over its 2 cells with noise whose fit is measured: 68% of the flipped labels "
                       "within reach, 33% given by a single token, 56% fitted by phase 2, test minus base −16.8 points "
                       "(tests the claim)")
    pooled = findings.finding_words(cells.assign(**{"test − clean cell (points)": [-6.2, -7.3, -6.7]}), 2000, stopped)
    assert pooled["image_reach_free_words"] == "68%" and pooled["image_flipped_fitted_words"] == "56%"
    mnist = findings.rows_reading(cells.assign(**{"flipped labels fitted (%)": [100.0, 90.6, 25.0]}),
                                  checks_table(0.96, 0.68, True), stopped)["image_rows_reading"]
    assert "95.3% fitted by phase 2" in mnist  # never the 95% level it passes
    assert [findings.share_said(v) for v in (0.9497, 0.63, 1.0, float("nan"))] == [
        "94.97%", "63%", "all", "an unmeasured share"]


def test_finding_words_count_cells_and_read_the_cost_trend_from_its_slope():
    found = pd.DataFrame({"dataset": ["rotten_tomatoes"] * 3 + ["rotten_tomatoes_3class"] * 3, "kind": "text",
                          "n": [20, 200, 1000] * 2, "flipped labels fitted (%)": [100.0] * 6,
                          "within reach of free attention (%)": 100.0, "a single token gives it (%)": 0.0,
                          "test − base (points)": [3.0, 0.7, -2.8, 1.7, -2.4, -7.6],
                          "epochs": [98, 56, 58, 106, 77, 78],
                          "test − clean cell (points)": [-1.6, -4.0, -8.6, -2.9, -7.0, -12.8]})
    words = findings.finding_words(found, 2000)
    assert words["text_cells_fitted"] == "all 6 cells with noise"
    assert words["text_epochs_left"] == "at least 1894 more epochs"  # the longest cell's 106 of 2000: the others more
    assert words["text_cost_by_row"] == ("Rotten Tomatoes −1.6, −4.0 and −8.6 points at n = 20, 200 and 1000; Rotten "
                                         "Tomatoes (3 classes) −2.9, −7.0 and −12.8 points at n = 20, 200 and 1000")
    assert words["text_test_vs_base_by_n"] == ("+2.4 points at n = 20, −0.8 points at n = 200 and −5.2 points at "
                                               "n = 1000")
    assert words["text_flipped_fitted_words"] == "all" and words["text_test_vs_base_words"] == "−1.2"
    assert words["text_reach_token_words"] == "none"
    slope, se = findings.cost_trend(found, "text").values()  # of test − clean: it falls, so the cost grows
    assert words["text_cost_trend"] == f"{marked('grows with n', -slope, se)} (slope 2.1 ± 0.5)"
    half = findings.finding_words(found.assign(**{"flipped labels fitted (%)": [100.0, 50.0] * 3}), 106)
    assert half["text_cells_fitted"] == "3 of the 6 cells with noise" and half["text_epochs_left"] == "no more epochs"
    assert half["text_flipped_fitted_words"] == "75%"
    assert findings.finding_words(found[found.n == 20], 2000)["text_cost_trend"] == "is measured at one n only"


def test_tables_and_figure_titles_name_data_sets_for_a_reader():
    shown = pages.frame(checks_table(0.92, 0.71, False).set_index(pd.Index(["mnist_5k"], name="data set")))
    shown = re.sub(r' data-label="[^"]*"', "", shown)  # each cell's label, its column's header (tests/test_pages.py)
    assert "<td>MNIST digits</td><td>Fashion-MNIST</td>" in shown and "<td>no</td>" in shown  # as a page shows it
    task = runs.Task("rotten_tomatoes_3class", "all-minilm-l6-v2", None, None)
    assert findings.row_title(task) == "Rotten Tomatoes (3 classes) · all-MiniLM-L6-v2"


BOOK_ROWS = {  # Table 2 of the book build at 96dc1fc (η = 0 then 0.2, n = 20, 200, 1000), where `ax.legend()` ('best')
    # put a legend on an error bar: test accuracy, its std over seeds, train loss; base accuracy
    "Rotten Tomatoes · all-MiniLM-L6-v2": ([0.69, 0.6913, 0.7013, 0.6743, 0.6513, 0.6157], [
        0.0156, 0.0069, 0.0099, 0.009, 0.0104, 0.016], [0.2075, 0.0925, 0.0408, 0.1513, 0.083, 0.0337], 0.644),
    "Rotten Tomatoes (3 classes) · all-MiniLM-L6-v2": ([0.693, 0.6933, 0.6983, 0.664, 0.623, 0.5703], [
        0.0227, 0.0031, 0.0097, 0.0367, 0.012, 0.0117], [0.176, 0.1075, 0.0378, 0.157, 0.0635, 0.0416], 0.6467),
    "MNIST digits · small ViT pre-trained here on 2000 MNIST digits": ([0.6777, 0.848, 0.8883, 0.6297, 0.6247, 0.7597], [
        0.0332, 0.0137, 0.0019, 0.1014, 0.0159, 0.0205], [0.132, 0.0513, 0.0501, 0.1893, 0.1104, 0.7362], 0.9133),
    "Fashion-MNIST · small ViT pre-trained here on 2000 MNIST digits": ([0.5231, 0.5898, 0.6788, 0.4609, 0.5164, 0.6117], [
        0.0177, 0.0123, 0.0056, 0.0219, 0.0111, 0.007], [0.2123, 0.3004, 0.5695, 0.3826, 0.6903, 1.2291], 0.6565)}


@pytest.mark.parametrize("rows", [
    {"Rotten Tomatoes (3 classes) · all-MiniLM-L6-v2": pd.DataFrame({
        "noise_ratio": [0.0, 0.0, 0.2, 0.2], "n": [20, 1000] * 2, "test_acc": [0.7, 0.8, 0.6, 0.5],
        "test_acc_std": [0.01] * 4, "train_loss": [0.2, 0.1, 0.3, 0.7], "base_acc": [0.65] * 4}),
     "Fashion-MNIST · small ViT pre-trained here on 2000 MNIST digits": None},
    {title: pd.DataFrame({"noise_ratio": [0.0] * 3 + [0.2] * 3, "n": [20, 200, 1000] * 2, "test_acc": acc,
                          "test_acc_std": std, "train_loss": loss, "base_acc": base})
     for title, (acc, std, loss, base) in BOOK_ROWS.items()}],
    ids=["small", "book"])
def test_the_finetune_figure_draws_no_text_over_another(rows):
    first = next(iter(rows.values()))
    plots.style()
    fig, axes = plots.figure_rows(list(rows), 2)
    for row, summary in zip(axes, rows.values()):
        summary = first if summary is None else summary
        plots.finetune_cells(row[0], row[1], summary, summary.n >= 1000, report.cap_label(300))
    plots.legend_above(fig, *axes[:, ::-1].ravel(), ncols=4)  # one key for every row, above the figure
    assert [ax.get_legend() for ax in axes.flat] == [None] * axes.size and len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "η = 0", "η = 0.2", "stopped at the 300-epoch cap (open marker)", "base (phase 1)"]
    open_markers = [line for line in axes[0, 1].get_lines() if line.get_markerfacecolor() == "white"]
    assert sorted(x for line in open_markers for x in line.get_xdata()) == [1000, 1000]  # the capped cells, open
    assert all(row[0].get_ylim()[1] < 100 for row in axes)  # an accuracy axis is never raised past 100 % for a key
    assert plots.overlaps(fig, tolerance_px=0) == []  # no two drawn texts touch, no legend on data
    from matplotlib.text import Text
    out_of_view = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for label in plots.unshown_tick_labels(axis)}  # kept by matplotlib, not drawn
    boxes = [t.get_window_extent() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and id(t) not in out_of_view]
    width, height = fig.canvas.get_width_height()
    assert len(boxes) > 20 and all(b.x0 >= 0 and b.y0 >= 0 and b.x1 <= width and b.y1 <= height for b in boxes)


@pytest.mark.parametrize("profile", ["smoke", "book", "paper"])
def test_table_and_figure_share_one_profile(profile):
    assert notebooks.resolve("table2_finetune", profile) == notebooks.resolve("fig8_finetune_attention", profile)
    assert notebooks.settings_type("fig8_finetune_attention") is notebooks.settings_type("table2_finetune")


def test_rows_computed_in_worker_processes_equal_those_computed_here(tiny_bert, tiny_vit, sst2_folder, mnist_folder,
                                                                      tmp_path, monkeypatch):
    params = {**notebooks.resolve("table2_finetune", "smoke"), "datasets": [str(sst2_folder), str(mnist_folder)],
              "text_backbone": str(tiny_bert), "image_backbone": str(tiny_vit), "device": "cpu", "pretrain_size": 40,
              "max_test": 16}
    results = {}
    for processes in (2, 1):
        monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / f"cache{processes}"))
        _, tasks, grid = runs.runs_from({**params, "processes": processes})
        files = list((tmp_path / f"cache{processes}" / "finetune").glob("*.json"))
        assert len(files) == len(grid) == 8  # 2 rows × 2 seeds × 2 η
        results[processes] = grid.set_index(["dataset", "seed", "noise_ratio", "n"]).sort_index()
    for column in ("base_acc", "train_loss", "test_acc"):
        np.testing.assert_allclose(results[2][column], results[1][column], rtol=1e-5)


def test_the_workers_make_the_image_backbone_first_and_get_the_image_rows_once_it_is_made(monkeypatch):
    """The backbone to be made is the workers' first job (on one thread, as every worker), the text rows go to them
    meanwhile, longest first, and the image rows only once the backbone is made; this process makes nothing."""
    from concurrent.futures import Future
    from types import SimpleNamespace

    log = []

    class Pool:
        def submit(self, fn, *args):
            log.append(("job", args[0] if fn is runs.backbone_folder else args[1]))
            future = Future()
            future.result = lambda: log.append(("waited", args[0])) if fn is runs.backbone_folder else None
            return future

        def shutdown(self, **_):
            pass

    def main_process_folder(name, recipe=None, progress=False):
        log.append(("here", name))
        return name, "fingerprint"

    monkeypatch.setattr(runs, "worker_processes", lambda _: Pool())
    monkeypatch.setattr(runs, "image_backbone_cached", lambda recipe: False)
    monkeypatch.setattr(runs, "_plan", lambda *a: ({0: "a key"}, 0, "code"))
    monkeypatch.setattr(runs, "_read", lambda key: None)
    monkeypatch.setattr(runs, "backbone_folder", main_process_folder)
    rows = {"text": SimpleNamespace(kind="text", train_labels=range(10)),
            "longer text": SimpleNamespace(kind="text", train_labels=range(20)),
            "digits": SimpleNamespace(kind="image", train_labels=range(5)),
            "more digits": SimpleNamespace(kind="image", train_labels=range(50))}
    params = {**notebooks.resolve("table2_finetune", "book"), "processes": 2}
    runs._compute_in_workers(params, rows, runs.protocol_from(params), "cpu")
    made = runs.IMAGE_BACKBONE
    assert [entry for entry in log if entry[0] != "here"] == [
        ("job", made), ("job", "longer text"), ("job", "text"), ("waited", made), ("job", "more digits"),
        ("job", "digits")]
    assert log.index(("waited", made)) < log.index(("here", made))  # read here only once the workers made it


def test_a_source_changed_during_the_workers_stops_the_grid_instead_of_caching_old_code(tiny_bert, sst2_folder,
                                                                                     tmp_path, monkeypatch):
    """This process still runs the code it imported; had it computed the rows after the source changed, it would
    have cached them under the new code's key. It stops with one line instead, and has cached nothing itself."""
    params = {**notebooks.resolve("table2_finetune", "smoke"), "datasets": [str(sst2_folder)], "processes": 2,
              "text_backbone": str(tiny_bert), "device": "cpu", "pretrain_size": 40, "max_test": 16}
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path))
    versions = iter(["before", "after"])
    monkeypatch.setattr(runs, "code_fingerprint", lambda *a, **k: next(versions, "after"))
    runs.code_of.cache_clear()  # this process's code: "before", as it first keys a run
    monkeypatch.setattr(runs, "code_of", functools.cache(runs.code_of.__wrapped__))
    monkeypatch.setattr(runs, "_compute_in_workers", lambda *a: None)  # the workers, as if the source changed then
    with pytest.raises(RuntimeError, match="source changed while the worker processes computed the runs"):
        runs.runs_from(params)
    assert not (tmp_path / "finetune").exists()


# ------------------------------------------------------------------------------------------------ the reach
def test_free_scores_equal_to_the_query_and_key_give_phase2s_logits(setting):
    """The free-score forward is phase 2's forward (`firsttoken.forward`) when its scores are the query/key scores."""
    bb, inputs, _, head, qk = setting
    enc = training.encode(bb, inputs)
    scores = reach.query_key_scores(enc.x, enc.mask, qk, bb.heads)
    free = reach.free_attention_logits(enc.x, enc.mask, enc.h0, scores, head, bb.tail)
    tokens = firsttoken.Tokens.whole(enc.x0, enc.h0, enc.x, enc.mask)
    phase2, _, _ = firsttoken.forward(tokens, _one(qk), _one(head), bb.tail)
    torch.testing.assert_close(free, phase2[0], rtol=1e-4, atol=1e-5)
    other = reach.free_attention_logits(enc.x, enc.mask, enc.h0, 5 * torch.randn_like(scores), head, bb.tail)
    assert (other - phase2[0]).abs().max() > 1e-4  # the scores matter, well beyond the tolerance


def _token_features(bb, head, tokens, h0):
    """What the classifier reads when every head takes one token whole (the frozen tail after the mixing)."""
    m = tokens[:, None, :].expand(-1, bb.heads, -1).contiguous()
    z, _ = firsttoken.mixed(m, h0.expand(len(tokens), -1), bb.tail)
    return firsttoken._pool(z[None], _one(head))[0] if bb.arch == "bert" else z


def test_reach_finds_a_flipped_label_reachable_by_construction_and_none_where_every_token_is_alike(setting):
    """A head made to tell two tokens apart (class a for one, class b for the other); a sample of five tokens a and
    one token b: label b is within reach (free scores and a single token); a sample whose tokens are all a: only
    class a is, never b."""
    bb, inputs, _, head, _ = setting
    enc = training.encode(bb, inputs)
    pool = enc.x[enc.mask]  # real tokens of the tiny backbone
    h0 = enc.h0[:1]
    feats = _token_features(bb, head, pool, h0)
    a, b = 0, int((feats - feats[0]).norm(dim=1).argmax())
    w = feats[a] - feats[b]
    weight, bias = torch.zeros_like(head["classifier.weight"]), torch.full_like(head["classifier.bias"], -1e3)
    ca, cb = 0, 1
    weight[ca], weight[cb] = w, -w
    bias[ca] = -w @ (feats[a] + feats[b]) / 2
    bias[cb] = -bias[ca]
    head = {**head, "classifier.weight": weight, "classifier.bias": bias}
    L = 6
    mixed_sample = torch.stack([pool[a]] * (L - 1) + [pool[b]])  # one token in six argues for class b
    alike = torch.stack([pool[a]] * L)
    x = torch.stack([mixed_sample, alike, alike])
    keep = torch.ones(3, L, dtype=torch.bool)
    labels = torch.tensor([cb, cb, ca])
    found = reach.reach(x, keep, h0.expand(3, -1), labels, head, bb.tail)
    assert found.free.tolist() == [True, False, True] and found.token.tolist() == [True, False, True]
    assert found.free_share == pytest.approx(2 / 3)
    # uniform attention gives class a on the mixed sample: the free fit had to move the scores to reach b
    uniform = reach.free_attention_logits(x[:1], keep[:1], h0, torch.zeros(1, bb.heads, L), head, bb.tail)
    assert int(uniform.argmax()) == ca
    # padding is never attended: the class-b token masked out puts b out of reach
    keep[0, -1] = False
    assert reach.reach(x[:1], keep[:1], h0, labels[:1], head, bb.tail).free.tolist() == [False]


@pytest.mark.parametrize("bad, message", [
    (dict(steps=0), "steps must be an integer >= 1"),
    (dict(learning_rate=-1.0), "learning_rate must be a number > 0"),
    (dict(labels=torch.tensor([0, 1])), "one label per sample"),
    (dict(h0=torch.zeros(3, 5)), "needs tokens x (N, L, D)"),
])
def test_reach_rejects_bad_parameters_in_one_line(setting, bad, message):
    bb, inputs, _, head, _ = setting
    enc = training.encode(bb, inputs)
    args = dict(x=enc.x[:3], keep=enc.mask[:3], h0=enc.h0[:3], labels=torch.tensor([0, 1, 0]), head=head,
                tail=bb.tail)
    with pytest.raises(ParameterError, match=re.escape(message)) as err:
        reach.reach(**{**args, **bad})
    assert "\n" not in str(err.value)


def test_grids_that_differ_only_in_phase_two_share_phase_one_and_give_each_grid_s_runs(tiny_bert, sst2_folder,
                                                                                      cache, monkeypatch, tmp_path):
    """The backbone study's control (clean runs trained every epoch) beside the protocol's grid: one encoding and one
    phase 1 serve both, and each grid gets the runs it would get alone."""
    task = runs.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = runs.Protocol(pretrain_num_epochs=2, num_epochs=4, stop_when_fitted=True, pretrain_size=60, max_test=20)
    whole = study.whole_schedule(protocol)
    calls = []
    real = runs._phase1_heads
    monkeypatch.setattr(runs, "_phase1_heads", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    grid, control = runs.run_grids(task, [(protocol, [42, 314], [0.0, 0.2], [20]), (whole, [42, 314], [0.0], [20])])
    assert len(calls) == 1 and len(grid) == 4 and len(control) == 2
    assert (control.epochs_run == 4).all() and not any(p["stop_when_fitted"] for p in control.protocol)
    assert all(p["stop_when_fitted"] for p in grid.protocol)
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / "alone"))
    alone = runs.run_grid(task, whole, [42, 314], [0.0], [20])
    assert len(calls) == 2
    for column in ("base_acc", "test_acc", "train_loss"):
        np.testing.assert_allclose(control[column], alone[column], rtol=0, atol=1e-6)
    again, = runs.run_grids(task, [(whole, [42, 314], [0.0], [20]), (whole, [42, 314], [0.0], [20])])[:1]
    assert len(calls) == 2 and len(again) == 2  # served from the cache, a run asked for twice computed at most once


def _study_cells(backbone, base, clean, noisy, whole, flipped_fitted, epochs):
    """Two seeds of one backbone at n = 20: clean, noisy (4 of 20 labels flipped, every clean one fitted) and the
    control's run, with the given test accuracies."""
    rows = []
    for seed in (1, 2):
        common = dict(backbone_label=backbone, kind="image", layers=1, width=128, seed=seed, n=20, base_acc=base,
                      n_flipped=4)
        rows += [dict(common, noise_ratio=0.0, control=False, test_acc=clean, train_acc=1.0, fitted_noisy=np.nan,
                      epochs_run=epochs),
                 dict(common, noise_ratio=0.2, control=False, test_acc=noisy, train_acc=(16 + 4 * flipped_fitted) / 20,
                      fitted_noisy=flipped_fitted, epochs_run=2000, reach_free=flipped_fitted,
                      reach_token=0.0),
                 dict(common, noise_ratio=0.0, control=True, test_acc=whole, train_acc=1.0, fitted_noisy=np.nan,
                      epochs_run=2000)]
    return rows


def test_the_study_splits_the_drop_into_phase_two_s_cost_and_the_noise_s():
    cells = pd.DataFrame(_study_cells("A", base=0.9, clean=0.8, noisy=0.7, whole=0.79, flipped_fitted=0.25,
                                      epochs=100) +
                         _study_cells("B", base=0.9, clean=0.85, noisy=0.6, whole=0.65, flipped_fitted=1.0, epochs=50))
    costs = study.noise_costs(cells).set_index("backbone_label")
    np.testing.assert_allclose(costs.loc["A", ["clean", "noise", "clean_fitted", "flipped_fitted", "stopped",
                                               "stopped_epochs", "whole", "whole_epochs", "noisy"]].astype(float),
                               [-10, -10, 1.0, 0.25, -10, 100, -11, 2000, -20], atol=1e-9)
    found = study.regimes(study.placed(cells))
    assert dict(zip(found.backbone_label, found.regime)) == {"A": study.NOT_OVERFITTING, "B": study.HARMFUL}
    words = reading.cost_words(costs.reset_index(), found)
    assert words["unfitted_cost"] == ("the backbones that do not overfit (A) fit 25% of the flipped labels and 100% "
                                      "of the clean ones beside them, and the noise moves their test accuracy by "
                                      "−10.0 points against clean runs; the only backbone loses 5 points or more, "
                                      "what the rule calls harmful where the noise is fitted: unlike the paper's "
                                      "not-overfitting region, it does not keep its test accuracy")
    kept = reading.unfitted_cost(costs.reset_index().assign(noise=[-2.0, -9.0]))  # as if B did not overfit either
    assert kept.endswith("; 1 of the 2 backbones loses 5 points or more, what the rule calls harmful where the noise "
                         "is fitted: unlike the paper's not-overfitting region, those do not keep their test accuracy")
    assert reading.unfitted_cost(costs.reset_index().assign(noise=-2.0)).endswith(
        "; none of them loses 5 points: like the paper's not-overfitting region, they keep their test accuracy")
    # the control, on the backbones that do not overfit: A's clean run trained as long loses 1 of the noise's 10 points
    assert words["control_reading"] == ("on A, where the control trained longer and the noise cost accuracy at n = 20, "
                                        "clean runs trained every epoch lose 10% of what the noise costs, against "
                                        "those stopped once fitted (1.0 of 10.0 points): most of the loss is the "
                                        "noise's, not the longer training's")
    # over several backbones, backbone by backbone: 1 of 10 points and 20 of 25; the largest part decides
    assert reading.control_reading(costs.reset_index()).endswith(
        "lose up to 80% of what the noise costs, against those stopped once fitted (B: 20.0 of 25.0 points): most "
        "of the loss is the longer training's, not the noise's")
    gained = costs.reset_index().assign(whole=[-9.0, -6.0])  # A's clean run gains by training longer, B's loses 1
    assert reading.control_reading(gained).endswith("lose up to 4% of what the noise costs, against those stopped "
                                                  "once fitted (B: 1.0 of 25.0 points; the others lose nothing): "
                                                  "most of the loss is the noise's, not the longer training's")
    assert words["harmful_split"] == ("where the noise is overfitted harmfully (B), phase 2 on clean labels moves the "
                                      "test accuracy by −5.0 points against the base accuracy and the flipped labels "
                                      "by −25.0 points more")
    assert words["benign_split"] == "no backbone overfits benignly"
    split, control = reading.cost_tables(costs.reset_index())
    assert list(split.iloc[0]) == ["A", "−10.0", "−10.0", "100 %", "25 %"]
    near = reading.cost_tables(costs.reset_index().assign(flipped_fitted=0.953))[0]  # the regime table's rounding
    assert near["flipped labels fitted"].iloc[0] == reading._fitted(0.953) == "95.3 %"
    assert list(control.iloc[0]) == ["A", "−10.0 (epoch 100)", "−11.0 (epoch 2000)", "−20.0 (epoch 2000)"]
    assert list(reading.regime_table(found).iloc[0][["fitted by phase 2", "test − base (points)",
                                                   "test − clean cell (points)", "base accuracy"]]) == [
        "25 %", "−20.0", "−10.0", "90.0 %"]
    assert "test − base, worst cell" in reading.regime_table(found)  # of which number the worst cell is, said
    # a protocol that never stops a run: the control trains no longer than the clean runs, and says so
    unstopped = study.noise_costs(pd.DataFrame(_study_cells("A", 0.9, 0.8, 0.7, 0.8, 0.25, epochs=2000)))
    assert reading.control_reading(unstopped).startswith("the clean runs trained every epoch already")
    # two noise ratios: each noisy run against the clean run of its seed and n
    both = pd.DataFrame(_study_cells("A", 0.9, 0.8, 0.7, 0.79, 0.25, 100)).assign()
    extra = both[both.noise_ratio > 0].assign(noise_ratio=0.1, test_acc=0.75)
    assert study.noise_costs(pd.concat([both, extra])).noise.iloc[0] == pytest.approx(-7.5)


def test_the_study_s_regime_is_read_against_the_clean_cell_with_the_book_s_thresholds():
    """The regime uses `thresholds.REAL_FITTED` and `REAL_COST` against the clean-label cell (same backbone, n and
    seed on clean labels), as Table 2's ledger rule does, never a drop below the base accuracy."""
    from benign import thresholds

    cells = pd.DataFrame(
        # fits every flipped label and loses 7 points to its clean cell, only 2 to the base accuracy: harmful
        _study_cells("C", base=0.9, clean=0.95, noisy=0.88, whole=0.95, flipped_fitted=1.0, epochs=50) +
        # fits 60 % of them (at least half: the old rule's "overfits"), no cost at all: not overfitting
        _study_cells("D", base=0.9, clean=0.9, noisy=0.9, whole=0.9, flipped_fitted=0.6, epochs=50) +
        # fits every one, 12 points below the base accuracy but only 2 below its clean cell: benign
        _study_cells("E", base=0.9, clean=0.8, noisy=0.78, whole=0.8, flipped_fitted=1.0, epochs=50))
    points = study.placed(cells)
    np.testing.assert_allclose(points.test_minus_clean, [-7, 0, -2], atol=1e-9)
    np.testing.assert_allclose(points.test_minus_base, [-2, 0, -12], atol=1e-9)
    np.testing.assert_allclose(points.clean_minus_base, [5, 0, -10], atol=1e-9)  # where the figure marks clean cells
    found = study.regimes(points)
    assert list(found.regime) == [study.HARMFUL, study.NOT_OVERFITTING, study.BENIGN]
    # the same cost as the page's split of the drop (`noise_costs`: the noise on top)
    np.testing.assert_allclose(found.test_minus_clean, study.noise_costs(cells).noise, atol=1e-9)
    fitted, cost = thresholds.REAL_FITTED.value, thresholds.REAL_COST.value
    assert study.regime(fitted, -cost) == study.HARMFUL and study.regime(fitted, -cost + 0.1) == study.BENIGN
    assert study.regime(fitted - 1e-3, -3 * cost) == study.NOT_OVERFITTING
    assert study.regime(1.0, np.nan) == study.UNREAD  # fitted noise with no clean cell is not read as either
    metrics = study.study_metrics(found.iloc[:1], found.iloc[0])
    assert metrics["vit1_test_minus_clean"] == pytest.approx(-7) and metrics["vit1_test_minus_base"] == pytest.approx(-2)
    assert (metrics["backbones_harmful"], metrics["backbones_benign"]) == (1, 0)
    words = reading.regime_words(found)
    assert words["rule_words"] == ("a backbone overfits when phase 2 fits at least 95% of its flipped labels (means "
                                   "over its cells with noise and seeds), and overfits harmfully when its test "
                                   "accuracy is on average 5 points or more below that of its clean-label cells (the "
                                   "same backbone, n and seed trained on clean labels), benignly when it is not")
    assert words["backbone_lines"].startswith("C: all of the flipped labels within reach, all fitted, test minus base "
                                              "−2.0 points and minus its clean cell −7.0 points (harmful); D:")
    # the figure marks each point's clean cell and the harmful level REAL_COST points below it
    fig, ax = plots.figure(1, 1)
    low, high = reading.axis_limits(points)
    plots.study_points(ax, points, "fitted", "fitted", low, high, cost)
    dashes = [line for line in ax.lines if line.get_marker() == "_" and len(line.get_ydata())]
    np.testing.assert_allclose(dashes[0].get_ydata(), [5.0], atol=1e-9)  # C's clean cell: 95 % against a base of 90 %
    np.testing.assert_allclose(dashes[1].get_ydata(), [5.0 - cost], atol=1e-9)
    # room of 3 points around the lowest harmful level (E's: its clean cell at −10, minus 5) and the highest clean cell
    assert (low, high) == (pytest.approx(-10 - cost - 3), pytest.approx(5 + 3))
    plots.plt.close(fig)


def test_a_share_just_short_of_the_fitted_threshold_never_reads_as_the_threshold():
    assert (reading._fitted(0.9497), reading._share(0.9497)) == ("94.97 %", "94.97%")  # not "95 %": not overfitting
    assert (reading._fitted(0.63), reading._share(0.63), reading._share(1.0)) == ("63 %", "63%", "all")


def test_a_backbone_of_another_width_is_read_against_its_depth_at_the_family_s_width():
    found = pd.DataFrame([
        dict(backbone_label="ViT, 4 layers", kind="image", layers=4, width=128, reach=0.3, fitted=0.25,
             test_minus_base=-12.0, test_minus_clean=-4.0, regime=study.NOT_OVERFITTING),
        dict(backbone_label="ViT, 4 layers, width 64", kind="image", layers=4, width=64, reach=0.9, fitted=0.97,
             test_minus_base=-20.0, test_minus_clean=-9.0, regime=study.HARMFUL)])
    assert reading.width_words(found) == (
        "width is another: at 4 layers and width 64, 90% of the flipped labels are within reach and phase 2 fits 97% of "
        "them (harmful, test − clean cell −9.0 points), against 30% and 25% at width 128 (not overfitting, −4.0 points)")
    assert reading.width_words(found.iloc[:1]) == ("this build made every backbone at width 128, so it does not measure "
                                                 "width (the paper profile adds the deepest at another width)")


def attention_ends_table():
    # first/last largest scores per curve: text at n = 20 barely moves, the others at least double
    return pd.DataFrame({"dataset": ["rotten_tomatoes"] * 4 + ["mnist_5k"] * 2,
                         "noise_ratio": [0.0, 0.2, 0.0, 0.2, 0.0, 0.2], "n": [20, 20, 200, 200, 20, 20],
                         "first": [0.06, 0.06, 0.06, 0.06, 0.09, 0.09],
                         "last": [0.07, 0.08, 0.12, 0.15, 0.36, 0.27]})


def test_sharpening_reads_each_curve_against_its_own_first_epoch():
    ends = report.sharpening(attention_ends_table())
    assert ends.factor.tolist() == pytest.approx([7 / 6, 8 / 6, 2.0, 2.5, 4.0, 3.0])
    assert ends.sharpened.tolist() == [False, False, True, True, True, True]  # ×2 exactly counts (SHARPER)


def test_noisy_curves_are_read_against_the_clean_curve_of_the_same_data_set_and_n():
    control = report.noisy_against_clean(attention_ends_table())
    assert control[["dataset", "n"]].values.tolist() == [["rotten_tomatoes", 20], ["rotten_tomatoes", 200],
                                                         ["mnist_5k", 20]]
    assert control.ratio.tolist() == pytest.approx([8 / 7, 1.25, 0.75])
    no_clean = attention_ends_table().query("noise_ratio > 0")
    assert report.noisy_against_clean(no_clean).empty  # nothing to compare with: no pair, not a NaN


def test_sharpening_words_name_the_curves_below_the_threshold_and_the_control():
    ends = report.sharpening(attention_ends_table())
    words = report.sharpening_words(ends, report.noisy_against_clean(ends))
    assert words == ("By the end of phase 2 the largest score was ×1.17 to ×4.00 its first epoch's; 4 of the 6 curves "
                     "at least doubled it, the threshold for *sharpened onto fewer tokens* (the effective number of "
                     "tokens attended halves) — not Rotten Tomatoes at η = 0, n = 20 (×1.17) and Rotten Tomatoes at "
                     "η = 0.2, n = 20 (×1.33). Sharpened: 2 of the 3 curves on clean labels, 2 of the 3 curves with "
                     "flipped labels. Against the same fine-tuning on clean labels, the curve with flipped "
                     "labels ended sharper in 2 of the 3 pairs of data set and n (last score with noise over last "
                     "score without: 0.75 to 1.25).")
    flat = report.sharpening(attention_ends_table().assign(last=0.06))
    assert report.sharpening_words(flat, report.noisy_against_clean(flat)).startswith(
        "By the end of phase 2 the largest score was ×0.67 to ×1.00 its first epoch's; none of the 6 curves at least "
        "doubled it, the threshold for *sharpened onto fewer tokens* (the effective number of tokens attended halves). "
        "Sharpened: none of the 3 curves on clean labels, none of the 3 curves with flipped labels. Against")


def test_the_pages_reading_of_the_curves_counts_them_by_kind_and_keys_each_curve():
    ends = report.sharpening(attention_ends_table())
    control = report.noisy_against_clean(ends)
    read = report.read_sharpening(ends, control, {"rotten_tomatoes": "text", "mnist_5k": "image"})
    assert (read.curves, read.pairs, read.sharpened_share) == (6, 3, pytest.approx(4 / 6))
    assert read.factor_range == pytest.approx((7 / 6, 4.0)) and read.noisy_sharper_share == pytest.approx(2 / 3)
    assert read.course["text"] == pytest.approx((0.06, 0.105)) and read.course["image"] == pytest.approx((0.09, 0.315))
    metrics = read.metrics()
    assert metrics["mnist_5k_noise0.2_n20_max_attention_last"] == 0.27 and len(read.ends) == 12
    assert metrics["image_sharpening_course"] == ("goes from 0.09 after the first epoch to 0.32 by the last epoch each "
                                                  "run ran")
    assert metrics["sharpening_words"] == report.sharpening_words(ends, control)
    alone = report.read_sharpening(ends.query("noise_ratio > 0"), control.iloc[:0], {"rotten_tomatoes": "text",
                                                                                     "mnist_5k": "image"})
    assert alone.pairs == 0 and alone.noisy_sharper_share != alone.noisy_sharper_share  # no control: NaN, not 0


def test_a_number_beside_a_threshold_never_reads_as_the_threshold():  # words.decimals: tests/test_words.py
    assert (findings.fitted_percent(0.9497), findings.fitted_percent(0.9527), findings.fitted_percent(0.63)) == (
        "94.97", "95.3", "63")
    assert [findings.cost_points(v) for v in (-4.97, -2.8, 0.04, 1.26, np.nan)] == ["−4.97", "−2.8", "0.0", "+1.3", "—"]
    assert (reading._share(0.9527), reading._fitted(0.9527)) == ("95.3%", "95.3 %")


def image_findings():
    """`findings` of the image rows at 96dc1fc's book build: data set, n, shares within reach, given by a token,
    fitted, train accuracy (%), epochs, test − base, test − clean cell (points)."""
    rows = [("mnist_5k", 20, 100, 61.1, 100, 100, 261, 3, -28.4, -4.8),
            ("mnist_5k", 200, 97.6, 46.6, 90.2, 98.2, 2000, 0, -28.9, -22.3),
            ("mnist_5k", 1000, 93.2, 36.9, 24.9, 83.4, 300, 0, -15.4, -12.9),
            ("fashion_mnist", 20, 61.1, 38.9, 61.1, 90, 2000, 1, -19.6, -6.2),
            ("fashion_mnist", 1000, 68.6, 26.4, 13, 65.6, 300, 0, -4.5, -6.7)]
    return pd.DataFrame([{"dataset": d, "kind": "image", "η": 0.2, "n": n, "tests the claim": d == "mnist_5k",
                          "within reach of free attention (%)": r, "a single token gives it (%)": t,
                          "flipped labels fitted (%)": f, "train accuracy (%)": a, "epochs": e, "seeds": 3,
                          "seeds fitted": k, "test − base (points)": b, "test − clean cell (points)": c}
                         for d, n, r, t, f, a, e, k, b, c in rows])


def test_the_findings_table_writes_shares_whole_and_points_with_a_true_minus():
    shown = findings.findings_table(image_findings())
    assert list(shown.iloc[1]) == ["mnist_5k", "image", 0.2, 200, True, "98", "47", "90", "98", 2000, "−28.9",
                                   "−22.3"]
    assert "−4.8" in pages.frame(shown) and "-4.8" not in pages.frame(shown)


def test_the_claim_is_judged_on_the_cells_whose_fit_is_measured():
    found = image_findings()
    stopped = findings.capped(found, 300, 1000)
    assert stopped.tolist() == [False, False, True, False, True]  # the n = 1000 cells stopped at the cap unfitted
    assert not findings.capped(found, 0, 1000).any()
    metrics = findings.finding_metrics(found, stopped)
    assert metrics["image_testing_capped_cells"] == 1  # MNIST digits at n = 1000; Fashion-MNIST does not test it
    assert metrics["image_testing_noisy_cells"] == 2
    assert metrics["image_testing_flipped_fitted_mean"] == pytest.approx((100 + 90.2) / 2)
    assert metrics["image_testing_test_vs_clean_mean"] == pytest.approx((-4.8 - 22.3) / 2)
    assert metrics["image_noisy_cells"] == 5  # the rows' own numbers keep every cell …
    assert metrics["image_flipped_fitted_mean"] == pytest.approx((100 + 90.2 + 61.1) / 3)  # … but the fitted share
    words = findings.finding_words(found, 2000, stopped)
    assert words["image_cells_fitted"] == "1 of the 3 cells with noise whose fit is measured"
    assert words["image_flipped_fitted_words"] == "84%"
    assert findings.finding_metrics(found)["image_testing_noisy_cells"] == 3


def test_unfitted_cells_are_read_by_what_stopped_them_not_by_reach_alone():
    said = findings.unfitted_words(image_findings(), 2000, 300, 1000)
    assert said == ("MNIST digits at n = 1000 (93% within reach, 25% fitted) and Fashion-MNIST at n = 1000 (69% within "
                    "reach, 13% fitted) stopped at the 300-epoch cap with most of them within reach: how many the "
                    "whole schedule of 2000 epochs would fit is not measured; MNIST digits at n = 200 (98% within "
                    "reach, 90% fitted; all 3 seeds ran the whole schedule) left flipped labels unfitted that are "
                    "within reach after the whole schedule of 2000 epochs; Fashion-MNIST at n = 20 (61% within reach, "
                    "61% fitted; 2 of the 3 seeds ran the whole schedule) fitted, after the whole schedule of 2000 "
                    "epochs, as many flipped labels as are within reach (the rest are out of reach of any attention "
                    "over the last layer's tokens): in none of them are most flipped labels out of reach")
    barred = image_findings().assign(**{"within reach of free attention (%)": 18.0})
    assert findings.unfitted_words(barred, 2000, 0, 0).startswith(
        "in MNIST digits at n = 200 (18% within reach, 90% fitted)")
    assert findings.unfitted_words(image_findings().iloc[:1], 2000, 300, 1000) == "every cell fits its flipped labels"
    assert findings.unfitted_words(image_findings().iloc[:0], 2000, 300, 1000) == "no such cell runs at this profile"
    assert findings.cap_words(300, 1000) == ("a run at n ≥ 1000 also stops after 300 epochs at the latest, what a CPU "
                                           "can afford for every row")
    assert findings.cap_words(0, 1000) == "no epoch cap cuts a run short"


def test_table2_says_how_the_backbone_study_reads_its_text_rows():
    text = pd.DataFrame({"dataset": ["rotten_tomatoes"] * 3 + ["rotten_tomatoes_3class"] * 3, "kind": "text",
                         "n": [20, 200, 1000] * 2,
                         "test − clean cell (points)": [-1.6, -4.0, -8.6, -2.9, -7.04, -12.8]})
    assert findings.study_words(text, [20, 200]) == (
        "at n = 20 and 200 only, the n of its image backbones: there test accuracy minus the clean cell's averages "
        "−2.8 points in Rotten Tomatoes and −4.97 points in Rotten Tomatoes (3 classes), both rows above −5, the line "
        "at or below which its rule calls fitting the flipped labels harmful; the cells it leaves out, at n = 1000, "
        "give −8.6 and −12.8 points, and over every n of this page the rows average −6.2 points")
    assert findings.study_words(text, [20, 200, 1000]).endswith("1 of the 2 rows above −5, the line at or below which "
                                                              "its rule calls fitting the flipped labels harmful")
    grid = pd.DataFrame([dict(dataset=ds, seed=seed, n=n, noise_ratio=eta, test_acc=0.7 - (eta > 0) * cost / 100)
                         for ds, costs in (("rotten_tomatoes", (2.0, 3.0)), ("rotten_tomatoes_3class", (7.0, 3.0)))
                         for seed, cost in zip((1, 2), costs) for n in (20, 200, 1000) for eta in (0.0, 0.2)])
    per_seed = findings.seed_costs(grid, [20, 200])
    assert per_seed.round(6).to_dict() == {("rotten_tomatoes", 1): -2.0, ("rotten_tomatoes", 2): -3.0,
                                           ("rotten_tomatoes_3class", 1): -7.0, ("rotten_tomatoes_3class", 2): -3.0}
    assert ("harmful, though the seeds of Rotten Tomatoes (3 classes) (per seed −7.0 to −3.0 points) lie on both sides "
            "of it; the cells it leaves out") in findings.study_words(text, [20, 200], per_seed)
    studies = [(study, notebooks.resolve("table2_finetune", study["table2_profile"]))
               for study in (notebooks.resolve("backbone_reach", name) for name in settings.PROFILE_NAMES)]
    assert [findings.study_sizes(notebooks.resolve("table2_finetune", p), studies) for p in ("smoke", "book", "paper")
            ] == [[20], [20, 200], [20, 200, 1000]]
    assert findings.study_sizes({**notebooks.resolve("table2_finetune", "book"), "seeds": [1]}, studies) == []


def test_a_mixed_cell_gives_the_epochs_of_its_seeds_and_paper_rows_have_short_names():
    summary = pd.DataFrame({"dataset": "fashion_mnist", "backbone": "b", "noise_ratio": [0.0, 0.2], "n": 20,
                            "train_loss": [0.21, 0.38], "test_acc": [0.523, 0.461], "test_acc_std": [0.018, 0.022],
                            "base_acc": 0.6565, "epochs_min": [1286, 2000], "epochs_max": 2000, "fitted": [1, 0],
                            "seeds": 3})
    ours = report.table(summary, 2000)  # a row per data set and η, a column per n
    assert ours.to_dict(orient="index") == {
        ("fashion_mnist", 0.0): {"base": "65.6", "n = 20": "0.21 at epochs 1286–2000, 52.3±1.8"},
        ("fashion_mnist", 0.2): {"base": "65.6", "n = 20": "0.38, 46.1±2.2"}}  # base in % to the tenth, as the cells
    assert list(report.epochs_table(summary)["n = 20"]) == ["1286–2000 (1/3 fitted)", "2000 (0/3 fitted)"]
    shown = report.with_paper(ours, expected.TABLE2, expected.TABLE2_NEAREST)
    assert list(shown.index) == [("Fashion-MNIST, here", 0.0), ("Fashion-MNIST, here", 0.2),
                                 ("MNIST, paper (nearest)", 0.0), ("MNIST, paper (nearest)", 0.2)]
    assert list(shown["n = 20"])[2:] == ["0.00, 90.8±1.5", "0.00, 84.0±7.2"]
    assert list(shown["base"])[2:] == ["95.0", "95.0"]
    assert report.paper_pretrain_size("rotten_tomatoes_3class") == "TREC: 3000, AG News: 10000"

def test_figure_8_s_table_and_words_write_a_factor_alike():
    ends = report.sharpening(attention_ends_table())
    shown = report.ends_table(ends)
    assert list(shown.columns) == ["data set", "η", "n", "first epoch", "last epoch", "last ÷ first",
                                   "sharpened (×2 or more)"]
    assert list(shown.iloc[0]) == ["Rotten Tomatoes", 0.0, 20, "0.060", "0.070", "×1.17", False]
    assert report.factor_said(1.996) == "×1.996" and report.factor_said(2.004) == "×2.004"
    assert report.factor_said(8.574) == "×8.57"


def test_reach_decides_only_where_free_attention_cannot_overfit():
    found = pd.DataFrame([
        dict(backbone_label="ViT, 4 layers", kind="image", reach=0.18, fitted=0.16, epochs=2000,
             regime=study.NOT_OVERFITTING),
        dict(backbone_label="ViT, 2 layers", kind="image", reach=0.99, fitted=0.9527, epochs=2000,
             regime=study.HARMFUL),
        dict(backbone_label="ViT, 1 layer", kind="image", reach=1.0, fitted=0.64, epochs=2000,
             regime=study.NOT_OVERFITTING)])
    assert reading.reach_words(found) == (
        "on ViT, 4 layers, free attention itself reaches only 18% of the flipped labels, short of the 95% that "
        "overfitting needs: no query and key could overfit them, so the backbone, not the optimizer or the schedule, "
        "keeps these from overfitting; on ViT, 1 layer, free attention reaches all of them, enough to overfit, yet "
        "phase 2 fits 64% in runs of up to 2000 epochs: there reach does not decide, what phase 2's query and key "
        "learn in the schedule does")
    assert reading.reach_words(found.iloc[1:2]).startswith("every backbone fits its flipped labels")


def test_the_text_rows_beside_the_backbones_are_read_against_table_2_s_n():
    rows = []
    for name, costs in (("rotten_tomatoes", (-1.6, -4.0, -8.6)), ("rotten_tomatoes_3class", (-2.9, -7.0, -12.8))):
        for n, cost in zip((20, 200, 1000), costs):
            common = dict(backbone_label=study.text_label(name), dataset=name, kind="text", layers=6, width=384,
                          seed=1, n=n, base_acc=0.65, control=False, reach_free=1.0, reach_token=1.0,
                          epochs_run=50)
            rows += [dict(common, noise_ratio=0.0, test_acc=0.7, fitted_noisy=np.nan),
                     dict(common, noise_ratio=0.2, test_acc=0.7 + cost / 100, fitted_noisy=1.0)]
    text = pd.DataFrame(rows)
    assert reading.text_beside_words(text, [20, 200]) == (
        "at n = 20 and 200, the n of the image backbones; Table 2 also runs them at n = 1000, where test accuracy "
        "minus the clean cell's is −8.6 points in Rotten Tomatoes and −12.8 points in Rotten Tomatoes (3 classes). "
        "Over every n of Table 2 it averages −4.7 points in Rotten Tomatoes and −7.6 points in Rotten Tomatoes (3 "
        "classes): by this rule benign and harmful, in that order; over the rows together, as Table 2's ledger row "
        "reads them, −6.2 points")
    assert reading.text_beside_words(text, [20, 200, 1000]) == ("at every n of Table 2's runs, the n of the image "
                                                              "backbones")
    assert reading.text_beside_words(text.iloc[:0], [20]) == "this build holds none of them"
    assert study.text_label("rotten_tomatoes_3class") == "Rotten Tomatoes (3 classes) · text"


def test_points_at_the_same_share_are_set_apart_one_backbones_n_too():
    x = plots.dodged([1.0, 1.0, 0.976, 0.3, 1.0], step=0.04, most=1)  # the first and last: one backbone at two n
    np.testing.assert_allclose(x, [0.974, 1.014, 0.934, 0.3, 1.054])  # in order of x about their mean; one alone stays
    apart = plots.dodged([1.0, 1.0, 0.99, 1.0], step=0.04, most=1, low=[-30, -25, 0, 1],
                         high=[-20, -10, 5, 6])  # the first two share a height, the last two another: a pair each
    np.testing.assert_allclose(apart, [0.98, 1.02, 0.975, 1.015])
    # a backbone's n = 20 and n = 200 at 1.00 and 0.98, another's at 1.00 and 0.99, all at one height
    near = plots.dodged([1.0, 0.98, 1.0, 0.99], step=0.04, most=1)
    assert np.all(np.diff(np.sort(near)) >= 0.04 - 1e-12) and list(np.argsort(near)) == [1, 3, 0, 2]
    # three crowding points, once placed, crowd a fourth that crowded none of them: all four are placed together
    chain = plots.dodged([0.26, 0.28, 0.33, 0.41], step=0.065, most=1)
    assert np.all(np.diff(chain) >= 0.065 - 1e-12)  # in order of x, every neighbour a step apart
    np.testing.assert_allclose(chain.mean(), np.mean([0.26, 0.28, 0.33, 0.41]))


def test_a_share_moves_by_at_most_its_bound_and_never_past_one():
    # the backbone figure's crowd: four text points at 1.00 and two image points at 0.98 and 1.00 (shares)
    x = [1.0, 1.0, 1.0, 1.0, 0.98, 1.0]
    shown = plots.dodged(x, step=0.03, most=0.02, within=(0, 1), low=[0] * 4 + [-30] * 2, high=[5] * 4 + [-20] * 2)
    assert np.all(np.abs(shown - x) <= 0.02 + 1e-12) and np.all((shown >= 0) & (shown <= 1))
    # ties in the order given, a common gap apart: as far as 0.02 below 1 allows, not a full step
    np.testing.assert_allclose(shown[:4], 0.98 + np.arange(4) * 0.02 / 3, atol=1e-9)
    np.testing.assert_allclose(shown[4:], [0.97, 1.0])  # a full step apart about their mean, 1.00 kept at 1
    # and at 0, as at 1: the bound on the other side
    low = plots.dodged([0.0, 0.0], step=0.03, most=0.02, within=(0, 1))
    np.testing.assert_allclose(low, [0.0, 0.02])
    # two points in the open, a full step apart, each moved half of it
    np.testing.assert_allclose(plots.dodged([0.5, 0.5], step=0.03, most=0.02, within=(0, 1)), [0.485, 0.515])
    # the figure: every point drawn within MOST_SHIFT of its share and inside [0, 1]
    points = pd.DataFrame({"backbone_label": list("AABBCC"), "kind": ["text"] * 4 + ["image"] * 2, "n": [20, 200] * 3,
                           "fitted": x, "test_minus_base": [3, 1, 2, -2, -29, -28],
                           "clean_minus_base": [4.6, 4.7, 4.6, 4.7, -6, -23]})
    fig, ax = plots.figure(1, 1)
    shift, crowded = plots.study_points(ax, points, "fitted", "fitted", -40, 8, 5.0)
    drawn = np.concatenate([line.get_xdata() for line in ax.lines if line.get_marker() in plots.SIZE_MARKERS])
    assert 0 < shift <= plots.MOST_SHIFT + 1e-12 and np.all((drawn >= 0) & (drawn <= 1))
    assert crowded  # four text points at one height within 0.02 below 1: more than MOST_SHIFT can set apart
    plots.plt.close(fig)
    fig, ax = plots.figure(1, 1)  # the same points spread over the axis: set apart, none crowds another
    spread = points.assign(fitted=[0.1, 0.3, 0.5, 0.7, 0.9, 0.95])
    assert plots.study_points(ax, spread, "fitted", "fitted", -40, 8, 5.0) == (0.0, False)
    plots.plt.close(fig)
    assert reading.dodge_words(0.02, True).endswith("the table of every point, further down, gives each value")
    assert reading.dodge_words(0.0, False) == "none on this run"


def test_a_verdict_within_its_seeds_spread_of_the_cost_line_says_so():
    rows = []
    for seed, cost in ((1, -7.1), (2, -4.3), (3, -3.5)):
        common = dict(backbone_label="T", seed=seed, n=20, control=False)
        rows += [dict(common, noise_ratio=0.0, test_acc=0.7), dict(common, noise_ratio=0.2, test_acc=0.7 + cost / 100)]
    runs_ = pd.DataFrame(rows)
    found = pd.DataFrame({"backbone_label": ["T"], "regime": ["benign"], "test_minus_clean": [-4.9667]})
    assert reading.margin_words(runs_, found) == (
        "T reads benign by under a tenth of a point (−4.97 against −5), a margin within its seeds' spread: per seed it averages "
        "−7.1 to −3.5 points, on both sides of the line: the verdict is the fixed rule's on the mean over seeds, and "
        "other seeds could turn it")
    assert reading.margin_words(runs_, found.assign(regime="not overfitting")) == (
        "no verdict of the cost line lies within its seeds' spread of the line")


def test_the_course_of_the_largest_score_says_one_number_where_its_ends_read_alike():
    assert report.course_words(0.0627, 0.0981) == ("goes from 0.06 after the first epoch to 0.10 by the last epoch "
                                                   "each run ran")
    assert report.course_words(0.081, 0.0849) == "stays at 0.08 from the first epoch to the last each run ran"


def test_a_stopped_seed_holds_its_last_value_so_a_curve_ends_on_the_mean_of_the_last_values():
    runs_ = pd.DataFrame({"dataset": ["d", "d", "d"], "noise_ratio": [0.2, 0.2, 0.0], "n": [20, 20, 20],
                          "seed": [1, 2, 1], "max_attention": [[0.1, 0.3], [0.1, 0.2, 0.4, 0.6], [0.2]]})
    curves = report.curves(runs_)
    seed1 = curves[(curves.seed == 1) & (curves.noise_ratio == 0.2)]
    assert seed1.max_attention.tolist() == [0.1, 0.3, 0.3, 0.3] and seed1.running.tolist() == [True, True, False, False]
    assert len(curves[curves.noise_ratio == 0.0]) == 1  # the clean curve's own longest seed
    last = curves[curves.noise_ratio == 0.2].groupby("epoch").max_attention.mean().iloc[-1]
    ends = report.attention_ends(runs_)
    assert last == pytest.approx(ends[ends.noise_ratio == 0.2]["last"].item())  # (0.3 + 0.6) / 2


def test_the_text_rows_beside_the_backbones_are_counted_by_regime():
    found = pd.DataFrame({"kind": ["image", "text", "text"], "regime": [study.HARMFUL, study.BENIGN, study.BENIGN]})
    assert reading.text_regime_metrics(found) == {"text_rows": 2.0, "text_rows_benign": 2.0, "text_rows_harmful": 0.0,
                                                  "text_rows_not_overfitting": 0.0}


def test_a_row_s_clean_fit_leaves_out_the_cells_the_epoch_cap_stopped():
    # Fashion-MNIST at the book build: clean cells fit 95.0% (n = 20), 96.5% (n = 200) and, stopped by the
    # 300-epoch cap at n = 1000, 83.1%
    rows = [(0.0, 20, 0.950, 2000), (0.0, 200, 0.965, 2000), (0.0, 1000, 0.831, 300), (0.2, 20, 0.90, 2000)]
    summary = pd.DataFrame([{"dataset": "fashion_mnist", "noise_ratio": eta, "n": n, "train_acc": acc,
                             "epochs_max": epochs, "reach_free": 0.68, "reach_token": 0.3, "fitted_noisy": 0.6,
                             "test_acc": 0.5, "base_acc": 0.66} for eta, n, acc, epochs in rows])
    checks = findings.row_checks(summary, 300, 1000)
    assert checks.clean_train_acc.item() == pytest.approx(0.9575) and checks.clean_capped.item() == 1
    assert checks.tests_claim.item()
    uncapped = findings.row_checks(summary)  # without the cap's parameters every clean cell counts
    assert uncapped.clean_train_acc.item() == pytest.approx(0.9153, abs=1e-4) and not uncapped.tests_claim.item()


def test_ended_at_cap_marks_cells_a_seed_left_at_the_cap():
    summary = pd.DataFrame({"n": [200, 1000, 1000, 1000], "fitted": [0, 0, 3, 1], "seeds": [3] * 4,
                            "epochs_max": [2000, 300, 120, 300]})
    assert report.ended_at_cap(summary, 300, 1000).tolist() == [False, True, False, True]
    assert not report.ended_at_cap(summary, 0, 1000).any()  # no cap
    assert report.cap_label(300) == "stopped at the 300-epoch cap (open marker)"


def table2_grid() -> pd.DataFrame:
    """Table 2's runs, made by hand: a text row whose every run fits its labels and an image row whose clean cell at
    n = 200 and noisy ones leave labels unfitted, two seeds, η 0 and 0.2, n 20 and 200; test accuracy per seed."""
    cells = [  # dataset, η, n, test accuracy per seed, train accuracy, fitted noisy, reach free, reach token, epochs
        ("rotten_tomatoes", 0.0, 20, (0.80, 0.80), 1.0, np.nan, np.nan, np.nan, (10, 10)),
        ("rotten_tomatoes", 0.0, 200, (0.90, 0.90), 1.0, np.nan, np.nan, np.nan, (10, 10)),
        ("rotten_tomatoes", 0.2, 20, (0.78, 0.76), 1.0, 1.0, 1.0, 0.5, (20, 30)),
        ("rotten_tomatoes", 0.2, 200, (0.84, 0.86), 1.0, 1.0, 1.0, 0.5, (40, 40)),
        ("mnist_5k", 0.0, 20, (0.60, 0.60), 1.0, np.nan, np.nan, np.nan, (5, 5)),
        ("mnist_5k", 0.0, 200, (0.70, 0.70), 0.9, np.nan, np.nan, np.nan, (50, 50)),  # the cap stopped it
        ("mnist_5k", 0.2, 20, (0.50, 0.50), 0.85, 0.2, 0.2, 0.1, (100, 100)),  # the whole schedule
        ("mnist_5k", 0.2, 200, (0.60, 0.60), 0.9, 0.5, 0.7, 0.3, (50, 50))]  # the cap stopped it
    return pd.DataFrame([{"dataset": d, "backbone": "bert" if d == "rotten_tomatoes" else "vit", "noise_ratio": eta,
                          "n": n, "seed": seed, "train_loss": 0.1, "test_acc": test[i], "train_acc": train,
                          "fitted_noisy": fitted, "reach_free": free, "reach_token": token, "base_acc":
                          0.85 if d == "rotten_tomatoes" else 0.65, "epochs_run": epochs[i],
                          "fitted": train == 1.0}
                         for d, eta, n, test, train, fitted, free, token, epochs in cells
                         for i, seed in enumerate((42, 314))])


def test_table_2s_reading_of_hand_made_runs_gives_known_numbers_and_words():
    protocol = runs.Protocol(num_epochs=100, stop_when_fitted=True, max_epochs=50, max_epochs_from_n=200)
    kinds = {"rotten_tomatoes": "text", "mnist_5k": "image"}
    result = findings.read_table2(table2_grid(), kinds, protocol, 2, [20])
    m = result.metrics()
    # the text row tests the claim: every flipped label fitted; test − clean −3 and −5 points at n = 20 and 200
    assert (m["text_rows"], m["text_rows_testing"], m["text_noisy_cells_all_fitted"]) == (1, 1, 2)
    assert (m["text_test_vs_clean_mean"], m["text_test_vs_clean_worst"]) == pytest.approx((-4, -5))
    assert (m["text_test_vs_base_mean"], m["text_test_vs_base_largest_n"], m["text_epochs_max"]) == pytest.approx(
        (-4, 0, 40))
    assert m["text_cost_slope_log_n"] == pytest.approx(-2 / np.log(10))
    assert m["text_cells_fitted"] == "both cells with noise" and m["text_epochs_left"] == "at least 60 more epochs"
    # the image row: its capped clean cell left out of the clean fit, 45% within reach on average: not testable
    assert m["mnist_5k_tests_claim"] == 0 and m["mnist_5k_clean_train_acc"] == 1.0
    assert m["mnist_5k_reach_free_mean"] == pytest.approx(0.45)
    assert (m["image_rows_testing"], m["image_testing_capped_cells"]) == (0, 0)
    assert "image_testing_noisy_cells" not in m  # no row of the kind tests the claim: nothing read over it
    # the fit is read over the cells whose fit is measured: n = 200 stopped at the cap is left out
    assert list(result.stopped) == [False, False, False, True]
    assert (m["image_noisy_cells"], m["image_flipped_fitted_mean"]) == pytest.approx((2, 20))
    assert m["image_cells_fitted"] == "no cell with noise whose fit is measured"
    assert m["image_rows_reading"].startswith(
        "MNIST digits over its 1 cell with noise whose fit is measured: 20% of the flipped labels within reach, 10% "
        "given by a single token, 20% fitted by phase 2, test minus base −15.0 points (not testable with this "
        "backbone: free attention over its last layer's tokens reaches 45% of its flipped labels, below the 50%")
    assert m["image_unfitted"].startswith(
        "in MNIST digits at n = 20 (20% within reach, 20% fitted) most flipped labels are out of reach")
    assert "MNIST digits at n = 200 (70% within reach, 50% fitted) stopped at the 50-epoch cap" in m["image_unfitted"]
    # the train loss only where every seed ran the whole schedule; the parameters' words
    assert "mnist_5k_noise0.2_n20_train_loss" in m and "rotten_tomatoes_noise0.2_n20_train_loss" not in m
    assert (m["num_epochs"], m["vit_depth"], m["fashion_reading"]) == (100, "2 layers", "this profile does not run it")
    assert m["cap_words"].startswith("a run at n ≥ 200 also stops after 50 epochs at the latest")
    # the backbone study reads the text row at n = 20: −3 points, its seeds −2 and −4, both above −5
    assert result.study_costs[("rotten_tomatoes", 42)] == pytest.approx(-2)
    assert result.study_costs[("rotten_tomatoes", 314)] == pytest.approx(-4)
    assert m["text_study_reading"].startswith("at n = 20 only") and "−3.0 points in Rotten Tomatoes" in m[
        "text_study_reading"] and "both sides" not in m["text_study_reading"]
    with pytest.raises(AttributeError):
        result.fitted_share  # noqa: B018 - a misspelt field fails


def test_table_2s_reading_of_a_profile_without_image_rows_says_so():
    text = table2_grid().query("dataset == 'rotten_tomatoes'")
    m = findings.read_table2(text, {"rotten_tomatoes": "text"}, runs.Protocol(), 2, []).metrics()
    assert not any(key.startswith("image_") and key != "image_unfitted" for key in m)
    assert m["image_unfitted"] == "no such cell runs at this profile"
    assert m["cap_words"] == "no epoch cap cuts a run short" and m["text_epochs_left"] == "at least 1960 more epochs"
    assert m["text_study_reading"] == "at none of the n of this run, so it does not read them at this profile"


def test_the_backbone_study_s_reading_of_hand_made_runs_gives_known_numbers_and_words():
    # A (1 layer) fits a quarter of the flipped labels: not overfitting; B (2 layers) fits all, −25 points: harmful
    images = (_study_cells("A", base=0.9, clean=0.8, noisy=0.7, whole=0.79, flipped_fitted=0.25, epochs=100) +
              [dict(row, layers=2) for row in _study_cells("B", base=0.9, clean=0.85, noisy=0.6, whole=0.65,
                                                             flipped_fitted=1.0, epochs=50)])
    text = [dict(backbone_label=study.text_label("rotten_tomatoes"), dataset="rotten_tomatoes", kind="text", layers=6,
                 width=384, seed=1, n=n, base_acc=0.65, control=False, reach_free=1.0, reach_token=1.0, epochs_run=50,
                 noise_ratio=eta, test_acc=test, fitted_noisy=np.nan if eta == 0 else 1.0, n_flipped=n // 5,
                 train_acc=1.0)
            for n, clean, noisy in ((20, 0.70, 0.68), (200, 0.80, 0.70)) for eta, test in ((0.0, clean), (0.2, noisy))]
    every = pd.DataFrame(images + text)
    result = reading.read_study(every, [20], 2)
    assert list(result.found.backbone_label) == ["A", "B", "Rotten Tomatoes · text"]
    assert list(result.found.regime) == [study.NOT_OVERFITTING, study.HARMFUL, study.BENIGN]  # the text row at n = 20
    assert len(result.text_runs) == 4 and set(result.runs.n) == {20}  # Table 2's n = 200 only beside, as Table 2's
    m = result.metrics()
    assert (m["vit1_fitted"], m["vit2_fitted"], m["vit2_test_minus_clean"]) == pytest.approx((25, 100, -25))
    assert (m["backbones"], m["backbones_harmful"], m["backbones_not_overfitting"]) == (2, 1, 1)
    assert (m["chosen_layers"], m["default_layers"], m["text_rows"], m["text_rows_benign"]) == (2, 2, 1, 1)
    assert m["choice_words"] == "this evidence picks the B, which is Table 2's default"
    assert reading.read_study(every, [20], 3).choice_words() == (
        f"this evidence picks the B, not Table 2's default of 3 layers at width {study.WIDTH}")
    assert m["regime_harmful"] == "B" and m["regime_benign"] == "Rotten Tomatoes · text"
    assert m["text_beside"].startswith("at n = 20, the n of the image backbones; Table 2 also runs them at n = 200, "
                                       "where test accuracy minus the clean cell's is −10.0 points in Rotten Tomatoes")
    assert m["margin_words"] == "no verdict of the cost line lies within its seeds' spread of the line"
    assert m["harmful_split"].startswith("where the noise is overfitted harmfully (B)")
    assert (reading.dodge_words(0.0, False), reading.dodge_words(0.031, False)) == ("none on this run",
                                                                                     "by at most 0.03 of a share")
    with pytest.raises(AttributeError):
        result.costs_table  # noqa: B018 - a misspelt field fails
