// The training workloads' gradients against finite differences of their losses, and the digits
// reader's errors.
#include <cmath>
#include <fstream>
#include <numeric>
#include <vector>

#include <doctest/doctest.h>

#include "digits_data.hpp"
#include "schedulers/quorum/sgd/logistic_workload.hpp"
#include "support/process.hpp"

namespace chorus::sgd {
namespace {

// The largest gap between the analytic gradient over every sample and the central difference of
// the loss, over a few coordinates.
double gradient_gap(const Workload& wl, const std::vector<double>& w) {
  std::vector<std::uint32_t> all(wl.samples());
  std::iota(all.begin(), all.end(), 0u);
  std::vector<double> g(wl.dim());
  wl.gradient(w, all, g);
  double worst = 0;
  const double h = 1e-5;
  for (std::size_t j = 0; j < wl.dim(); j += std::max<std::size_t>(1, wl.dim() / 7)) {
    std::vector<double> up = w, down = w;
    up[j] += h;
    down[j] -= h;
    const double numeric = (wl.loss(up) - wl.loss(down)) / (2 * h);
    worst = std::max(worst, std::abs(numeric - g[j]));
  }
  return worst;
}

TEST_CASE("Quorum.Workloads.LogisticGradientMatchesTheLoss") {
  auto wl = make_logistic({.dim = 20, .samples = 500, .l2 = 1e-3, .seed = 7});
  std::vector<double> w(wl->dim(), 0.1);
  CHECK(gradient_gap(*wl, w) < 1e-6);
  // The batch loss over every sample is the loss.
  std::vector<std::uint32_t> all(wl->samples());
  std::iota(all.begin(), all.end(), 0u);
  CHECK(wl->batch_loss(w, all) == doctest::Approx(wl->loss(w)));
  // Same seed, same data.
  auto again = make_logistic({.dim = 20, .samples = 500, .l2 = 1e-3, .seed = 7});
  CHECK(again->loss(w) == wl->loss(w));
}

TEST_CASE("Quorum.Workloads.SoftmaxOnDigitsGradientMatchesTheLoss") {
  auto wl = make_softmax(test::digits_data());
  CHECK(wl->samples() == 1797);
  CHECK(wl->dim() == 650);
  std::vector<double> w(wl->dim(), 0.01);
  CHECK(wl->loss(std::vector<double>(wl->dim(), 0.0)) == doctest::Approx(std::log(10.0)));
  CHECK(gradient_gap(*wl, w) < 1e-6);
}

TEST_CASE("Quorum.Workloads.DigitsReaderLocatesBadLines") {
  test::TempDir dir;
  const std::string path = dir.path() + "/bad.csv";
  {
    std::ofstream out(path);
    for (int i = 0; i < 64; ++i) out << "0,";
    out << "3\n";
    for (int i = 0; i < 64; ++i) out << (i == 5 ? "17," : "1,");
    out << "2\n";
  }
  auto r = read_digits_csv(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == path + ":2: column 6 must be a whole number 0-16, got '17'");
  CHECK_FALSE(read_digits_csv(dir.path() + "/none.csv").ok());
}

}  // namespace
}  // namespace chorus::sgd
