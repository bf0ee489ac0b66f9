#!/usr/bin/env bash
# Print the path of a llama-cpp-python wheel built for a portable CPU baseline, building it first if this machine
# has none: the real-model tier's server (the `realmodel` extra). scripts/install.sh installs that file.
#
# Why: llama.cpp compiles for the build machine's exact CPU by default (GGML_NATIVE=ON, -march=native), and pip
# caches that wheel under the sdist's name, whatever CMAKE_ARGS said. A wheel built on a CPU with AVX-512 or AMX
# then crashes (SIGSEGV) on its first completion on a machine without them, and a native wheel in pip's cache is
# picked up silently. So the wheel is built once, with the flags below written out, into a folder of the project's
# own keyed by version, CPU level and a hash of the flags, and installed from that file, never from pip's cache.
#
# Levels (never -march=native):
#   x86-64-v3  SSE4.2, AVX, AVX2, FMA, F16C, BMI2 (every x86-64 server CPU since 2013); chosen where the CPU has them
#   x86-64-v2  SSE4.2 only; chosen on an older x86-64 CPU
#   generic    GGML_NATIVE=OFF alone, on any other architecture
# FACTCHECK_LLAMA_CPU_LEVEL picks one by name; FACTCHECK_WHEEL_DIR moves the folder (default ~/.cache/factcheck/wheels).
# Rebuild: delete the folder this prints the parent of (or run with FACTCHECK_LLAMA_REBUILD=1).
set -euo pipefail

version="0.3.36"
python="${PYTHON:-python3}"

cpu_has() {
  local flag
  for flag in "$@"; do
    grep -qw "$flag" /proc/cpuinfo 2>/dev/null || return 1
  done
}

level="${FACTCHECK_LLAMA_CPU_LEVEL:-}"
if [[ -z "$level" ]]; then
  if [[ "$(uname -m)" != "x86_64" ]]; then
    level="generic"
  elif cpu_has avx avx2 fma f16c bmi2 sse4_2; then
    level="x86-64-v3"
  else
    level="x86-64-v2"
  fi
fi

# Every instruction-set option is set explicitly: none is left to llama.cpp's defaults, which change between
# releases. Everything else (no GPU backend, OpenMP) stays at the package's defaults.
off_x86="-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF"
off_x86+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF"
case "$level" in
  x86-64-v3)
    cmake_args="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON $off_x86"
    ;;
  x86-64-v2)
    cmake_args="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF $off_x86"
    ;;
  generic)
    cmake_args="-DGGML_NATIVE=OFF"
    ;;
  *)
    echo "llama_wheel.sh: unknown FACTCHECK_LLAMA_CPU_LEVEL '$level' (x86-64-v3, x86-64-v2 or generic)" >&2
    exit 2
    ;;
esac

flags_hash="$(printf '%s' "$cmake_args" | sha256sum | cut -c1-12)"
root="${FACTCHECK_WHEEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/factcheck/wheels}"
folder="$root/llama-cpp-python-$version-$level-$flags_hash"

if [[ "${FACTCHECK_LLAMA_REBUILD:-0}" == "1" ]]; then
  rm -rf "$folder"
fi

wheel="$(ls "$folder"/llama_cpp_python-"$version"-*.whl 2>/dev/null | head -n 1 || true)"
if [[ -z "$wheel" ]]; then
  echo "Building llama-cpp-python $version for $level (once; several minutes on 2 cores) into $folder" >&2
  mkdir -p "$root"
  staging="$(mktemp -d "$root/.building-XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  # --no-cache-dir: neither read a wheel pip cached from another build nor cache this one under the sdist's name.
  CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-cache-dir \
    --no-binary llama-cpp-python -w "$staging" "llama-cpp-python==$version" >&2
  printf 'llama-cpp-python %s\nlevel %s\nCMAKE_ARGS %s\n' "$version" "$level" "$cmake_args" >"$staging/BUILD-INFO"
  rm -rf "$folder"
  mv "$staging" "$folder"
  trap - EXIT
  wheel="$(ls "$folder"/llama_cpp_python-"$version"-*.whl | head -n 1)"
fi
echo "$wheel"
