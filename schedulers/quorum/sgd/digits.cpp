#include "schedulers/quorum/sgd/digits.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <Eigen/Dense>

#ifndef CHORUS_DIGITS_DEFAULT
#define CHORUS_DIGITS_DEFAULT "digits.csv"
#endif

namespace chorus::sgd {
namespace {

constexpr int kPixels = 64;
constexpr int kClasses = 10;
constexpr int kFeatures = kPixels + 1;  // the pixels and a bias

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Parameters as a kClasses x kFeatures matrix over the flat vector.
using Weights = Eigen::Map<const Eigen::Matrix<double, kClasses, kFeatures, Eigen::RowMajor>>;
using Grad = Eigen::Map<Eigen::Matrix<double, kClasses, kFeatures, Eigen::RowMajor>>;

class Softmax final : public Workload {
 public:
  Softmax(Digits d, const SoftmaxParams& p)
      : p_(p), rows_(d.rows), x_(d.rows, kFeatures), labels_(std::move(d.labels)) {
    for (std::size_t i = 0; i < rows_; ++i) {
      for (int j = 0; j < kPixels; ++j) x_(i, j) = d.pixels[i * kPixels + j];
      x_(i, kPixels) = 1.0;
    }
  }

  std::string name() const override { return "softmax digits"; }
  std::size_t dim() const override { return kClasses * kFeatures; }
  std::size_t samples() const override { return rows_; }

  void gradient(std::span<const double> w, std::span<const std::uint32_t> batch,
                std::span<double> g) const override {
    Weights wm(w.data());
    Grad gm(g.data());
    gm.setZero();
    Eigen::Matrix<double, kClasses, 1> p;
    for (std::uint32_t i : batch) {
      const auto row = x_.row(i);
      probabilities(wm, row, p);
      p[labels_[i]] -= 1.0;
      gm.noalias() += p * row;
    }
    if (!batch.empty()) gm /= static_cast<double>(batch.size());
    gm += p_.l2 * wm;
  }

  double loss(std::span<const double> w) const override {
    double sum = 0;
    Weights wm(w.data());
    for (std::size_t i = 0; i < rows_; ++i) sum += sample_loss(wm, i);
    return sum / double(rows_) + 0.5 * p_.l2 * wm.squaredNorm();
  }

  double batch_loss(std::span<const double> w,
                    std::span<const std::uint32_t> batch) const override {
    double sum = 0;
    Weights wm(w.data());
    for (std::uint32_t i : batch) sum += sample_loss(wm, i);
    const double mean = batch.empty() ? 0.0 : sum / double(batch.size());
    return mean + 0.5 * p_.l2 * wm.squaredNorm();
  }

 private:
  template <typename Row>
  static void probabilities(const Weights& w, const Row& row,
                            Eigen::Matrix<double, kClasses, 1>& p) {
    p.noalias() = w * row.transpose();
    p.array() -= p.maxCoeff();
    p = p.array().exp();
    p /= p.sum();
  }

  double sample_loss(const Weights& w, std::size_t i) const {
    Eigen::Matrix<double, kClasses, 1> z = w * x_.row(i).transpose();
    const double top = z.maxCoeff();
    return std::log((z.array() - top).exp().sum()) + top - z[labels_[i]];
  }

  SoftmaxParams p_;
  std::size_t rows_;
  Matrix x_;
  std::vector<std::uint8_t> labels_;
};

}  // namespace

Result<Digits> read_digits_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found(path + ": cannot open the digits data (run scripts/fetch_digits.sh " +
                     "<folder>, or set CHORUS_DIGITS to a digits.csv)");
  }
  Digits d;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::stringstream cells(line);
    std::string cell;
    int column = 0;
    while (std::getline(cells, cell, ',')) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      const bool whole = end != cell.c_str() && *end == '\0' && v == std::floor(v);
      const double most = column < kPixels ? 16 : 9;
      if (!whole || v < 0 || v > most) {
        return invalid_argument(path + ":" + std::to_string(number) + ": column " +
                                std::to_string(column + 1) + " must be a whole number 0-" +
                                std::to_string(int(most)) + ", got '" + cell + "'");
      }
      if (column < kPixels) {
        d.pixels.push_back(v / 16.0);
      } else if (column == kPixels) {
        d.labels.push_back(static_cast<std::uint8_t>(v));
      }
      ++column;
    }
    if (column != kPixels + 1) {
      return invalid_argument(path + ":" + std::to_string(number) + ": expected 65 values (64 " +
                              "pixels and a label), got " + std::to_string(column));
    }
    ++d.rows;
  }
  if (d.rows == 0) return invalid_argument(path + ": no rows");
  return d;
}

std::string default_digits_path() {
  if (const char* env = std::getenv("CHORUS_DIGITS"); env != nullptr && *env != '\0') return env;
  return CHORUS_DIGITS_DEFAULT;
}

std::unique_ptr<Workload> make_softmax(Digits data, const SoftmaxParams& params) {
  return std::make_unique<Softmax>(std::move(data), params);
}

}  // namespace chorus::sgd
