// The wire format between the parameter server (ps.cpp) and its workers (worker.cpp): one ZeroMQ
// message per frame over runtime/transport's CURVE sockets (ROUTER at the PS, DEALER per worker).
//
// Every frame starts with a 4-byte tag; numbers are in the host's byte order (both ends are these
// programs on the same kind of machine; a frame whose size does not match its header is refused,
// so a mismatch cannot be misread silently).
//   HELO  W->PS  tag, i32 worker                              "I am worker w" (repeated until a
//                                                             ROUND arrives: a restarted PS
//                                                             learns its workers again)
//   RND   PS->W  tag, u32 round, u32 mode, u32 batch, u32 dim, f64 lr, dim x f64 weights
//   GRAD  W->PS  tag, u32 round, i32 worker, u32 dim, f64 batch_loss, f64 compute_s,
//                dim x f64 gradient
//   STOP  PS->W  tag                                          training ended: go idle
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quorum_training {

enum class Mode : std::uint32_t { interrupt = 0, timed = 1 };

inline constexpr std::uint32_t kHelloTag = 0x4c454851;  // "QHEL"
inline constexpr std::uint32_t kRoundTag = 0x444e5251;  // "QRND"
inline constexpr std::uint32_t kGradTag = 0x44524751;   // "QGRD"
inline constexpr std::uint32_t kStopTag = 0x50545351;   // "QSTP"

struct RoundFrame {
  std::uint32_t round = 0;
  Mode mode = Mode::interrupt;
  std::uint32_t batch = 0;
  double learning_rate = 0;
  std::span<const double> weights;  // points into the decoded payload
};

struct GradFrame {
  std::uint32_t round = 0;
  std::int32_t worker = -1;
  std::uint32_t dim = 0;
  double batch_loss = 0;
  double compute_s = 0;
  // The worker's secant curvature along its last step, <g(w) - g(w'), w - w'> / ||w - w'||^2 on
  // this batch (w' its previous weights), or NaN when it sent none (TrainingConfig).
  double curvature = std::numeric_limits<double>::quiet_NaN();
  std::span<const double> gradient;  // points into a copy the decoder owns (aligned)
};

// Why the PS refused a gradient frame (counted per reason in its result; the round goes on).
enum class Rejection : std::uint8_t {
  bad_frame,     // unknown tag, or a size that does not match the header
  wrong_dim,     // dimension other than the workload's
  non_finite,    // NaN or infinity in the gradient or its loss
  bad_worker,    // a worker id out of range, or not the one this peer said HELO as
  past_round,    // a round already closed (and not the one timed mode still times)
  future_round,  // a round not started yet
  duplicate,     // a second gradient of the same worker for the same round
};
inline constexpr int kRejectionKinds = 7;
std::string_view rejection_name(Rejection r);

std::uint32_t frame_tag(std::string_view payload);  // 0 when shorter than a tag

void encode_hello(std::string& out, std::int32_t worker);
void encode_round(std::string& out, const RoundFrame& frame);
void encode_grad(std::string& out, std::uint32_t round, std::int32_t worker, double batch_loss,
                 double compute_s, std::span<const double> gradient,
                 double curvature = std::numeric_limits<double>::quiet_NaN());
void encode_stop(std::string& out);

// Decoders return false on a size or tag mismatch. Gradient and weight values are copied into
// `storage` (resized without shrinking: no allocation once warm) so the spans are aligned.
bool decode_hello(std::string_view payload, std::int32_t& worker);
bool decode_round(std::string_view payload, std::vector<double>& storage, RoundFrame& frame);
bool decode_grad(std::string_view payload, std::vector<double>& storage, GradFrame& frame);

}  // namespace quorum_training
