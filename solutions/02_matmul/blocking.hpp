#pragma once
// The cache blocks of lab 02's reference (v5), chosen at run time from the caches of the machine it
// runs on. matmul.cpp explains each rule; the handout (section 7) shows what they give on two CPUs.
#include "matmul.hpp"

#include <workbook/machine.hpp>

#include <cstddef>
#include <span>

namespace lab02 {

/// The depth kc of a block, the rows mc of a block of A, the columns nc of a block of B. mc is a
/// multiple of the micro-tile's rows and nc of its columns, so only a matrix's last block has
/// partial tiles.
struct Blocks {
  std::size_t kc = 0, mc = 0, nc = 0;
};

/// The blocks for caches of these sizes, the L3 shared by `cores` cores. An L2 or L3 of 0 (the OS
/// reported nothing) counts as a small one: 256 KiB of L2, 1 MiB of L3 per core.
Blocks blocks_for(const workbook::CacheSizes& caches, unsigned cores);

/// The blocks for this machine: blocks_for(workbook::cache_sizes(), its logical CPUs), read once.
const Blocks& this_machines_blocks();

/// lab02::matmul with the given blocks (matmul passes this machine's): the tests use small ones to
/// walk every path of the blocked loops on small matrices, whatever the caches of the machine. Any
/// blocks of at least 1 give the right product (std::invalid_argument for a 0); with mc a
/// multiple of the tile's rows and nc of its columns, only a matrix's last block has partial tiles.
void matmul_in_blocks(std::span<const float> a, std::span<const float> b, std::span<float> c,
                      const MatmulShape& shape, const Blocks& blocks);

}  // namespace lab02
