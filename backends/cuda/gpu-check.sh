#!/usr/bin/env bash
# The CUDA plugin's check on a lent GPU. The device machine has no Rust toolchain and no
# network, so `backends/cuda/gpu-pack.sh` builds everything here first, into `.gpu/` (ignored
# by git, carried by the `device` tool); this script, run there from the repository root,
# prints the driver, NVRTC and JAX versions, then runs the conformance suite on the CUDA
# plugin, the download-event check, the PINN main job with --device cuda, and the
# accelerator bench rows beside JAX on the same GPU. Everything lands under $OUT; each step has its own time limit so that one
# hang still leaves the others' results.
#
#   device run: bash backends/cuda/gpu-check.sh        (carry: [".gpu"])
# Knobs: DTYPES ("f32 f64"), PINN_STEPS (2000; 0 skips the PINN steps), KERNEL_DOTS=0 skips
# the second conformance run without cuBLAS, BENCH_ROWS (a substring of the rows' names in
# both suites, `|` between alternatives: "cholesky" runs that row alone), NO_GRAPH_ROWS
# (rows run again, f32, with QUABLA_CUDA_GRAPHS=0), ONE_BLOCK_ROWS (rows run again, f32,
# with each QUABLA_CUDA_ONE_BLOCK bound of ONE_BLOCK_SETTINGS, "0 4096" unless set),
# HOST_LOOPS=0 skips the conformance run with loops decided on the host, SOLVER_FACTORS=0 the
# factorization cases on cuSOLVER alone, HOST_LOOP_ROWS (rows run again, f32, with
# QUABLA_CUDA_DEVICE_LOOPS=0; "scan|neural_ode" unless set, "" none), WINDOW_ROWS (rows run
# again, f32, with QUABLA_CUDA_WINDOWS=0; "scan_trajectory" unless set, "" none),
# QUABLA_BENCH_S / JAX_BENCH_S bound each bench.
set -u
OUT=${OUT:-out/gpu-check}
PACK=${PACK:-.gpu}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "date: $(date -u)"
log "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -3)"
log "python: $(python3 --version 2>&1); jax: $(python3 -c 'import jax; print(jax.__version__, jax.devices())' 2>&1 | tail -1)"
# NVRTC: the image's own (CUDA toolkit or the nvidia-cuda-nvrtc wheel); the plugin is told.
NVRTC=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets /opt /usr/lib -name 'libnvrtc.so.13' 2>/dev/null | head -1)
export QUABLA_NVRTC_DIR=$(dirname "${NVRTC:-/none/x}")
export QUABLA_CUDA_CACHE=$PACK/cubins
# cuBLAS from the same toolkit folder (cudarc opens libcublas.so.13 by name).
export LD_LIBRARY_PATH=$QUABLA_NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# cuSOLVER (the factorizations): the toolkit's, else a pip wheel's (nvidia-cusolver).
CUSOLVER=$(find "$QUABLA_NVRTC_DIR" /usr/local/cuda*/lib64 /usr/local/lib/python3*/ /usr/lib/python3*/ /opt \
  -name 'libcusolver.so.*' 2>/dev/null | grep -v cusolverMg | head -1)
[ -n "$CUSOLVER" ] && export LD_LIBRARY_PATH=$(dirname "$CUSOLVER"):$LD_LIBRARY_PATH
log "cuSOLVER: ${CUSOLVER:-not found}"
export QUABLA_BENCH_ROWS=${BENCH_ROWS:-}
log "NVRTC: ${NVRTC:-not found} ($(ls "$QUABLA_NVRTC_DIR" 2>/dev/null | grep -c nvrtc) files); cuBLAS: $(ls "$QUABLA_NVRTC_DIR" 2>/dev/null | grep '^libcublas.so' | tr '\n' ' '); packed: $(ls "$PACK" | tr '\n' ' ')"
log "prewarm: $(timeout 40 "$PACK/prewarm_cubins" --sm 90 --cases tests/conformance/cases 2>&1 | tail -3)"

log "conformance on the CUDA plugin:"
timeout 120 "$PACK/quabla-conformance" --plugin "$PACK/libquabla_cuda.so" \
  --cases tests/conformance/cases >"$OUT/conformance.txt" 2>&1
log "exit $? after $(grep -c . "$OUT/conformance.txt") lines: $(grep -E ' passed|coverage' "$OUT/conformance.txt" | tail -3)"
grep -E '^FAIL|panicked|error' "$OUT/conformance.txt" | head -25 | tee -a "$OUT/summary.txt"
log "again with every kernels-only program captured as a CUDA graph at its first run (QUABLA_CUDA_GRAPHS=always):"
QUABLA_CUDA_GRAPHS=always timeout 120 "$PACK/quabla-conformance" --plugin "$PACK/libquabla_cuda.so" \
  --cases tests/conformance/cases >"$OUT/conformance_graphs.txt" 2>&1
log "exit $?: $(grep -E ' passed' "$OUT/conformance_graphs.txt" | tail -1); fallbacks: $(grep -c 'launch by launch' "$OUT/conformance_graphs.txt")"
grep -E '^FAIL|panicked|launch by launch' "$OUT/conformance_graphs.txt" | sort | uniq -c | head -10 | tee -a "$OUT/summary.txt"
if [ "${HOST_LOOPS:-1}" = 1 ]; then
  log "again with every loop decided on the host (QUABLA_CUDA_DEVICE_LOOPS=0):"
  QUABLA_CUDA_DEVICE_LOOPS=0 timeout 120 "$PACK/quabla-conformance" --plugin "$PACK/libquabla_cuda.so" \
    --cases tests/conformance/cases >"$OUT/conformance_host_loops.txt" 2>&1
  log "exit $?: $(grep -E ' passed' "$OUT/conformance_host_loops.txt" | tail -1)"
  grep -E '^FAIL|panicked|error' "$OUT/conformance_host_loops.txt" | head -10 | tee -a "$OUT/summary.txt"
fi
if [ "${SOLVER_FACTORS:-1}" = 1 ]; then
  # The suite's matrices are small, so its first runs factor them with the plugin's own
  # kernels (kernels/factor.rs, factor/orthogonal.rs); this one puts every factorization
  # on cuSOLVER.
  log "the factorization cases again on cuSOLVER alone (QUABLA_CUDA_FACTOR_ORDER=0):"
  # Globs over the cases' full names (`ops/linalg/lu/f32_square`, ...).
  for glob in 'ops/linalg/cholesky/*' 'ops/linalg/lu/*' 'ops/linalg/triangular_solve/*' \
    'ops/linalg/eigh/*' 'ops/linalg/qr/*' 'ops/linalg/svd/*' '*rosenbrock*'; do
    QUABLA_CUDA_FACTOR_ORDER=0 timeout 60 "$PACK/quabla-conformance" --plugin "$PACK/libquabla_cuda.so" \
      --cases tests/conformance/cases --filter "$glob" >>"$OUT/conformance_cusolver.txt" 2>&1
    log "$glob: exit $?: $(grep -E ' passed' "$OUT/conformance_cusolver.txt" | tail -1)"
  done
  grep -E '^FAIL|panicked|error' "$OUT/conformance_cusolver.txt" | head -10 | tee -a "$OUT/summary.txt"
fi
if [ "${KERNEL_DOTS:-1}" = 1 ]; then
  log "again with the plugin's own matrix-product kernels (QUABLA_CUDA_CUBLAS=0):"
  QUABLA_CUDA_CUBLAS=0 timeout 120 "$PACK/quabla-conformance" --plugin "$PACK/libquabla_cuda.so" \
    --cases tests/conformance/cases >"$OUT/conformance_kernels.txt" 2>&1
  log "exit $?: $(grep -E ' passed' "$OUT/conformance_kernels.txt" | tail -1)"
  grep -E '^FAIL|panicked|error' "$OUT/conformance_kernels.txt" | head -10 | tee -a "$OUT/summary.txt"
fi

log "downloads as CUDA events (pinned staging, is_ready, on_ready; every size class, f32/f64/i32/bool):"
QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout 60 "$PACK/download_events" --device cuda --rounds 20 \
  >"$OUT/download_events.txt" 2>&1
log "exit $?: $(tail -2 "$OUT/download_events.txt")"

if [ "${PINN_STEPS:-2000}" != 0 ]; then
log "PINN main job on cuda (${PINN_STEPS:-2000} steps):"
QUABLA_PLUGIN_PATH=$PACK timeout 90 "$PACK/pinn_poisson" --device cuda --steps "${PINN_STEPS:-2000}" \
  >"$OUT/pinn.txt" 2>&1
log "exit $?"
tail -4 "$OUT/pinn.txt" | tee -a "$OUT/summary.txt"

log "run to run: two 300-step trainings, their printed losses compared:"
for k in 1 2; do
  QUABLA_PLUGIN_PATH=$PACK timeout 30 "$PACK/pinn_poisson" --device cuda --steps 300 2>&1 |
    grep -o 'loss [-+.e0-9]*' >"$OUT/rerun$k.txt"
done
if cmp -s "$OUT/rerun1.txt" "$OUT/rerun2.txt" && [ -s "$OUT/rerun1.txt" ]; then
  log "identical: $(tr '\n' ' ' <"$OUT/rerun1.txt")"
else
  log "DIFFERENT: $(tr '\n' ' ' <"$OUT/rerun1.txt") / $(tr '\n' ' ' <"$OUT/rerun2.txt")"
fi
rm -f "$OUT/rerun1.txt" "$OUT/rerun2.txt"
fi

for dtype in ${DTYPES:-f32 f64}; do
  log "bench rows, $dtype (Quabla on the CUDA plugin, then JAX on the same GPU):"
  QUABLA_PLATFORMS=cuda QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout "${QUABLA_BENCH_S:-75}" \
    "$PACK/bench_suite" --only gpu --dtype "$dtype" >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
  log "quabla exit $?"
  (cd benches && PYTHONUNBUFFERED=1 timeout "${JAX_BENCH_S:-90}" python3 jax_suite.py --only gpu \
    --platform gpu --dtype "$dtype") >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
  log "jax exit $?"
done
if [ -n "${NO_GRAPH_ROWS:-}" ]; then
  log "rows matching '$NO_GRAPH_ROWS' again without CUDA graphs (QUABLA_CUDA_GRAPHS=0), f32:"
  QUABLA_CUDA_GRAPHS=0 QUABLA_BENCH_ROWS=$NO_GRAPH_ROWS QUABLA_PLATFORMS=cuda \
    QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout "${QUABLA_BENCH_S:-75}" \
    "$PACK/bench_suite" --only gpu --dtype f32 | sed 's/"quabla"/"quabla_no_graphs"/' \
    >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
fi
if [ -n "${ONE_BLOCK_ROWS:-}" ]; then
  for nb in ${ONE_BLOCK_SETTINGS:-0 4096}; do
    log "rows matching '$ONE_BLOCK_ROWS' again with QUABLA_CUDA_ONE_BLOCK=$nb, f32:"
    QUABLA_CUDA_ONE_BLOCK=$nb QUABLA_BENCH_ROWS=$ONE_BLOCK_ROWS QUABLA_PLATFORMS=cuda \
      QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout "${QUABLA_BENCH_S:-75}" \
      "$PACK/bench_suite" --only gpu --dtype f32 | sed "s/\"quabla\"/\"quabla_one_block$nb\"/" \
      >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
  done
fi
HOST_LOOP_ROWS=${HOST_LOOP_ROWS-scan|neural_ode}
if [ -n "$HOST_LOOP_ROWS" ]; then
  log "rows matching '$HOST_LOOP_ROWS' again with loops decided on the host (QUABLA_CUDA_DEVICE_LOOPS=0), f32:"
  QUABLA_CUDA_DEVICE_LOOPS=0 QUABLA_BENCH_ROWS=$HOST_LOOP_ROWS QUABLA_PLATFORMS=cuda \
    QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout "${QUABLA_BENCH_S:-75}" \
    "$PACK/bench_suite" --only gpu --dtype f32 | sed 's/"quabla"/"quabla_host_loops"/' \
    >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
fi
WINDOW_ROWS=${WINDOW_ROWS-scan_trajectory}
if [ -n "$WINDOW_ROWS" ]; then
  log "rows matching '$WINDOW_ROWS' again with a scan's ys written whole each step (QUABLA_CUDA_WINDOWS=0), f32:"
  QUABLA_CUDA_WINDOWS=0 QUABLA_BENCH_ROWS=$WINDOW_ROWS QUABLA_PLATFORMS=cuda \
    QUABLA_PLUGIN_PATH=$PACK/libquabla_cuda.so timeout "${QUABLA_BENCH_S:-75}" \
    "$PACK/bench_suite" --only gpu --dtype f32 | sed 's/"quabla"/"quabla_whole_carries"/' \
    >>"$OUT/bench.jsonl" 2>>"$OUT/bench_err.txt"
fi
cat "$OUT/bench.jsonl" | tee -a "$OUT/summary.txt"
tail -5 "$OUT/bench_err.txt" | tee -a "$OUT/summary.txt"
log "done: $(date -u)"
