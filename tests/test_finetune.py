"""The real-data protocol (Table 2, Figures 8/9) on tiny random backbones and fixture data sets built here, offline.

Tiny BERT and ViT checkpoints are saved to a temporary folder and loaded through the same from_pretrained path as
the real ones; the fixture data sets carry the hub's schemas (column and label names) and MedMNIST's .npz layout.
"""

import json
import time

import numpy as np
import pandas as pd
import pytest
import torch

from benign import finetune, notebooks, realdata
from benign.checks import ParameterError

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
    realdata.image_processor_for(28).save_pretrained(folder)
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

    sst2 = realdata.load(str(sst2_folder))
    assert sst2.kind == "text" and sst2.label_names == ["negative", "positive"]
    assert len(sst2.train_labels) == 300 and len(sst2.test_labels) == 40  # GLUE's test is unlabelled: validation
    assert sst2.pretrain_size == 10000 and isinstance(sst2.train_inputs[0], str)
    mnist = realdata.load(str(mnist_folder))
    assert mnist.kind == "image" and mnist.train_inputs.shape == (120, 28, 28) and mnist.num_classes == 10
    trec = datasets.Dataset.from_dict(
        {"text": ["what is a film ?"] * 8, "coarse_label": [0, 1, 2, 3, 4, 5, 0, 1], "fine_label": [0] * 8},
        features=datasets.Features({"text": datasets.Value("string"),
                                    "coarse_label": datasets.ClassLabel(names=["ABBR", "ENTY", "DESC", "HUM", "LOC",
                                                                               "NUM"]),
                                    "fine_label": datasets.Value("int64")}))
    datasets.DatasetDict({"train": trec, "test": trec}).save_to_disk(str(tmp_path / "trec"))
    loaded = realdata.load(str(tmp_path / "trec"))
    assert loaded.num_classes == 6 and loaded.pretrain_size == 3000 and list(loaded.train_labels[:3]) == [0, 1, 2]


def test_medmnist_npz_layout(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {f"{s}_images": rng.integers(0, 256, (k, 28, 28), dtype=np.uint8) for s, k in
              (("train", 50), ("val", 10), ("test", 20))}
    arrays.update({f"{s}_labels": rng.integers(0, 2, (k, 1)) for s, k in (("train", 50), ("val", 10), ("test", 20))})
    np.savez(tmp_path / "breastmnist.npz", **arrays)
    data = realdata.load(str(tmp_path / "breastmnist.npz"))
    assert data.name == "breastmnist" and data.pretrain_size == 200 and data.num_classes == 2
    assert data.train_inputs.shape == (50, 28, 28) and data.train_labels.shape == (50,)
    assert realdata.to_rgb(data.train_inputs).shape == (50, 28, 28, 3)
    np.savez(tmp_path / "broken.npz", train_images=arrays["train_images"])
    with pytest.raises(ParameterError, match="not in the MedMNIST layout"):
        realdata.load(str(tmp_path / "broken.npz"))


def test_offline_assets_are_real_and_fixed():
    rt = realdata.load("rotten_tomatoes")
    assert rt.kind == "text" and rt.label_names == ["rotten", "fresh"] and len(rt.test_labels) == 1000
    assert len(set(rt.train_inputs) & set(rt.test_inputs)) == 0 and 0.5 < rt.train_labels.mean() < 0.65
    digits = realdata.load("mnist_5k")
    assert digits.train_inputs.shape == (4000, 28, 28) and len(digits.test_labels) == 1000
    assert np.bincount(digits.test_labels).min() > 60  # the test split is a random subset, not one class
    assert realdata.load("mnist_5k").fingerprint() == digits.fingerprint()


@pytest.mark.parametrize("name", ["mnist", "sst2", "fancyzhx/ag_news", "pneumoniamnist"])
def test_online_names_fail_at_once_offline(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(realdata, "MEDMNIST_ROOT", realdata.Path("/nonexistent"))
    started = time.perf_counter()
    with pytest.raises(ParameterError) as err:
        realdata.load(name)
    assert time.perf_counter() - started < 10
    message = str(err.value)
    assert "\n" not in message and ("offline assets" in message and "local folder" in message)


def test_online_backbones_fail_at_once_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("bert-base-uncased", "google/vit-base-patch16-224-in21k"):
        with pytest.raises(ParameterError, match="use the offline assets .* or a local folder"):
            realdata.backbone_folder(name)


def test_unknown_names_and_kind_mismatch(tiny_vit):
    with pytest.raises(ParameterError, match="dataset 'imagenet' is unknown"):
        realdata.load("imagenet")
    with pytest.raises(ParameterError, match="reads image, but 'rotten_tomatoes' holds text"):
        finetune.prepare("rotten_tomatoes", str(tiny_vit), str(tiny_vit), device="cpu")


# ------------------------------------------------------------------------------------ subsets and label noise
def test_splits_are_disjoint_nested_and_seeded():
    pre, fin = realdata.split_indices(500, 100, 50, seed=42)
    pre2, fin2 = realdata.split_indices(500, 100, 20, seed=42)
    assert len(set(pre) & set(fin)) == 0 and len(pre) == 100 and len(fin) == 50
    assert (pre == pre2).all() and (fin[:20] == fin2).all()  # phase 1 shared by every n; subsets nested
    assert not (realdata.split_indices(500, 100, 50, seed=314)[0] == pre).all()
    with pytest.raises(ParameterError, match="pretrain_size \\+ n = 501 is not allowed"):
        realdata.split_indices(500, 100, 401, seed=0)


@pytest.mark.parametrize("classes", [2, 6, 10])
def test_label_noise_rate_and_different_class(classes):
    labels = np.random.default_rng(0).integers(0, classes, 20000)
    noisy, flipped = realdata.add_label_noise(labels, 0.2, classes, seed=42)
    rate = flipped.mean()
    assert abs(rate - 0.2) < 4 * np.sqrt(0.2 * 0.8 / len(labels))
    assert (noisy[flipped] != labels[flipped]).all() and (noisy[~flipped] == labels[~flipped]).all()
    shift = (noisy[flipped] - labels[flipped]) % classes  # uniform over the other classes
    counts = np.bincount(shift, minlength=classes)[1:]
    assert counts.min() > 0.8 * counts.mean() and counts.max() < 1.2 * counts.mean()
    again, _ = realdata.add_label_noise(labels, 0.2, classes, seed=42)
    assert (again == noisy).all() and (realdata.add_label_noise(labels, 0.0, classes, 1)[0] == labels).all()


# ---------------------------------------------------------------------------------------- the protocol itself
@pytest.fixture(scope="module", params=["bert", "vit"])
def setting(request, tiny_bert, tiny_vit):
    """A tiny backbone with 20 training inputs, labels, a seeded head and re-initialised query/key."""
    rng = np.random.default_rng(3)
    if request.param == "bert":
        bb = finetune.Backbone(str(tiny_bert), 2, device="cpu")
        inputs = _sentences(20, rng)
    else:
        bb = finetune.Backbone(str(tiny_vit), 3, device="cpu")
        inputs = rng.integers(0, 256, (20, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, bb.num_labels, 20)
    return bb, inputs, labels, bb.seeded_head(42), bb.reset_qk(42)


def test_cached_first_token_output_matches_the_full_model(setting):
    bb, inputs, _, _, _ = setting
    enc = finetune.encode(bb, inputs)
    head = {k: v[None] for k, v in bb.seeded_head(0).items()}
    with torch.no_grad():
        full = finetune.full_logits(bb, inputs, {k: v[0] for k, v in head.items()})
    cached = bb.head_logits(enc.z[None], head)[0]
    torch.testing.assert_close(cached, full, rtol=1e-4, atol=1e-5)


def test_cached_and_full_forward_training_agree(setting):
    bb, inputs, labels, head, qk = setting
    enc = finetune.encode(bb, inputs)
    y = torch.as_tensor(labels)[None]
    idx = torch.arange(len(labels))[None]
    qk_cached, cached = finetune.phase2(bb, enc, idx, y, {k: v[None] for k, v in head.items()}, [qk], epochs=3,
                                        batch_size=16, optimizer="adamw", seeds=[42])
    model, full = finetune.full_forward_phase2(bb, inputs, labels, head, qk, epochs=3, batch_size=16,
                                               optimizer="adamw", seed=42)
    np.testing.assert_allclose(cached.epoch_loss, full.epoch_loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cached.epoch_max_attention, full.epoch_max_attention, rtol=1e-5, atol=1e-6)
    trained = dict(model.named_parameters())
    for key, name in zip(("Wq", "Wk", "bq", "bk"), bb.qk_names()):
        torch.testing.assert_close(qk_cached[key][0], trained[name].detach(), rtol=1e-4, atol=1e-6)
    assert not torch.allclose(qk_cached["Wq"][0], qk["Wq"])  # it did train
    assert cached.epoch_max_attention[0, -1] != cached.epoch_max_attention[0, 0]


def test_phase2_changes_exactly_the_last_query_and_key(setting):
    bb, inputs, labels, head, qk = setting
    before = {n: p.detach().clone() for n, p in bb.model.named_parameters()}
    model, _ = finetune.full_forward_phase2(bb, inputs, labels, head, qk, epochs=2, batch_size=16, optimizer="sgd",
                                            seed=42)
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
    enc = finetune.encode(bb, inputs)
    trained, cached = finetune.phase1(bb, enc.z[None], torch.as_tensor(labels)[None], [head], epochs=3,
                                      batch_size=16, optimizer="adamw", seeds=[42])
    assert sorted(trained) == sorted(bb.head_names())
    assert ("bert.pooler.dense.weight" in trained) == (bb.arch == "bert")  # BERT: pooler + classifier
    # the reference: the whole model, everything frozen but the head, as the authors' phase 1
    model = finetune.with_parameters(bb, head, {})
    for name, p in model.named_parameters():
        p.requires_grad_(name in head)
    named = dict(model.named_parameters())
    batch = bb.model_inputs(inputs)
    y = torch.as_tensor(labels)

    def batch_loss(idx):
        return torch.nn.functional.cross_entropy(model(**{k: v[idx[0]] for k, v in batch.items()}).logits,
                                                 y[idx[0]])[None]

    full = finetune.fit([named[n] for n in head], batch_loss, len(labels), 3, 16, "adamw",
                        [torch.Generator().manual_seed(42)], stacked=False)
    np.testing.assert_allclose(cached.epoch_loss, full.epoch_loss, rtol=1e-5, atol=1e-6)
    for n in head:
        torch.testing.assert_close(trained[n][0], named[n].detach(), rtol=1e-4, atol=1e-6)
        assert not torch.equal(trained[n][0], head[n])


def test_per_run_clipping_matches_clip_grad_norm():
    torch.manual_seed(0)
    stacked = [torch.randn(3, 4, 5), torch.randn(3, 5)]
    for p in stacked:
        p.grad = torch.randn_like(p) * torch.tensor([0.01, 1.0, 10.0]).view(3, *([1] * (p.dim() - 1)))
    singles = [[torch.nn.Parameter(p[r].clone()) for p in stacked] for r in range(3)]
    for r, params in enumerate(singles):
        for p, s in zip(params, stacked):
            p.grad = s.grad[r].clone()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
    finetune.clip_per_run(stacked)
    for r in range(3):
        for p, s in zip(singles[r], stacked):
            torch.testing.assert_close(s.grad[r], p.grad)


# ------------------------------------------------------------------------------------------ runs and caching
def test_run_grid_on_a_hub_schema_folder_is_cached(tiny_bert, sst2_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / "cache"))
    task = finetune.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = finetune.Protocol(pretrain_num_epochs=2, num_epochs=3, pretrain_size=60, max_test=20)
    runs = finetune.run_grid(task, protocol, [42, 314], [0.0, 0.2], [20, 40])
    assert len(runs) == 8 and set(runs.n) == {20, 40} and (runs.pretrain_size == 60).all()
    assert all(len(r) == 3 for r in runs.max_attention) and all(len(r) == 3 for r in runs.loss)
    assert ((runs.max_attention.map(min) > 0) & (runs.max_attention.map(max) <= 1)).all()
    base = runs.groupby("seed").base_acc.nunique()
    assert (base == 1).all()  # one phase-1 head per seed serves every cell
    assert len(list((tmp_path / "cache" / "finetune").glob("*.json"))) == 8

    def boom(*args, **kwargs):
        raise AssertionError("recomputed a cached run")

    monkeypatch.setattr(finetune, "_compute", boom)
    again = finetune.run_grid(task, protocol, [42, 314], [0.0, 0.2], [20, 40])
    pd.testing.assert_frame_equal(runs, again)
    summary = finetune.summarize(runs)
    table = finetune.table(summary)
    assert list(table.columns) == ["base", "η=0, n=20", "η=0, n=40", "η=0.2, n=20", "η=0.2, n=40"]
    metrics = finetune.table_metrics(summary)
    assert isinstance(metrics["glue_noise0.2_n40_test_acc"], float) and "glue_base_acc" in metrics
    head = finetune.headline(runs, summary)
    assert head["eta"] == 0.2 and head["n"] == 20 and 0 <= head["test_acc"] <= 100
    curves = finetune.curves(runs)
    assert len(curves) == 8 * 3 and set(finetune.attention_ends(curves).columns) >= {"first", "last"}


def test_too_large_n_is_left_out_like_breastmnist(tiny_bert, sst2_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / "cache"))
    task = finetune.prepare(str(sst2_folder), str(tiny_bert), "unused", device="cpu")
    protocol = finetune.Protocol(pretrain_num_epochs=1, num_epochs=1, pretrain_size=250, max_test=10)
    runs = finetune.run_grid(task, protocol, [42], [0.2], [20, 1000])
    assert list(runs.n) == [20]
    table = finetune.table(finetune.summarize(runs))
    assert list(table.columns) == ["base", "η=0.2, n=20"]


def test_small_vit_is_made_once_with_a_record(tmp_path, monkeypatch):
    monkeypatch.setenv("BENIGN_CACHE", str(tmp_path / "cache"))
    recipe = dict(epochs=1, samples=200, batch_size=100)
    folder = realdata.small_vit(recipe)
    record = json.loads((folder / "record.json").read_text())
    assert record["recipe"]["samples"] == 200 and "not ViT-in21k" in record["what"]
    assert len(record["data"]["files_sha256"]) == 4 and 0 <= record["fashion_mnist_test_accuracy"] <= 1
    stamp = (folder / "model.safetensors").stat().st_mtime
    assert realdata.small_vit(recipe) == folder and (folder / "model.safetensors").stat().st_mtime == stamp
    bb = finetune.Backbone("vit-fashion-mnist", 10, recipe, device="cpu")
    assert bb.arch == "vit" and bb.kind == "image" and bb.model.config.num_hidden_layers == 4


def test_protocol_rejects_bad_values_in_one_line():
    with pytest.raises(ParameterError, match="^optimizer = 'adam' is not allowed: optimizer must be adamw or sgd$"):
        finetune.Protocol(optimizer="adam")
    with pytest.raises(ParameterError, match="num_epochs = 0 is not allowed"):
        finetune.Protocol(num_epochs=0)


def test_differences_show_what_the_book_reduces():
    same = finetune.differences(finetune.Protocol(), [42, 314, 2718], [0.0, 0.2], [20, 200, 1000])
    assert list(same.setting) == ["none"]
    book = notebooks.resolve("table2_finetune", "book")
    protocol = finetune.Protocol(pretrain_num_epochs=book["pretrain_num_epochs"], num_epochs=book["num_epochs"],
                                 max_steps=book["max_steps"], batch_size=book["batch_size"],
                                 optimizer=book["optimizer"], add_special_tokens=book["add_special_tokens"])
    diff = finetune.differences(protocol, book["seeds"], book["noise_ratios"], book["sample_sizes"])
    assert set(diff.setting) <= {"phase 1 epochs", "phase 2 epochs", "phase 2 steps at most (0: no cap)",
                                 "phase 2 epochs run, per n"}  # only training length is reduced
    assert book["seeds"] == [42, 314, 2718] and book["sample_sizes"] == [20, 200, 1000]
    assert book["datasets"] == ["rotten_tomatoes", "mnist_5k"]


def test_max_steps_stops_early_like_the_hf_trainer():
    calls, lrs = [], []
    w = torch.zeros(1, 3, requires_grad=True)

    def batch_loss(idx):
        calls.append(idx.shape[1])
        return (w.sum(1) - 1.0) ** 2

    fit = finetune.fit([w], batch_loss, n=20, epochs=10, batch_size=16, optimizer="sgd",
                       generators=[torch.Generator().manual_seed(0)], max_steps=5)
    assert calls == [16, 4, 16, 4, 16] and fit.epoch_loss.shape == (1, 3)  # the third epoch is cut short
    calls.clear()
    finetune.fit([w], batch_loss, n=20, epochs=4, batch_size=16, optimizer="sgd",
                 generators=[torch.Generator().manual_seed(0)])
    assert len(calls) == 8


@pytest.mark.parametrize("profile", ["smoke", "book", "paper"])
def test_table_and_figure_share_their_runs(profile):
    table = notebooks.resolve("table2_finetune", profile)
    figure = notebooks.resolve("fig8_finetune_attention", profile)
    table.pop("out_dir"), figure.pop("out_dir")
    assert table == figure
    if profile == "paper":
        assert table["num_epochs"] == 2000 and table["pretrain_num_epochs"] == 300 and len(table["datasets"]) == 8
