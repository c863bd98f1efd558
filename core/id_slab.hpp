// IdSlab<T>: values indexed by a dense id that only grows (push_back gives the next one), whose
// memory can be given back id by id. Values live in blocks of kBlock; release(id) resets the
// value to T{} (its own heap memory goes at once) and a full block whose every value has been
// released is freed whole. What a long-lived instance keeps of work that ended is then one
// pointer per kBlock ids, not a value per id.
//
// Contract: a reference stays valid until its id is released (blocks never move); an id must
// not be read after its release (its block may be gone: the caller keeps a flag of its own, as
// TaskRuntime::forgotten). release() of an id released before is a no-op.
//
// Not thread-safe. No allocation per value: one per kBlock ids.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace chorus {

template <class T, std::size_t kBlock = 256>
class IdSlab {
 public:
  std::size_t size() const { return size_; }

  void clear() {
    blocks_.clear();
    size_ = 0;
  }

  T& push_back(T value) {
    if (size_ % kBlock == 0) blocks_.push_back(std::make_unique<Block>());
    Block& b = *blocks_.back();
    T& slot = b.values[size_ % kBlock];
    slot = std::move(value);
    ++size_;
    return slot;
  }

  // Takes back the last push_back (an id handed out that was not used after all).
  void pop_back() {
    --size_;
    auto& block = blocks_.back();
    if (size_ % kBlock == 0) {
      blocks_.pop_back();
    } else if (block) {
      block->values[size_ % kBlock] = T{};
      block->released[size_ % kBlock] = false;
    }
  }

  T& operator[](std::size_t id) { return blocks_[id / kBlock]->values[id % kBlock]; }
  const T& operator[](std::size_t id) const { return blocks_[id / kBlock]->values[id % kBlock]; }

  void release(std::size_t id) {
    if (id >= size_) return;
    auto& block = blocks_[id / kBlock];
    if (!block) return;
    const std::size_t i = id % kBlock;
    if (block->released[i]) return;
    block->released[i] = true;
    block->values[i] = T{};
    if (++block->released_count == kBlock) block.reset();
  }

  // Whether `id` (< size()) may be read: not released.
  bool held(std::size_t id) const {
    const auto& block = blocks_[id / kBlock];
    return block && !block->released[id % kBlock];
  }

  // Blocks still held (for tests and memory figures).
  std::size_t blocks_held() const {
    std::size_t n = 0;
    for (const auto& b : blocks_) n += b != nullptr;
    return n;
  }

 private:
  struct Block {
    std::array<T, kBlock> values{};
    std::array<bool, kBlock> released{};
    std::size_t released_count = 0;
  };
  std::vector<std::unique_ptr<Block>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace chorus
