// ChainTree: one uwfq user's unfinished jobs in its own fair-queuing system (see
// virtual_fair_queue.hpp), ordered by ChainKey, with the running sum of their work. A job's
// deadline on the user's chain is the chain's base plus the work of every job up to and including
// it, so a job that overtakes others moves all later deadlines at once: keeping the sums in the
// tree makes that O(log k) instead of re-chaining the k jobs after it.
//
// A treap over a node pool (indices, a free list): insert, erase, prefix_work and pop_front are
// O(log k) expected, and nothing is allocated per operation once the pool has grown to the
// largest chain seen. Priorities come from a fixed-seed generator, so the shape (and therefore
// the rounding of the sums) is the same on every run. Subtree sums are recomputed from the
// children on every change, so no rounding accumulates over time.
//
// Written by hand: the standard containers have no prefix sums, and libstdc++'s pb_ds tree with
// a node-update policy could carry them but allocates per node.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace chorus {

struct ChainKey {
  double ud;  // user-virtual deadline: U at arrival + R_j / w_j (grows with the job)
  std::uint64_t seq;
  std::uint32_t job;
  bool operator<(const ChainKey& o) const { return ud != o.ud ? ud < o.ud : seq < o.seq; }
  bool operator==(const ChainKey& o) const { return ud == o.ud && seq == o.seq; }
};

class ChainTree {
 public:
  bool empty() const { return root_ == kNil; }
  std::size_t size() const { return size_; }

  // `key` must not be in the tree (keys are unique by seq).
  void insert(const ChainKey& key, double work);
  // `key` must be in the tree.
  void erase(const ChainKey& key);
  // The smallest key; the tree must not be empty. O(1).
  const ChainKey& front() const { return nodes_[front_].key; }
  void pop_front() { erase(front()); }
  // Σ work of the entries whose key is <= `key` (present or not). O(1) for the front (the usual
  // question: a user's best queued job is mostly its chain's first).
  double prefix_work(const ChainKey& key) const;
  double total_work() const { return sum(root_); }
  void clear();

  // Calls f(key, work) for every entry in key order.
  template <typename F>
  void for_each(F f) const {
    // Iterative in-order walk: the stack is the pool-sized scratch vector (no recursion depth).
    stack_.clear();
    std::uint32_t t = root_;
    while (t != kNil || !stack_.empty()) {
      while (t != kNil) {
        stack_.push_back(t);
        t = nodes_[t].left;
      }
      t = stack_.back();
      stack_.pop_back();
      f(nodes_[t].key, nodes_[t].work);
      t = nodes_[t].right;
    }
  }

 private:
  static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
  struct Node {
    ChainKey key;
    double work;
    double sum;  // work of this node and its subtree
    std::uint32_t prio;
    std::uint32_t left;
    std::uint32_t right;
  };
  double sum(std::uint32_t t) const { return t == kNil ? 0.0 : nodes_[t].sum; }
  void update(std::uint32_t t) {
    Node& n = nodes_[t];
    n.sum = sum(n.left) + n.work + sum(n.right);
  }
  std::uint32_t next_prio();
  // Splits `t` into the keys < key (into `lo`) and the keys >= key (into `hi`).
  void split(std::uint32_t t, const ChainKey& key, std::uint32_t& lo, std::uint32_t& hi);
  std::uint32_t merge(std::uint32_t a, std::uint32_t b);
  std::uint32_t insert_at(std::uint32_t t, std::uint32_t node);
  std::uint32_t erase_at(std::uint32_t t, const ChainKey& key);
  std::uint32_t leftmost() const;

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;
  mutable std::vector<std::uint32_t> stack_;
  std::uint32_t root_ = kNil;
  std::uint32_t front_ = kNil;  // the leftmost node
  std::size_t size_ = 0;
  std::uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace chorus
