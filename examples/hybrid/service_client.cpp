#include "examples/hybrid/service_client.hpp"

#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace chorus::hybrid {

std::vector<std::string> split_endpoints(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

std::size_t pick_replica(const std::string& key, std::size_t replicas) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h % replicas);
}

Result<std::vector<std::string>> endpoints_from_env(const char* name) {
  const char* value = std::getenv(name);
  std::vector<std::string> out = split_endpoints(value != nullptr ? value : "");
  if (out.empty())
    return invalid_argument(std::string(name) +
                            " is not set: run this as a task that uses the service, or export it "
                            "(e.g. " +
                            name + "=tcp://127.0.0.1:5600)");
  return out;
}

Result<ServiceClient> ServiceClient::connect(const std::string& endpoint,
                                             std::chrono::milliseconds timeout) {
  void* context = zmq_ctx_new();
  if (context == nullptr) return internal_error(std::string("zmq_ctx_new: ") + zmq_strerror(errno));
  void* socket = zmq_socket(context, ZMQ_REQ);
  const int linger = 0;
  if (socket == nullptr || zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_connect(socket, endpoint.c_str()) != 0) {
    std::string why = zmq_strerror(zmq_errno());
    if (socket != nullptr) zmq_close(socket);
    zmq_ctx_term(context);
    return invalid_argument("cannot connect to '" + endpoint + "': " + why);
  }
  return ServiceClient(context, socket, endpoint, timeout);
}

ServiceClient::ServiceClient(void* context, void* socket, std::string endpoint,
                             std::chrono::milliseconds timeout)
    : context_(context), socket_(socket), endpoint_(std::move(endpoint)), timeout_(timeout) {}

ServiceClient::ServiceClient(ServiceClient&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      socket_(std::exchange(other.socket_, nullptr)),
      endpoint_(std::move(other.endpoint_)),
      timeout_(other.timeout_),
      broken_(other.broken_) {}

ServiceClient& ServiceClient::operator=(ServiceClient&& other) noexcept {
  if (this != &other) {
    close();
    context_ = std::exchange(other.context_, nullptr);
    socket_ = std::exchange(other.socket_, nullptr);
    endpoint_ = std::move(other.endpoint_);
    timeout_ = other.timeout_;
    broken_ = other.broken_;
  }
  return *this;
}

ServiceClient::~ServiceClient() {
  close();
}

void ServiceClient::close() {
  if (socket_ != nullptr) zmq_close(socket_);
  if (context_ != nullptr) zmq_ctx_term(context_);
  socket_ = context_ = nullptr;
}

Result<nlohmann::json> ServiceClient::call(const nlohmann::json& request) {
  if (broken_ || socket_ == nullptr)
    return Status(ErrorCode::unavailable, endpoint_ + ": an earlier request got no reply");
  const std::string text = request.dump();
  if (zmq_send(socket_, text.data(), text.size(), 0) < 0)
    return io_error(endpoint_ + ": send: " + zmq_strerror(zmq_errno()));
  zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int rc = zmq_poll(&item, 1, std::max<long>(0, static_cast<long>(left.count())));
    if (rc > 0) break;
    if (rc < 0 && zmq_errno() == EINTR) continue;
    broken_ = true;
    if (rc < 0) return io_error(endpoint_ + ": poll: " + zmq_strerror(zmq_errno()));
    return Status(ErrorCode::unavailable,
                  endpoint_ + ": no reply within " + std::to_string(timeout_.count()) +
                      " ms: is the surrogate service running and listening there?");
  }
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, socket_, 0) < 0) {
    zmq_msg_close(&msg);
    broken_ = true;
    return io_error(endpoint_ + ": receive: " + zmq_strerror(zmq_errno()));
  }
  std::string reply(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
  zmq_msg_close(&msg);
  nlohmann::json j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return invalid_argument(endpoint_ +
                            ": the reply is not a JSON object: " + reply.substr(0, 200));
  if (!j.value("ok", false))
    return invalid_argument(endpoint_ + ": " + j.value("error", std::string("request failed")));
  return j;
}

}  // namespace chorus::hybrid
