#!/usr/bin/env bash
# Code lines (neither blank nor comment) and non-whitespace characters outside comments of the
# reconstructed programs and of today's versions (the table in README.md).
set -euo pipefail
cd "$(dirname "$0")"
lines() { grep -v '^\s*$' "$1" | grep -cv '^\s*//'; }
chars() { grep -v '^\s*//' "$1" | tr -d ' \n\t' | wc -c; }
row() { echo "$1: before $(lines "$2") lines, $(chars "$2") chars; today $(lines "$3") lines, $(chars "$3") chars"; }
row "MLP fit" mlp_fit.rs ../out-of-tree/src/fit.rs
row "Lotka-Volterra" lotka_volterra.rs ../src/rust_api/lotka_volterra.rs
row "CG" cg_spd.rs ../src/rust_api/cg_spd.rs
