#!/usr/bin/env bash
# The CUDA plugin's check on a lent GPU (the `device` tool runs it from the repository root;
# results go under $OUT). Prints the driver, NVRTC and toolchain versions first, then builds,
# runs the conformance suite on the CUDA plugin and the PINN main job with --device cuda.
# Written without a GPU: never run yet.
set -u
OUT=${OUT:-out/gpu-check}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "date: $(date -u)"
log "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -3)"
log "cargo: $(cargo --version 2>&1)"
log "python: $(python3 --version 2>&1)"
# NVRTC from PyPI, as CI gets it (the machine may have no network: then QUABLA_NVRTC_DIR).
cargo xtask cuda >>"$OUT/build.log" 2>&1 || log "cargo xtask cuda failed (see build.log)"
# `--lib` too: with `--bin` alone cargo builds no library of the packages named.
cargo build --release -p quabla-cuda -p quabla-nccl -p quabla-conformance -p quabla-cpu \
  -p quabla-examples --lib --bins >>"$OUT/build.log" 2>&1 || { log "build failed"; tail -30 "$OUT/build.log"; exit 1; }
log "conformance on the CUDA plugin:"
timeout 400 target/release/quabla-conformance --plugin target/release/libquabla_cuda.so \
  >"$OUT/conformance.txt" 2>&1
log "$(grep -E 'passed|coverage' "$OUT/conformance.txt")"
grep '^FAIL' "$OUT/conformance.txt" | head -40 | tee -a "$OUT/summary.txt"
log "PINN main job on cuda (300 steps):"
QUABLA_PLUGIN_PATH=target/release timeout 200 target/release/pinn_poisson --device cuda --steps 300 \
  >"$OUT/pinn.txt" 2>&1
tail -4 "$OUT/pinn.txt" | tee -a "$OUT/summary.txt"
log "NCCL (world of one on GPU 0; the image carries nvidia-nccl-cu13):"
NCCL_DIR=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
log "nvidia-nccl: $(pip show nvidia-nccl-cu13 2>/dev/null | grep -i ^version), lib dir ${NCCL_DIR:-none}; mpi4py: $(python3 -c 'import mpi4py; print(mpi4py.__version__)' 2>&1 | tail -1)"
QUABLA_TEST_NCCL=1 QUABLA_NCCL_DIR="$NCCL_DIR" timeout 300 cargo test --release -p quabla \
  --test distributed nccl_world_of_one -- --nocapture >"$OUT/nccl.txt" 2>&1
tail -6 "$OUT/nccl.txt" | tee -a "$OUT/summary.txt"
