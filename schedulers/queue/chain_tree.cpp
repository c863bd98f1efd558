#include "schedulers/queue/chain_tree.hpp"

#include <algorithm>

namespace chorus {

// splitmix64: cheap, and the same sequence everywhere.
std::uint32_t ChainTree::next_prio() {
  std::uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
}

void ChainTree::split(std::uint32_t t, const ChainKey& key, std::uint32_t& lo, std::uint32_t& hi) {
  if (t == kNil) {
    lo = hi = kNil;
    return;
  }
  if (nodes_[t].key < key) {
    split(nodes_[t].right, key, nodes_[t].right, hi);
    lo = t;
  } else {
    split(nodes_[t].left, key, lo, nodes_[t].left);
    hi = t;
  }
  update(t);
}

// Every key of `a` is below every key of `b`.
std::uint32_t ChainTree::merge(std::uint32_t a, std::uint32_t b) {
  if (a == kNil) return b;
  if (b == kNil) return a;
  if (nodes_[a].prio > nodes_[b].prio) {
    nodes_[a].right = merge(nodes_[a].right, b);
    update(a);
    return a;
  }
  nodes_[b].left = merge(a, nodes_[b].left);
  update(b);
  return b;
}

std::uint32_t ChainTree::insert_at(std::uint32_t t, std::uint32_t node) {
  if (t == kNil) return node;
  if (nodes_[node].prio > nodes_[t].prio) {
    split(t, nodes_[node].key, nodes_[node].left, nodes_[node].right);
    update(node);
    return node;
  }
  if (nodes_[node].key < nodes_[t].key) {
    nodes_[t].left = insert_at(nodes_[t].left, node);
  } else {
    nodes_[t].right = insert_at(nodes_[t].right, node);
  }
  update(t);
  return t;
}

std::uint32_t ChainTree::erase_at(std::uint32_t t, const ChainKey& key) {
  if (t == kNil) return kNil;  // not present: a caller's bug, but leave the tree intact
  if (nodes_[t].key == key) {
    std::uint32_t rest = merge(nodes_[t].left, nodes_[t].right);
    free_.push_back(t);
    --size_;
    return rest;
  }
  if (key < nodes_[t].key) {
    nodes_[t].left = erase_at(nodes_[t].left, key);
  } else {
    nodes_[t].right = erase_at(nodes_[t].right, key);
  }
  update(t);
  return t;
}

void ChainTree::insert(const ChainKey& key, double work) {
  if (!run_empty()) {
    if (run_.back().key < key) {
      run_append(key, work);  // the usual case: a user's next job
      return;
    }
    if (!(key < run_[head_].key)) flush_run();  // lands inside the run
    tree_insert(key, work);                     // below every run key (or the run is gone)
    return;
  }
  if (root_ == kNil || nodes_[back_].key < key) {
    run_append(key, work);
  } else {
    tree_insert(key, work);
  }
}

void ChainTree::erase(const ChainKey& key) {
  if (!run_empty() && !(key < run_[head_].key)) {
    if (run_.back().key == key) {
      run_.pop_back();  // the last job growing
    } else if (run_[head_].key == key && root_ == kNil) {
      ++head_;  // the chain's first job leaving
    } else {
      flush_run();
      tree_erase(key);
      return;
    }
    run_normalize();
    return;
  }
  tree_erase(key);
}

double ChainTree::prefix_work(const ChainKey& key) const {
  if (empty()) return 0;
  if (front() == key) {  // the usual question, answered exactly (departures rely on it)
    return root_ != kNil ? nodes_[front_].work : run_[head_].work;
  }
  if (run_empty() || key < run_[head_].key) return tree_prefix(key);
  // Every treap key is below `key`: all of the treap, and the run up to `key`.
  auto after = std::upper_bound(run_.begin() + static_cast<std::ptrdiff_t>(head_), run_.end(), key,
                                [](const ChainKey& k, const RunEntry& e) { return k < e.key; });
  return sum(root_) + ((after - 1)->cum - run_before_head());
}

void ChainTree::clear() {
  nodes_.clear();  // keeps the capacity
  free_.clear();
  root_ = front_ = back_ = kNil;
  size_ = 0;
  run_.clear();
  head_ = 0;
}

void ChainTree::run_append(const ChainKey& key, double work) {
  double before = run_empty() ? 0.0 : run_.back().cum;
  if (run_empty()) {
    run_.clear();
    head_ = 0;
  }
  run_.push_back(RunEntry{key, work, before + work});
}

void ChainTree::run_normalize() {
  if (run_empty()) {
    run_.clear();
    head_ = 0;
  } else if (head_ >= 1024 && 2 * head_ >= run_.size()) {
    // Drop the left part and restart the running sums from zero (their rounding with them).
    run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
    double cum = 0;
    for (RunEntry& e : run_) e.cum = (cum += e.work);
  }
}

void ChainTree::flush_run() {
  for (std::size_t i = head_; i < run_.size(); ++i) tree_insert(run_[i].key, run_[i].work);
  run_.clear();
  head_ = 0;
}

void ChainTree::tree_insert(const ChainKey& key, double work) {
  std::uint32_t n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    nodes_.emplace_back();
    n = static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  nodes_[n] = Node{key, work, work, next_prio(), kNil, kNil};
  root_ = insert_at(root_, n);
  ++size_;
  if (front_ == kNil || key < nodes_[front_].key) front_ = n;
  if (back_ == kNil || nodes_[back_].key < key) back_ = n;
}

void ChainTree::tree_erase(const ChainKey& key) {
  bool was_front = front_ != kNil && nodes_[front_].key == key;
  bool was_back = back_ != kNil && nodes_[back_].key == key;
  root_ = erase_at(root_, key);
  if (was_front) front_ = leftmost();
  if (was_back) back_ = rightmost();
}

std::uint32_t ChainTree::leftmost() const {
  std::uint32_t t = root_;
  if (t == kNil) return kNil;
  while (nodes_[t].left != kNil) t = nodes_[t].left;
  return t;
}

std::uint32_t ChainTree::rightmost() const {
  std::uint32_t t = root_;
  if (t == kNil) return kNil;
  while (nodes_[t].right != kNil) t = nodes_[t].right;
  return t;
}

double ChainTree::tree_prefix(const ChainKey& key) const {
  double acc = 0;
  std::uint32_t t = root_;
  while (t != kNil) {
    const Node& n = nodes_[t];
    if (key < n.key) {
      t = n.left;
    } else {
      acc += sum(n.left) + n.work;
      t = n.right;
    }
  }
  return acc;
}

}  // namespace chorus
