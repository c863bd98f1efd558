#include "runtime/cancel_token.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace chorus {

CancelToken::CancelToken() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::runtime_error("eventfd failed");  // start-up failure
}

CancelToken::~CancelToken() {
  if (fd_ >= 0) close(fd_);
}

void CancelToken::request() {
  requests_.fetch_add(1, std::memory_order_acq_rel);
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = write(fd_, &one, sizeof one);
}

void CancelToken::drain() {
  std::uint64_t value;
  [[maybe_unused]] auto n = read(fd_, &value, sizeof value);
}

}  // namespace chorus
