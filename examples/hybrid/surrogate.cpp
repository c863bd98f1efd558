// surrogate --port P [--host H] [--data DIR]: the persistent surrogate-model service of the
// hybrid example. A ZeroMQ REP socket on tcp://H:P (H defaults to 127.0.0.1; P = 0 takes any free
// port, which the "listening on" line then names) answering the JSON
// requests of README.md ("Protocol") with a Gaussian process. With --data it first fits on the
// simulations already under DIR, so a restarted replica resumes with what the run has learnt.
// Prints "listening on tcp://H:P" (flushed) once bound; exits 0 on SIGTERM or SIGINT.
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "examples/hybrid/surrogate_service.hpp"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int /*signo*/) {
  g_stop = true;
}

int usage() {
  std::fprintf(stderr, "usage: surrogate --port P [--host 127.0.0.1] [--data DIR]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", data;
  long port = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    if (arg == "--port") {
      char* end = nullptr;
      port = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) {
        std::fprintf(stderr, "surrogate: --port must be 0..65535 (0: any free port), got '%s'\n",
                     argv[i]);
        return 2;
      }
    } else if (arg == "--host") {
      host = argv[++i];
    } else if (arg == "--data") {
      data = argv[++i];
    } else {
      return usage();
    }
  }
  if (port < 0) return usage();

  chorus::hybrid::SurrogateService service;
  if (!data.empty()) {
    if (chorus::Status s = service.fit_directory(data); !s)
      std::fprintf(stderr, "surrogate: starting untrained: %s\n", s.message().c_str());
    else
      std::printf("surrogate: trained on %zu simulations from %s\n", service.model().size(),
                  data.c_str());
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  void* context = zmq_ctx_new();
  void* socket = zmq_socket(context, ZMQ_REP);
  const int linger = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
  const std::string endpoint = "tcp://" + host + ":" + (port == 0 ? "*" : std::to_string(port));
  if (zmq_bind(socket, endpoint.c_str()) != 0) {
    std::fprintf(stderr, "surrogate: cannot bind %s: %s\n", endpoint.c_str(),
                 zmq_strerror(zmq_errno()));
    zmq_close(socket);
    zmq_ctx_term(context);
    return 1;
  }
  char bound[256];  // the port actually bound when it was "*"
  size_t bound_len = sizeof bound;
  zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, bound, &bound_len);
  std::printf("listening on %s\n", bound);
  std::fflush(stdout);

  int rc = 0;
  while (!g_stop) {
    // Poll with a short timeout so a signal that lands on one of libzmq's threads still stops us.
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    const int ready = zmq_poll(&item, 1, 200);
    if (ready < 0 && zmq_errno() == EINTR) continue;
    if (ready < 0) {
      std::fprintf(stderr, "surrogate: poll: %s\n", zmq_strerror(zmq_errno()));
      rc = 1;
      break;
    }
    if (ready == 0) continue;
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, socket, 0) < 0) {
      zmq_msg_close(&msg);
      if (zmq_errno() == EINTR) continue;
      std::fprintf(stderr, "surrogate: receive: %s\n", zmq_strerror(zmq_errno()));
      rc = 1;
      break;
    }
    const auto* bytes = static_cast<const char*>(zmq_msg_data(&msg));
    nlohmann::json request = nlohmann::json::parse(bytes, bytes + zmq_msg_size(&msg), nullptr,
                                                   /*allow_exceptions=*/false);
    zmq_msg_close(&msg);
    nlohmann::json reply =
        request.is_discarded()
            ? nlohmann::json{{"ok", false}, {"error", "the request is not valid JSON"}}
            : service.handle(request);
    // error_handler_t::replace: a request carrying invalid UTF-8 must not make dump() throw.
    const std::string text = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (request.is_object() && request.contains("op") && request["op"] == "fit") {
      std::printf("surrogate: fit -> %s\n", text.c_str());
      std::fflush(stdout);
    }
    // A REP socket must answer before it can receive again; a signal here retries the send.
    while (zmq_send(socket, text.data(), text.size(), 0) < 0) {
      if (zmq_errno() != EINTR) {
        std::fprintf(stderr, "surrogate: send: %s\n", zmq_strerror(zmq_errno()));
        rc = 1;
        break;
      }
    }
    if (rc != 0) break;
  }
  zmq_close(socket);
  zmq_ctx_term(context);
  if (rc == 0) std::printf("surrogate: stopped after %ld requests\n", service.requests());
  return rc;
}
