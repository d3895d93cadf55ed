#!/usr/bin/env bash
# Builds what `gpu-check.sh` runs on a lent GPU into `.gpu/` (the device machine has no Rust
# toolchain): the CUDA plugin, the conformance runner, the PINN example, the bench suite, the
# download-event check and the cubin prewarmer, release builds, stripped; plus the
# conformance programs' cubins for sm_90 compiled here by NVRTC (`cargo xtask cuda` fetches
# it), so the GPU run loads kernels instead of compiling them (keyed by NVRTC's version: a
# different one there recompiles).
set -eu
cd "$(dirname "$0")/../.."
cargo build --release -p quabla-cuda -p quabla-conformance -p quabla-examples --lib --bins \
  --example prewarm_cubins
rm -rf .gpu && mkdir -p .gpu
for f in libquabla_cuda.so quabla-conformance pinn_poisson bench_suite download_events \
  examples/prewarm_cubins; do
  cp "target/release/$f" .gpu/
  strip ".gpu/$(basename "$f")"
done
QUABLA_CUDA_CACHE=.gpu/cubins .gpu/prewarm_cubins --sm 90 --cases tests/conformance/cases
du -sh .gpu
