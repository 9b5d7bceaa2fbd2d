#pragma once
// Lab 02's earlier versions, kept beside the reference (matmul.cpp, v5) so that the bench can show
// what each step of the handout buys. Each is correct for every shape (versions_test.cpp); they
// differ only in speed. Same interface and argument checks as lab02::matmul.
#include "matmul.hpp"

#include <span>

namespace lab02::versions {

// v1: the definition, i-j-k: the innermost loop walks down a column of B.
void matmul_v1_naive(std::span<const float> a, std::span<const float> b, std::span<float> c,
                     const MatmulShape& s);
// v2: the same loops in i-k-j order: the innermost loop runs along rows of B and C, and vectorises.
void matmul_v2_ikj(std::span<const float> a, std::span<const float> b, std::span<float> c,
                   const MatmulShape& s);
// The seed workbook's blocking: six loops, 32 x 32 x 32 blocks, i-j-k inside each block. Slower
// than v2 at every size we tried; the handout explains why.
void matmul_seed_blocked(std::span<const float> a, std::span<const float> b, std::span<float> c,
                         const MatmulShape& s);
// v3: v2 with blocks of k and j sized so that a block of B stays in the L2 while every row of A
// passes over it.
void matmul_v3_blocked(std::span<const float> a, std::span<const float> b, std::span<float> c,
                       const MatmulShape& s);
// v4: v3's blocks, and inside them kMR x kNR tiles of C held in registers by the micro-kernel,
// which reads A and B where they lie; the leftover rows and columns go through v3's loop.
void matmul_v4_register_blocked(std::span<const float> a, std::span<const float> b,
                                std::span<float> c, const MatmulShape& s);

}  // namespace lab02::versions
