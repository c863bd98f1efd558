// The quorum policies allocate nothing per call after warm-up (quorum_policy.hpp's contract):
// every call of dbw, dbw+ and adasync is counted through a global operator new that counts only
// while a policy call runs.
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "schedulers/policy_registry.hpp"
#include "synthetic_rounds.hpp"

namespace {
thread_local bool counting = false;
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): a nothrow new left to
// the runtime and freed by the delete above is a mismatch AddressSanitizer reports.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace chorus {
namespace {

// Forwards to a policy, counting the allocations made inside its calls.
class Counted final : public QuorumPolicy {
 public:
  explicit Counted(QuorumPolicy& inner) : inner_(inner) {}
  struct Scope {
    Scope() { counting = true; }
    ~Scope() { counting = false; }
  };
  void begin(const RoundStart& r) override {
    Scope s;
    inner_.begin(r);
  }
  QuorumVerdict on_arrival(const Arrival& a) override {
    Scope s;
    return inner_.on_arrival(a);
  }
  double deadline() const override {
    Scope s;
    return inner_.deadline();
  }
  QuorumVerdict on_tick(double now) override {
    Scope s;
    return inner_.on_tick(now);
  }
  void end(const RoundEnd& r) override {
    Scope s;
    inner_.end(r);
  }

 private:
  QuorumPolicy& inner_;
};

TEST_CASE("Quorum.Policies.AllocateNothingPerCallAfterWarmUp") {
  const auto registry = PolicyRegistry::with_builtins();
  for (const char* name : {"dbw", "dbw+", "adasync", "static", "wait-all"}) {
    CAPTURE(name);
    PolicyOptions o;
    if (std::string(name) == "static")
      o.entries.push_back(
          {"b", {"t", 1, 1}, {OptionValue::Kind::scalar, "2", {}, {"t", 1, 3}}, {}});
    auto made = registry.make_quorum(name, o);
    REQUIRE(made.ok());
    Counted p(**made);
    test::GradientSource src{.dim = 8, .mean = 0.5, .sd = 1.0};
    std::mt19937_64 rng(9);
    double t = 0;
    for (int r = 1; r <= 30; ++r)  // warm-up: the windows fill
      t = test::run_round(p, r, t, test::pareto(rng, 64, 1.0, 1.5), &src, 0.1, 1.0, 10.0 / r)
              .closed_at;
    const long before = allocations.load();
    for (int r = 31; r <= 80; ++r)
      t = test::run_round(p, r, t, test::pareto(rng, 64, 1.0, 1.5), &src, 0.1, 1.0, 10.0 / r)
              .closed_at;
    CHECK(allocations.load() - before == 0);
  }
}

}  // namespace
}  // namespace chorus
