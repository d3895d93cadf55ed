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
cargo build --release -p quabla-cuda -p quabla-conformance -p quabla-cpu \
  -p quabla-examples --bin pinn_poisson >>"$OUT/build.log" 2>&1 || { log "build failed"; tail -30 "$OUT/build.log"; exit 1; }
log "conformance on the CUDA plugin:"
timeout 400 target/release/quabla-conformance --plugin target/release/libquabla_cuda.so \
  >"$OUT/conformance.txt" 2>&1
log "$(grep -E 'passed|coverage' "$OUT/conformance.txt")"
grep '^FAIL' "$OUT/conformance.txt" | head -40 | tee -a "$OUT/summary.txt"
log "PINN main job on cuda (300 steps):"
QUABLA_PLUGIN_PATH=target/release timeout 200 target/release/pinn_poisson --device cuda --steps 300 \
  >"$OUT/pinn.txt" 2>&1
tail -4 "$OUT/pinn.txt" | tee -a "$OUT/summary.txt"
