// libFuzzer target: the completion-time model reader (TreeModel::parse), and its evaluator on
// what it accepts (NaN, infinities, values on both sides of zero).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "schedulers/netaware/tree_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto model = chorus::TreeModel::parse(text, "fuzz.json");
  if (!model.ok()) {
    (void)model.status().message().size();
    return 0;
  }
  for (float v : {std::numeric_limits<float>::quiet_NaN(), -1.0f, 0.0f, 1.0f, 1e30f,
                  std::numeric_limits<float>::infinity()}) {
    chorus::FeatureVector x;
    x.fill(v);
    volatile double p = model->predict_s(x);
    (void)p;
  }
  return 0;
}
