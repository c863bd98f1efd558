// ChainTree (uwfq's per-user chain with prefix sums of work) against a std::map doing the same
// by a linear scan: random inserts, erases, pops and growth (erase + reinsert later), with every
// prefix sum, the front and the total checked after each step.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "schedulers/queue/chain_tree.hpp"

using namespace chorus;

namespace {

double scan_prefix(const std::map<ChainKey, double>& m, const ChainKey& k) {
  double s = 0;
  for (const auto& [key, work] : m) {
    if (k < key) break;
    s += work;
  }
  return s;
}

void check_same(const ChainTree& t, const std::map<ChainKey, double>& m) {
  REQUIRE(t.size() == m.size());
  REQUIRE(t.empty() == m.empty());
  if (m.empty()) return;
  CHECK(t.front() == m.begin()->first);
  double total = 0;
  for (const auto& [key, work] : m) total += work;
  CHECK(t.total_work() == doctest::Approx(total).epsilon(1e-12));
  for (const auto& [key, work] : m) {
    CHECK(t.prefix_work(key) == doctest::Approx(scan_prefix(m, key)).epsilon(1e-12));
  }
  std::vector<ChainKey> walked;
  t.for_each([&](const ChainKey& k, double) { walked.push_back(k); });
  REQUIRE(walked.size() == m.size());
  auto it = m.begin();
  for (const ChainKey& k : walked) CHECK(k == (it++)->first);
}

// `in_order`: out of every 20 new keys, 19 are above all others (the sorted run's case) and one
// lands anywhere (moving the run into the treap); otherwise every key lands anywhere.
void random_operations(std::uint64_t seed, bool in_order) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> work(0.01, 5.0);
  ChainTree t;
  std::map<ChainKey, double> m;
  std::uint64_t seq = 0;
  double top = 0;
  for (int step = 0; step < 3000; ++step) {
    auto r = rng() % 10;
    if (r < 5 || m.empty()) {
      // Keys tie on ud now and then, so seq breaks ties.
      double ud = static_cast<double>(rng() % 200) / 4.0;
      if (in_order && rng() % 20 != 0) ud = (top += 0.25);
      ChainKey k{ud, seq++, static_cast<std::uint32_t>(seq)};
      double w = work(rng);
      t.insert(k, w);
      m.emplace(k, w);
    } else if (r < 7 && !in_order) {
      auto it = std::next(m.begin(), static_cast<std::ptrdiff_t>(rng() % m.size()));
      t.erase(it->first);
      m.erase(it);
    } else if (r < 8 || (in_order && r < 9)) {
      t.pop_front();
      m.erase(m.begin());
    } else {
      // A job grows: more work and a later key (in order: mostly the last job).
      auto it = in_order && rng() % 4 != 0
                    ? std::prev(m.end())
                    : std::next(m.begin(), static_cast<std::ptrdiff_t>(rng() % m.size()));
      ChainKey k = it->first;
      double w = it->second + work(rng);
      t.erase(k);
      m.erase(it);
      k.ud += 1.5;
      top = std::max(top, k.ud);
      t.insert(k, w);
      m.emplace(k, w);
    }
    if (step % 50 == 0 || m.size() < 8) check_same(t, m);
  }
  check_same(t, m);
  // A key between entries (not present) sums everything before it.
  if (!m.empty()) {
    ChainKey probe{m.begin()->first.ud, m.begin()->first.seq + 1'000'000, 0};
    CHECK(t.prefix_work(probe) == doctest::Approx(scan_prefix(m, probe)).epsilon(1e-12));
  }
  t.clear();
  CHECK(t.empty());
  CHECK(t.total_work() == 0);
}

}  // namespace

TEST_CASE("Schedulers.ChainTree.AgreesWithAScanOnRandomOperations") {
  for (std::uint64_t seed : {11, 12}) {
    CAPTURE(seed);
    random_operations(seed, false);
  }
}

TEST_CASE("Schedulers.ChainTree.AgreesWithAScanWhenKeysMostlyArriveInOrder") {
  for (std::uint64_t seed : {13, 14}) {
    CAPTURE(seed);
    random_operations(seed, true);
  }
}

TEST_CASE("Schedulers.ChainTree.DescendingInsertsKeepOrderAndSums") {
  // Every insert goes to the front: the order that made the sorted-vector chain quadratic (a
  // user whose every new job is shorter than all its queued ones).
  ChainTree t;
  constexpr int kN = 200'000;
  for (int i = 0; i < kN; ++i) {
    t.insert(ChainKey{static_cast<double>(kN - i), static_cast<std::uint64_t>(i), 0}, 1.0);
  }
  CHECK(t.size() == kN);
  CHECK(t.front().ud == 1.0);
  CHECK(t.prefix_work(ChainKey{1000.0, kN, 0}) == doctest::Approx(1000.0));  // ud 1..1000
  CHECK(t.total_work() == doctest::Approx(kN));
  std::size_t n = 0;
  double last = 0;
  t.for_each([&](const ChainKey& k, double) {
    CHECK(k.ud > last);
    last = k.ud;
    ++n;
  });
  CHECK(n == kN);
}
