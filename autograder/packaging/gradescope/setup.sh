#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image; the zip is unpacked in
# /autograder/source. Use a Debian 12 base image (the workbook needs GCC 12, xsimd 8.1, xtensor
# 0.24): Gradescope's "manual Docker configuration", or its Debian base when offered.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends cmake ninja-build g++ binutils googletest libgtest-dev \
  libxtensor-dev xtl-dev libxsimd-dev nlohmann-json3-dev libcli11-dev libarchive-dev \
  nettle-dev libcmark-gfm-dev libcmark-gfm-extensions-dev ca-certificates
cd /autograder/source
# The grader itself, built from the trusted tree (solutions and hidden tests included).
cmake -S . -B build/grader -G Ninja -DCMAKE_BUILD_TYPE=Release -DWORKBOOK_IMPL=solutions \
  -DWORKBOOK_AUTOGRADER=ON -DWORKBOOK_REGISTER_LAST_BUILD=OFF
cmake --build build/grader --target workbook-grade -j"$(nproc)"
# The trusted parts of every lab, built once; each submission then compiles only its own files.
build/grader/autograder/workbook-grade prepare --cache /autograder/grade-cache --jobs "$(nproc)"
build/grader/autograder/workbook-grade doctor || true
