"""Every trainer's CUDA path against its CPU path on the same runs: the same numbers to the rounding of the float type.

Skipped where torch sees no CUDA device (CI has none); run on a GPU machine with
`python -m pytest tests/test_cuda.py tests/test_paper2.py -k cuda`. float64 runs must agree to 1e-9 (the two devices
sum in different orders); float32 ones (the real-data path) to the tolerance its CPU tests already allow between
batchings. Paper 2's trainer has its own such test (`test_paper2.py::test_cuda_equals_cpu`).
"""

import numpy as np
import pytest
import torch

from benign import clock, data, device, encoder, sweep, synthetic

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
EXACT = dict(rtol=1e-9, atol=1e-12)  # float64 on two devices


def _both(make):
    return make("cpu"), make("cuda")


def test_the_fast_exact_trainer():
    runs = [data.make_run(60, mu, seed=s, n=12, n_test=200, noise_ratio=0.25, W_init=w, label=f"r{i}")
            for i, (mu, s, w) in enumerate([(3.0, 0, "kaiming"), (6.0, 1, "kaiming"), (4.0, 2, "kaiming")])]
    cpu, cuda = _both(lambda dev: synthetic.simulate(runs, learning_rate=0.05, num_steps=300, log_every=50,
                                                      dtype="float64", device=dev))
    for key in ("train_loss", "test_loss", "score_clean_relevant"):
        np.testing.assert_allclose(cuda.history[key].to_numpy(), cpu.history[key].to_numpy(), **EXACT)
    for q_gpu, q_cpu in zip(cuda.q, cpu.q):
        torch.testing.assert_close(q_gpu.cpu(), q_cpu.cpu(), **EXACT)
    assert cuda.final.test_acc.tolist() == cpu.final.test_acc.tolist()
    assert str(cuda.info["device"]).startswith("cuda")


def test_the_long_run_clock():
    points = sweep.grid(d=[50, 80], seed=[0, 1], signal_norm=[2.0, 5.0], noise_ratio=[0.0, 0.3], W_init="kaiming",
                        train_W=True, n=7, T=8, n_test=60, num_steps=400, learning_rate=0.8, dtype="float64",
                        history_points=25, delta=0.05, epsilon=0.6)
    cpu, cuda = _both(lambda dev: clock.grid_chunk([dict(p, device=dev) for p in points if p["d"] == 50]))
    for a, b in zip(cpu, cuda):
        assert {k: v for k, v in a.items() if k.endswith("_step")} == {k: v for k, v in b.items() if k.endswith("_step")}
        for key in ("train_loss", "test_loss", "score_clean_relevant"):
            np.testing.assert_allclose(b["history"][key], a["history"][key], **EXACT)


def test_the_encoder():
    runs = [data.make_run(40, mu, seed=3, n=10, n_test=100, noise_ratio=0.2, label=f"mu{mu}") for mu in (3.0, 8.0)]
    cpu, cuda = _both(lambda dev: encoder.simulate(runs, hidden=64, num_steps=60, log_every=20, dtype="float64",
                                                    device=dev))
    for key in ("train_loss", "test_loss", "train_acc"):
        np.testing.assert_allclose(cuda.history[key].dropna().to_numpy(), cpu.history[key].dropna().to_numpy(),
                                   **EXACT)
    np.testing.assert_allclose(cuda.scores.score.to_numpy(), cpu.scores.score.to_numpy(), **EXACT)
    for name, value in cpu.params.items():
        torch.testing.assert_close(cuda.params[name], value, **EXACT)


def test_grid_chunks_in_worker_processes_on_the_gpu():
    """A sweep whose points name the GPU: its chunks run in spawned workers that each open the device (on an H100,
    Figure 5's grid took 16.7 s so and more than 45 s chunk after chunk in one process), with the CPU's numbers."""
    points = sweep.grid(d=[50, 70], signal_norm=[3.0, 9.0], noise_ratio=[0.2], seed=0, n=10, T=8, n_test=100,
                        num_steps=200, learning_rate=0.05, dtype="float64")
    cpu, cuda = _both(lambda dev: sweep.run(synthetic.grid_chunk, [dict(p, device=dev) for p in points]))
    assert cuda.attrs["chunks"] == 2
    for key in ("train_loss", "test_loss", "test_acc"):
        np.testing.assert_allclose(cuda[key].to_numpy(), cpu[key].to_numpy(), **EXACT)
    grid = sweep.run(encoder.grid_chunk, [dict(p, device="cuda", hidden=32, num_steps=30) for p in points])
    again = sweep.run(encoder.grid_chunk, [dict(p, device="cpu", hidden=32, num_steps=30) for p in points])
    np.testing.assert_allclose(grid.test_loss.to_numpy(), again.test_loss.to_numpy(), **EXACT)


def test_the_runs_a_batch_holds_count_the_memory_torch_keeps_for_reuse():
    cuda = torch.device("cuda")
    assert device.runs_that_fit(2**50, cuda, 78) == 1  # more than it holds: one run at a time
    assert device.runs_that_fit(1, cuda, 78) == 78
    free = device.runs_that_fit(2**20, cuda, 10**9)
    held = torch.empty(2**30, dtype=torch.uint8, device=cuda)  # 1 GiB taken, then given back to torch's cache
    del held
    assert device.runs_that_fit(2**20, cuda, 10**9) >= free - 8  # what torch keeps for reuse still counts


# ------------------------------------------------------------------------------- the real-data path (float32)
@pytest.fixture(scope="module", params=["bert", "vit"])
def backbone_pair(request, tmp_path_factory):
    """A tiny random backbone (as tests/test_finetune.py makes them), loaded on the CPU and on the GPU, with inputs."""
    from transformers import BertConfig, BertModel, BertTokenizerFast, ViTConfig, ViTModel

    from benign.realdata import backbones, image_backbone

    folder = tmp_path_factory.mktemp(request.param)
    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    if request.param == "bert":
        words = "good bad film plot the a is very not and but dull fine".split()
        (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
        BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
        BertModel(BertConfig(vocab_size=5 + len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=64)).save_pretrained(folder)
        inputs = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(20)]
        classes = 2
    else:
        ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                           image_size=28, patch_size=7), add_pooling_layer=False).save_pretrained(folder)
        image_backbone.image_processor_for(28).save_pretrained(folder)
        inputs = rng.integers(0, 256, (20, 28, 28), dtype=np.uint8)
        classes = 3
    pair = {dev: backbones.Backbone(str(folder), classes, device=dev) for dev in ("cpu", "cuda")}
    return pair, inputs, rng.integers(0, classes, 20)


def test_fine_tuning_on_the_gpu(backbone_pair):
    """The frozen layers' cache, phase 1 (the head) and phase 2 (the last query and key) on the GPU against the CPU."""
    from benign.realdata import training

    pair, inputs, labels = backbone_pair
    schedule = training.Schedule(num_epochs=2000, max_epochs=3, max_grad_norm=1.0)
    got = {}
    for dev, bb in pair.items():
        enc = training.encode(bb, inputs)
        assert enc.z.device.type == dev
        y = torch.as_tensor(labels, device=bb.device)[None]
        head = training.phase1(bb, enc.z[None], y, [bb.seeded_head(42)], schedule, [42])
        fast = training.phase2(bb, enc, torch.arange(len(labels))[None], y, head.params, [bb.reset_qk(42)],
                               schedule, [42])
        got[dev] = (enc.z.cpu(), {k: v.cpu() for k, v in head.params.items()}, fast)
    (z_cpu, head_cpu, cpu), (z_gpu, head_gpu, gpu) = got["cpu"], got["cuda"]
    torch.testing.assert_close(z_gpu, z_cpu, rtol=1e-4, atol=1e-5)
    for k in head_cpu:
        torch.testing.assert_close(head_gpu[k], head_cpu[k], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gpu.epoch_loss[0], cpu.epoch_loss[0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gpu.epoch_max_attention[0], cpu.epoch_max_attention[0], rtol=1e-4, atol=1e-6)
    for k in ("Wq", "bq", "Wk"):
        torch.testing.assert_close(gpu.params[k][0].cpu(), cpu.params[k][0].cpu(), rtol=1e-4, atol=1e-6)
        assert not torch.equal(cpu.params[k][0].cpu(), pair["cpu"].reset_qk(42)[k])  # it trained
