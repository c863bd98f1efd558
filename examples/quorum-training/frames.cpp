#include "examples/quorum-training/frames.hpp"

#include <cstring>

namespace quorum_training {
namespace {

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
T get(std::string_view payload, std::size_t at) {
  T value;
  std::memcpy(&value, payload.data() + at, sizeof(T));
  return value;
}

void put_doubles(std::string& out, std::span<const double> values) {
  out.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
}

std::span<const double> copy_doubles(std::string_view payload, std::size_t at, std::size_t count,
                                     std::vector<double>& storage) {
  if (storage.size() < count) storage.resize(count);
  if (count > 0) std::memcpy(storage.data(), payload.data() + at, count * sizeof(double));
  return {storage.data(), count};
}

constexpr std::size_t kRoundHeader = 4 + 4 * 4 + 8;
constexpr std::size_t kGradHeader = 4 + 3 * 4 + 3 * 8;

}  // namespace

std::string_view rejection_name(Rejection r) {
  switch (r) {
    case Rejection::bad_frame:
      return "bad_frame";
    case Rejection::wrong_dim:
      return "wrong_dim";
    case Rejection::non_finite:
      return "non_finite";
    case Rejection::bad_worker:
      return "bad_worker";
    case Rejection::past_round:
      return "past_round";
    case Rejection::future_round:
      return "future_round";
    case Rejection::duplicate:
      return "duplicate";
  }
  return "unknown";
}

std::uint32_t frame_tag(std::string_view payload) {
  return payload.size() < 4 ? 0 : get<std::uint32_t>(payload, 0);
}

void encode_hello(std::string& out, std::int32_t worker) {
  out.clear();
  put(out, kHelloTag);
  put(out, worker);
}

void encode_round(std::string& out, const RoundFrame& frame) {
  out.clear();
  put(out, kRoundTag);
  put(out, frame.round);
  put(out, static_cast<std::uint32_t>(frame.mode));
  put(out, frame.batch);
  put(out, static_cast<std::uint32_t>(frame.weights.size()));
  put(out, frame.learning_rate);
  put_doubles(out, frame.weights);
}

void encode_grad(std::string& out, std::uint32_t round, std::int32_t worker, double batch_loss,
                 double compute_s, std::span<const double> gradient, double curvature) {
  out.clear();
  put(out, kGradTag);
  put(out, round);
  put(out, worker);
  put(out, static_cast<std::uint32_t>(gradient.size()));
  put(out, batch_loss);
  put(out, compute_s);
  put(out, curvature);
  put_doubles(out, gradient);
}

void encode_stop(std::string& out) {
  out.clear();
  put(out, kStopTag);
}

bool decode_hello(std::string_view payload, std::int32_t& worker) {
  if (payload.size() != 8 || frame_tag(payload) != kHelloTag) return false;
  worker = get<std::int32_t>(payload, 4);
  return true;
}

bool decode_round(std::string_view payload, std::vector<double>& storage, RoundFrame& frame) {
  if (payload.size() < kRoundHeader || frame_tag(payload) != kRoundTag) return false;
  frame.round = get<std::uint32_t>(payload, 4);
  const auto mode = get<std::uint32_t>(payload, 8);
  if (mode > 1) return false;
  frame.mode = static_cast<Mode>(mode);
  frame.batch = get<std::uint32_t>(payload, 12);
  const auto dim = get<std::uint32_t>(payload, 16);
  frame.learning_rate = get<double>(payload, 20);
  if (payload.size() != kRoundHeader + std::size_t{dim} * sizeof(double)) return false;
  frame.weights = copy_doubles(payload, kRoundHeader, dim, storage);
  return true;
}

bool decode_grad(std::string_view payload, std::vector<double>& storage, GradFrame& frame) {
  if (payload.size() < kGradHeader || frame_tag(payload) != kGradTag) return false;
  frame.round = get<std::uint32_t>(payload, 4);
  frame.worker = get<std::int32_t>(payload, 8);
  frame.dim = get<std::uint32_t>(payload, 12);
  frame.batch_loss = get<double>(payload, 16);
  frame.compute_s = get<double>(payload, 24);
  frame.curvature = get<double>(payload, 32);
  if (payload.size() != kGradHeader + std::size_t{frame.dim} * sizeof(double)) return false;
  frame.gradient = copy_doubles(payload, kGradHeader, frame.dim, storage);
  return true;
}

}  // namespace quorum_training
