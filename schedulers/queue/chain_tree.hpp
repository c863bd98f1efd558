// ChainTree: one uwfq user's unfinished jobs in its own fair-queuing system (see
// virtual_fair_queue.hpp), ordered by ChainKey, with the running sum of their work. A job's
// deadline on the user's chain is the chain's base plus the work of every job up to and including
// it, so a job that overtakes others moves all later deadlines at once: keeping the sums in the
// tree makes that O(log k) instead of re-chaining the k jobs after it.
//
// Two parts, every key of the first below every key of the second:
// - a treap over a node pool (indices, a free list) with subtree sums: insert, erase and
//   prefix_work are O(log k) expected. Priorities come from a fixed-seed generator, so the shape
//   (and the rounding of the sums) is the same on every run; sums are recomputed from the
//   children on every change, so no rounding accumulates;
// - a sorted run (a vector with running sums) that takes the usual case in O(1) and one cache
//   line: a job whose key is above every other (a user's next job) is appended, the chain's first
//   job leaves from the run's head, and the last job growing leaves from its back. Anything else
//   that touches the run (a key landing inside it, an entry leaving from its middle) first moves
//   the run into the treap: each entry moves at most once, so that is O(log k) amortised.
// Nothing is allocated per operation once the vectors have grown to the largest chain seen.
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
  bool empty() const { return root_ == kNil && run_empty(); }
  std::size_t size() const { return size_ + (run_.size() - head_); }

  // `key` must not be in the tree (keys are unique by seq).
  void insert(const ChainKey& key, double work);
  // `key` must be in the tree.
  void erase(const ChainKey& key);
  // The smallest key; the tree must not be empty. O(1).
  const ChainKey& front() const { return root_ != kNil ? nodes_[front_].key : run_[head_].key; }
  void pop_front() {
    ChainKey k = front();  // a copy: erase may move the storage front() points into
    erase(k);
  }
  // Σ work of the entries whose key is <= `key` (present or not). O(1) for the front (the usual
  // question: a user's best queued job is mostly its chain's first).
  double prefix_work(const ChainKey& key) const;
  double total_work() const { return sum(root_) + run_work(); }
  void clear();

  // Calls f(key, work) for every entry in key order.
  template <typename F>
  void for_each(F f) const {
    walk(root_, f);
    for (std::size_t i = head_; i < run_.size(); ++i) f(run_[i].key, run_[i].work);
  }

 private:
  static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
  template <typename F>
  void walk(std::uint32_t t, F& f) const {  // recursion depth: the treap's, O(log k) expected
    if (t == kNil) return;
    walk(nodes_[t].left, f);
    f(nodes_[t].key, nodes_[t].work);
    walk(nodes_[t].right, f);
  }
  struct RunEntry {
    ChainKey key;
    double work;
    double cum;  // Σ work of run_[0..this]
  };
  bool run_empty() const { return head_ == run_.size(); }
  double run_before_head() const { return head_ == 0 ? 0.0 : run_[head_ - 1].cum; }
  double run_work() const { return run_empty() ? 0.0 : run_.back().cum - run_before_head(); }
  void run_append(const ChainKey& key, double work);
  void run_normalize();  // empties or compacts the run once its head has moved far enough
  void flush_run();      // moves the run's entries into the treap
  void tree_insert(const ChainKey& key, double work);
  void tree_erase(const ChainKey& key);
  double tree_prefix(const ChainKey& key) const;
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
  std::uint32_t rightmost() const;

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;
  std::uint32_t root_ = kNil;
  std::uint32_t front_ = kNil;  // the treap's leftmost node
  std::uint32_t back_ = kNil;   // the treap's rightmost node
  std::size_t size_ = 0;        // in the treap
  std::vector<RunEntry> run_;   // sorted; live from head_
  std::size_t head_ = 0;
  std::uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace chorus
