// The GEMM's cache blocking, derived from the caches the machine reports.
//
// The loops (simd/gemm_simd.hpp) are, from the outside in:
//   pc: K by kc  ->  ic: M by mc (pack the A block)  ->  jc: N by nc (pack the B block)
//   ->  ir: MR-row A micro-panels  ->  jr: NR-column B micro-panels  ->  micro-kernel
// The micro-kernel broadcasts A and loads B, so each level reuses one operand
// while the next one in streams past it:
//   L1: an A micro-panel (MR x kc), reused by every B micro-panel (kc x NR) of the jr loop;
//   L2: the B block (kc x nc), reused by every A micro-panel of the ir loop;
//   L3: the A block (mc x kc), reused by every B block of the jc loop.
// This is the analytical model of BLIS (Low et al., "Analytical modeling is
// enough for high-performance BLIS", 2016) applied to our loop order. BLIS
// keeps a B micro-panel in L1 and the A block in L2 because its innermost
// loop runs over A micro-panels; ours runs over B micro-panels (ir outside
// jr: measured faster here, see gemm_simd.hpp), so A and B exchange roles:
// at each level the operand kept is the one the loop inside it runs past.
//
// L2 and L3, for a cache of `bytes` in `ways` ways with LRU replacement:
// between two uses of a line of the kept operand, the loop touches the whole
// kept operand once and whatever streams past it once. Both are contiguous
// (packed), so they spread evenly over the sets; the kept line survives when,
// set by set, the two fit in all ways but one (that one left for stray lines):
//   nc: (kc·nc + MR·kc + MR·nc)·S       <= (W2-1)/W2 · L2   (one A micro-panel and its C rows stream past)
//   mc: (mc·kc + kc·nc + mc·nc)·S       <= (W3-1)/W3 · L3/p (one B block and the C block; p CPUs share L3)
// L1 keeps the A micro-panel in all its ways but two: one for the B
// micro-panel's lines streaming in from L2 (each read once, by one k step,
// then dead) and one for C's tile and the stack,
//   kc: MR·kc·S <= (W1-2)/W1 · L1.
// BLIS's own L1 rule also keeps the whole B micro-panel in L1 (under strict
// LRU its stream would otherwise push A out): kc·(MR+NR)·S <= (W1-1)/W1·L1.
// Measured on an AMD EPYC (Zen 4, 32 KiB 8-way L1d), one thread, best of 15
// by thread CPU time, blockings interleaved in one process (docs/performance.md):
// that rule's kc = 152 ran 512x768x3072 and 2048x768x3072 at 88.7 and 90.9
// GFLOP/s, half of L1 (Goto and van de Geijn's rule, kc = 288) at 94.9 and
// 97.2, this one (kc = 432) at 96.8 and 98.8, and the constants measured by
// hand (kc = 384) at 97.4 and 98.4.
// What a small kc costs here is C: read and written once per kc-slice of K,
// it makes ceil(768/kc) trips through memory (6, 3, 2, 2); the L2 feeds the
// micro-kernel fast enough that A need not stay in L1 between calls.
// Then each is rounded down: kc to a multiple of 8 (so that every packed
// panel starts 64-byte aligned: MR·kc·4 and mc·kc·4 bytes with MR and mc
// even), nc to a multiple of NR, mc to a multiple of MR; and the two packed
// blocks together stay within kGemmWorkspaceFloats (tuning.hpp), mc shrunk first.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/tuning.hpp"

namespace attntrace {

// One cache level as the machine reports it; 0 where it says nothing.
struct CacheLevel {
    std::size_t bytes = 0;
    std::size_t ways = 0;     // associativity (0: unknown, assumed kAssumedWays)
    std::size_t sharing = 1;  // logical CPUs sharing it (L3: the share of one core is bytes / sharing)
};
struct CacheInfo {
    CacheLevel l1d, l2, l3;
    std::string source;  // where the sizes came from: "sysfs", "sysconf" or "" (nothing reported)
};

// Associativity assumed when the machine gives sizes but no ways: 8, what the
// L2 and L3 of every x86 core of the last decade have had at least.
inline constexpr std::size_t kAssumedWays = 8;

// The blocking of the model above (pure: a function of its arguments alone).
// L1d or L2 unknown (0 bytes): the measured kGemmMeasured (tuning.hpp); L3
// unknown: mc from kGemmMeasured, still within the workspace.
simd::GemmBlocking derive_gemm_blocking(const CacheInfo& caches, simd::GemmTile tile, std::size_t elem_bytes);

// True when b is a blocking the GEMM can run with tile: kc a positive
// multiple of 8, mc of MR, nc of NR, both packed blocks within the workspace.
bool gemm_blocking_valid(const simd::GemmBlocking& b, simd::GemmTile tile);

// The caches of CPU 0 (taken to be every core's: the machines this runs on
// have cores of one kind): sysfs
// (/sys/devices/system/cpu/cpu0/cache/index*: level, type, size, ways, which
// CPUs share it), else sysconf's _SC_LEVEL1_DCACHE_SIZE and the like (sizes
// and ways, no sharing: L3 then left unknown). Read each time it is called.
CacheInfo read_cache_info();

// The blocking the GEMM runs with in this process, and why: derived once
// (gemm_blocking_in_use() in kernels.hpp) from read_cache_info() for the
// register tile of the kernels in use.
struct GemmBlockingInUse {
    simd::GemmBlocking blocking;
    simd::GemmTile tile;  // {0, 0} for the scalar kernels (matmul_ref: no blocking)
    CacheInfo caches;
    bool derived = false;  // false: kGemmMeasured, the machine said nothing
};
// One line for bench: "kc 152, mc 2478, nc 1344 (tile 14x32), derived from sysfs: L1d 32 KiB 8-way, ..."
std::string describe_blocking(const GemmBlockingInUse& b);

// "32 KiB 8-way", "1 MiB 8-way", "unknown"
std::string describe_cache(const CacheLevel& c);

}  // namespace attntrace
