#include "kernels/blocking.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace attntrace {

namespace {

std::size_t ways_of(const CacheLevel& c) { return c.ways ? c.ways : kAssumedWays; }

// (W-1)/W of the cache, in elements of elem_bytes, rounded down. Integers
// throughout: 11/12 of 48 KiB is 11264 floats exactly, which a double
// computation can land just under (and round a kc of 512 down to 504).
std::size_t usable_elems(const CacheLevel& c, std::size_t elem_bytes) {
    const std::size_t w = ways_of(c);
    return c.bytes * (w - 1) / (w * elem_bytes);
}

std::size_t round_down(std::size_t x, std::size_t multiple) { return x - x % multiple; }

}  // namespace

bool gemm_blocking_valid(const simd::GemmBlocking& b, simd::GemmTile tile) {
    return b.kc >= 8 && b.kc % 8 == 0 && b.mc >= tile.mr && b.mc % tile.mr == 0 && tile.mr % 2 == 0 &&
           b.nc >= tile.nr && b.nc % tile.nr == 0 && b.mc * b.kc + b.kc * b.nc <= simd::kGemmWorkspaceFloats;
}

simd::GemmBlocking derive_gemm_blocking(const CacheInfo& caches, simd::GemmTile tile, std::size_t elem_bytes) {
    const simd::GemmBlocking fallback = simd::kGemmMeasured;
    if (caches.l1d.bytes == 0 || caches.l2.bytes == 0 || elem_bytes == 0 || tile.mr == 0 || tile.nr == 0)
        return fallback;
    const std::size_t MR = tile.mr, NR = tile.nr;
    simd::GemmBlocking b;
    // L1: the A micro-panel (MR x kc) in all its ways but two (a 2-way or direct-mapped L1: half, none).
    //   MR·kc <= (W1-2)/W1 · L1
    const std::size_t w1 = ways_of(caches.l1d), kept = w1 > 2 ? w1 - 2 : w1 / 2;
    b.kc = round_down(caches.l1d.bytes * kept / (w1 * elem_bytes) / MR, 8);
    if (b.kc == 0) return fallback;  // an L1 smaller than 8 k steps of the tile: not a machine we know
    const std::size_t kc = b.kc;
    // L2: the B block (kc x nc), one A micro-panel (MR x kc) and its C rows (MR x nc) streaming past.
    //   kc·nc + MR·kc + MR·nc <= (W2-1)/W2 · L2   =>   nc <= ((W2-1)/W2 · L2 - MR·kc) / (kc + MR)
    const std::size_t l2 = usable_elems(caches.l2, elem_bytes);
    b.nc = l2 > MR * kc ? round_down((l2 - MR * kc) / (kc + MR), NR) : 0;
    if (b.nc == 0) b.nc = NR;  // an L2 that holds less than one B micro-panel: the smallest block
    const std::size_t nc = b.nc;
    // L3 (this core's share): the A block (mc x kc), one B block (kc x nc) and the C block (mc x nc).
    //   mc·kc + kc·nc + mc·nc <= (W3-1)/W3 · L3/p   =>   mc <= ((W3-1)/W3 · L3/p - kc·nc) / (kc + nc)
    if (caches.l3.bytes) {
        CacheLevel share = caches.l3;
        share.bytes /= std::max<std::size_t>(1, caches.l3.sharing);
        const std::size_t l3 = usable_elems(share, elem_bytes);
        b.mc = l3 > kc * nc ? round_down((l3 - kc * nc) / (kc + nc), MR) : 0;
    } else {
        b.mc = round_down(fallback.mc, MR);
    }
    // Both packed blocks within the scratch the plan counts: mc first, then nc.
    const std::size_t cap = simd::kGemmWorkspaceFloats;
    if (b.kc * b.nc + b.kc * tile.mr > cap) b.nc = std::max(tile.nr, (cap / b.kc - tile.mr) / tile.nr * tile.nr);
    if (b.kc * (b.nc + tile.mr) > cap) return fallback;  // a kc so large that one panel of each overflows
    const std::size_t mc_cap = (cap - b.kc * b.nc) / b.kc;
    b.mc = std::min(b.mc, mc_cap - mc_cap % tile.mr);
    if (b.mc < tile.mr) b.mc = tile.mr;
    return gemm_blocking_valid(b, tile) ? b : fallback;
}

namespace {

std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    if (in) std::getline(in, s);
    return s;
}

// "32K", "1024K", "32M" -> bytes; 0 when it is not such a size.
std::size_t parse_size(const std::string& s) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str()) return 0;
    if (*end == 'K') return static_cast<std::size_t>(n) << 10;
    if (*end == 'M') return static_cast<std::size_t>(n) << 20;
    if (*end == 'G') return static_cast<std::size_t>(n) << 30;
    return *end == '\0' ? static_cast<std::size_t>(n) : 0;
}

// "0-1,4,6-7" -> 5 (CPUs in a list); 1 when it cannot be read.
std::size_t count_cpus(const std::string& list) {
    std::size_t count = 0;
    const char* p = list.c_str();
    while (*p) {
        char* end = nullptr;
        const unsigned long a = std::strtoul(p, &end, 10);
        if (end == p) break;
        unsigned long b = a;
        p = end;
        if (*p == '-') {
            b = std::strtoul(p + 1, &end, 10);
            if (end == p + 1 || b < a) break;
            p = end;
        }
        count += b - a + 1;
        if (*p == ',') ++p;
    }
    return count ? count : 1;
}

CacheInfo from_sysfs() {
    CacheInfo info;
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index";
    for (int i = 0; i < 16; ++i) {
        const std::string d = dir + std::to_string(i) + "/";
        const std::string level = read_line(d + "level"), type = read_line(d + "type");
        if (level.empty()) break;
        if (type != "Data" && type != "Unified") continue;
        CacheLevel c;
        c.bytes = parse_size(read_line(d + "size"));
        c.ways = static_cast<std::size_t>(std::strtoul(read_line(d + "ways_of_associativity").c_str(), nullptr, 10));
        c.sharing = count_cpus(read_line(d + "shared_cpu_list"));
        if (level == "1") info.l1d = c;
        else if (level == "2") info.l2 = c;
        else if (level == "3") info.l3 = c;
    }
    if (info.l1d.bytes && info.l2.bytes) info.source = "sysfs";
    return info;
}

std::size_t sysconf_size(int name) {
    const long v = sysconf(name);
    return v > 0 ? static_cast<std::size_t>(v) : 0;
}

}  // namespace

CacheInfo read_cache_info() {
    CacheInfo info = from_sysfs();
    if (!info.source.empty()) return info;
    info = CacheInfo{};
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    info.l1d = {sysconf_size(_SC_LEVEL1_DCACHE_SIZE), sysconf_size(_SC_LEVEL1_DCACHE_ASSOC), 1};
    info.l2 = {sysconf_size(_SC_LEVEL2_CACHE_SIZE), sysconf_size(_SC_LEVEL2_CACHE_ASSOC), 1};
    // L3: sysconf gives no sharing (and on some AMD parts its size is not one
    // core's: 320 MiB on a 32 MiB part here), so it is left unknown.
#endif
    if (info.l1d.bytes && info.l2.bytes) info.source = "sysconf";
    else info = CacheInfo{};
    return info;
}

std::string describe_cache(const CacheLevel& c) {
    if (c.bytes == 0) return "unknown";
    // Appends only: GCC 12 warns (-Wrestrict, a false positive) on "literal" + std::string here.
    std::string s;
    if (c.bytes % (1 << 20) == 0) s.append(std::to_string(c.bytes >> 20)).append(" MiB");
    else s.append(std::to_string(c.bytes >> 10)).append(" KiB");
    if (c.ways) s.append(" ").append(std::to_string(c.ways)).append("-way");
    else s.append(" (ways unknown: ").append(std::to_string(kAssumedWays)).append(" assumed)");
    if (c.sharing > 1) s.append(", shared by ").append(std::to_string(c.sharing)).append(" CPUs");
    return s;
}

std::string describe_blocking(const GemmBlockingInUse& b) {
    if (b.tile.mr == 0) return "none: the scalar kernels (matmul_ref) do not block";
    const auto& k = b.blocking;
    std::string s;
    s.append("kc ").append(std::to_string(k.kc)).append(", mc ").append(std::to_string(k.mc));
    s.append(", nc ").append(std::to_string(k.nc)).append(" (register tile ").append(std::to_string(b.tile.mr));
    s.append("x").append(std::to_string(b.tile.nr)).append(")");
    if (!b.derived)
        return s.append(", the measured fallback (Cascade Lake, tuning.hpp): the machine reports no L1d/L2 size");
    s.append(", derived (kernels/blocking.hpp) from ").append(b.caches.source);
    s.append(": L1d ").append(describe_cache(b.caches.l1d)).append(", L2 ").append(describe_cache(b.caches.l2));
    s.append(", L3 ").append(describe_cache(b.caches.l3));
    if (!b.caches.l3.bytes) s.append(" (mc the measured one)");
    return s;
}

}  // namespace attntrace
