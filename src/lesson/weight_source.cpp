// WeightSource: convert on first use, release by block.
#include "lesson/weight_source.hpp"

#include <algorithm>
#include <stdexcept>

namespace attntrace {

std::string weight_group(const std::string& name) {
    constexpr std::string_view kBlocks = "blocks.";
    if (name.rfind(kBlocks, 0) != 0) return "";
    const auto dot = name.find('.', kBlocks.size());
    return dot == std::string::npos ? "" : name.substr(0, dot + 1);
}

void WeightSource::add(const std::string& name, std::size_t floats, std::function<Tensor()> load) {
    entries_[name] = Entry{floats, std::move(load), std::nullopt};
}

void WeightSource::add(const std::string& name, std::size_t floats, std::function<Tensor()> load, StoredWeight stored) {
    entries_[name] = Entry{floats, std::move(load), std::move(stored)};
}

std::size_t WeightSource::held_size(const Entry& e) { return e.stored ? e.stored->bytes : e.floats * sizeof(float); }

const StoredMatrix* WeightSource::stored(const std::string& name) {
    auto e = entries_.find(name);
    if (e == entries_.end() || !e->second.stored || !in_place_on_ || held_.count(name)) return nullptr;
    StoredWeight& s = *e->second.stored;
    // held for a decode's tokens: as stored only when its GEMV reads it as it is (float32, (K, N))
    if (hold_all_ && (s.matrix.type != StoredType::f32 || s.matrix.transposed)) return nullptr;
    if (in_place_.emplace(name, s.bytes).second) {
        held_bytes_ += s.bytes;
        peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes_);
    }
    return &s.matrix;
}

void WeightSource::refuse_if_not_finite(const std::string& name) const {
    const Entry& e = entries_.at(name);
    if (!e.stored || !in_place_.count(name)) return;  // converted: checked then
    if (e.stored->check) e.stored->check();
    // a float32 weight's product reports any value of its output not finite, which finite weights may give too
    if (e.stored->matrix.type == StoredType::f32) return;
    throw std::logic_error("attntrace: weight " + name + " was found not finite by its product, but not by its check");
}

void WeightSource::release_stored(const std::function<bool(const std::string&)>& which) {
    for (auto it = in_place_.begin(); it != in_place_.end();) {
        if (!which(it->first)) {
            ++it;
            continue;
        }
        if (const StoredWeight& s = *entries_.at(it->first).stored; s.release) s.release();
        held_bytes_ -= it->second;
        it = in_place_.erase(it);
    }
}

const Tensor* WeightSource::get(const std::string& name) {
    if (auto h = held_.find(name); h != held_.end()) return &h->second;
    auto e = entries_.find(name);
    if (e == entries_.end()) return nullptr;
    Tensor t = e->second.load();
    if (t.size() != e->second.floats)
        throw std::logic_error("attntrace: weight " + name + " loaded with another size than its entry's");
    held_bytes_ += t.size() * sizeof(float);
    peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes_);
    ++loads_;
    return &held_.emplace(name, std::move(t)).first->second;
}

void WeightSource::keep_group(const std::string& prefix) {
    if (hold_all_) return;
    const std::string keep = weight_group(prefix);  // "blocks.3." and "blocks.3.cross." -> "blocks.3."
    if (keep.empty()) return;  // a pass of no block's (the embedding, a residual add): the block stays held
    release_stored([&](const std::string& name) { return weight_group(name) != keep; });
    for (auto it = held_.begin(); it != held_.end();) {
        if (weight_group(it->first) == keep) {
            ++it;
            continue;
        }
        held_bytes_ -= it->second.size() * sizeof(float);
        it = held_.erase(it);
    }
}

void WeightSource::release_blocks() {
    if (hold_all_) return;
    release_stored([](const std::string& name) { return !weight_group(name).empty(); });
    for (auto it = held_.begin(); it != held_.end();) {
        if (weight_group(it->first).empty()) {
            ++it;
            continue;
        }
        held_bytes_ -= it->second.size() * sizeof(float);
        it = held_.erase(it);
    }
}

void WeightSource::release_all() {
    if (hold_all_) return;
    release_stored([](const std::string&) { return true; });
    held_.clear();
    held_bytes_ = 0;
}

void WeightSource::hold_all(bool on) {
    hold_all_ = on;
    if (!on) release_all();
}

void WeightSource::put(const std::string& name, Tensor value) {
    if (!hold_all_) throw std::logic_error("attntrace: WeightSource::put outside hold_all");
    held_bytes_ += value.size() * sizeof(float);
    peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes_);
    held_[name] = std::move(value);
}

std::size_t WeightSource::total_bytes() const {
    std::size_t bytes = 0;
    for (const auto& [name, e] : entries_) bytes += e.floats * sizeof(float);
    return bytes;
}

std::size_t WeightSource::largest_group_bytes() const {
    std::map<std::string, std::size_t> groups;
    for (const auto& [name, e] : entries_) groups[weight_group(name)] += held_size(e);
    // ungrouped weights (a one-block model's) are held together, and beside any block's
    const std::size_t ungrouped = groups.count("") ? groups[""] : 0;
    std::size_t block = 0;
    for (const auto& [g, b] : groups)
        if (!g.empty()) block = std::max(block, b);
    return ungrouped + block;
}

}  // namespace attntrace
