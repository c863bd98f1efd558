// The digits data set (1,797 8x8 images of handwritten digits, 64 pixel values 0-16 and a label
// 0-9 per CSV line; the copy Debian 12's python3-sklearn ships, extracted without installing it
// by scripts/fetch_digits.sh) and softmax regression on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "schedulers/quorum/sgd/workload.hpp"

namespace chorus::sgd {

struct Digits {
  std::size_t rows = 0;
  std::vector<double> pixels;  // rows x 64, scaled to [0, 1]
  std::vector<std::uint8_t> labels;
};

// Reads digits.csv (or any CSV of 64 values 0-16 and a label 0-9 per line). Errors name the
// file, the line and what is wrong.
Result<Digits> read_digits_csv(const std::string& path);

// Where the build expects the data: $CHORUS_DIGITS when set, else the path compiled in
// (<build>/data/digits.csv, which scripts/setup.sh and the test fixture fill).
std::string default_digits_path();

struct SoftmaxParams {
  double l2 = 1e-4;
};

// Softmax (multinomial logistic) regression, 10 classes x (64 pixels + bias) = 650 parameters.
std::unique_ptr<Workload> make_softmax(Digits data, const SoftmaxParams& params = {});

}  // namespace chorus::sgd
