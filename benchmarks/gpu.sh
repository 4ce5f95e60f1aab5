#!/bin/bash
# The checks that need a CUDA GPU, one after the other, each under a time limit: every trainer's CUDA path against
# its CPU path (tests/test_cuda.py and paper 2's test_cuda_equals_cpu), then the benchmarks on the GPU at the
# paper's scale, each leaving its record in results/benchmarks/ (`make gpu`). Records from a machine the project
# only borrows are copied into benchmarks/gpu/, where the Speed page shows them after the CPU's.
# Usage: benchmarks/gpu.sh [PYTHON]   (default .venv/bin/python; the offline image assets must be installed)
# Limits from the runs on an H100 (2026-11-27, commit 4a1fe6c): the tests took 56 s, Figure 7's chunks 86 s, Figure
# 5's grid 34 s (with the direct computation's samples), the image row 93 s (its small ViT pre-trained first).
# Figure 7's per-step cost is the difference of two calls: at --steps 10 it was unstable on the GPU, so 30.
py=${1:-.venv/bin/python}
step() {
    local limit=$1
    shift
    echo "== $* (limit ${limit} s)"
    timeout "$limit" "$py" "$@"
    echo "== exit $?"
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
step 120 -m pytest -q -p no:cacheprovider -rs tests/test_cuda.py tests/test_paper2.py -k cuda
step 45 benchmarks/fast_trainer.py --device cuda
step 100 benchmarks/fig5_grid.py --device cuda
step 150 benchmarks/fig7_paper.py --device cuda
step 60 benchmarks/paper2.py --device cuda --sweep
step 90 benchmarks/clock_long_runs.py --device cuda --steps 100000
step 60 benchmarks/encoder_batched.py --device cuda --steps 100 --n-test 1000 --estimate
step 240 benchmarks/finetune_cache.py --task image --device cuda --epochs 4 --threads 8
