#pragma once
/// \file versions.hpp
/// \brief Lab 05's numbered versions of square, from the seed's kernel to the reference, kept side
/// by side so that the bench can show what each step buys, and the library baseline (all take
/// device pointers, asynchronous).

#include <cstddef>

namespace lab05::versions {

/// v1, the seed's kernel: 16 x 16 blocks over a rows x cols matrix, one element per thread.
void square_v1_seed_16x16(const float* x, float* y, std::size_t rows, std::size_t cols);
/// v2: a 1-D grid with one thread per element: a warp reads 128 contiguous bytes.
void square_v2_one_per_thread(const float* x, float* y, std::size_t n);
/// v3: a grid of one wave of blocks (as many as the GPU holds at once), each thread striding over
/// the array, 4 bytes at a time.
void square_v3_grid_stride(const float* x, float* y, std::size_t n);
/// v4: the grid-stride loop with float4 loads and stores, and the scalar head and tail.
/// `in_flight`: float4 loads issued per thread before its first store (1, 2, 4 or 8).
void square_v4_float4_grid_stride(const float* x, float* y, std::size_t n, int in_flight);
/// v5 (the reference, lab05::square): float4, a grid that covers the array once, `per_thread`
/// float4s per thread (1, 2 or 4) in blocks of `block` threads (128 or 256).
void square_v5_covering_grid(const float* x, float* y, std::size_t n, int per_thread,
                             int block = 256);

/// The library a CUDA C++ programmer would call instead: Thrust's transform (in the CUDA Toolkit)
/// with a squaring functor, without the synchronisation Thrust adds by default (par_nosync).
void square_thrust(const float* x, float* y, std::size_t n);

}  // namespace lab05::versions
