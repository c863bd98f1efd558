// coupling_echo [ENDPOINT]: the service side of the coupling benchmark. A ZeroMQ REP socket that
// sends every request back unchanged. ENDPOINT defaults to tcp://127.0.0.1:* (a free port);
// "--port P" is short for tcp://127.0.0.1:P (the `{port}` placeholder of a Chorus service).
// Prints "listening on <endpoint>" (flushed) once bound; exits 0 on SIGTERM or SIGINT.
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int /*signo*/) {
  g_stop = true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint = "tcp://127.0.0.1:*";
  if (argc == 3 && std::string(argv[1]) == "--port") {
    endpoint = std::string("tcp://127.0.0.1:") + argv[2];
  } else if (argc == 2) {
    endpoint = argv[1];
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: coupling_echo [ENDPOINT | --port P]\n");
    return 2;
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
  if (zmq_bind(socket, endpoint.c_str()) != 0) {
    std::fprintf(stderr, "coupling_echo: cannot bind %s: %s\n", endpoint.c_str(),
                 zmq_strerror(zmq_errno()));
    zmq_close(socket);
    zmq_ctx_term(context);
    return 1;
  }
  char bound[256];
  size_t len = sizeof bound;
  zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, bound, &len);
  std::printf("listening on %s\n", bound);
  std::fflush(stdout);

  int rc = 0;
  long served = 0;
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  while (!g_stop) {
    // Poll with a timeout so a signal that lands on one of libzmq's threads still stops us.
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    const int ready = zmq_poll(&item, 1, 200);
    if (ready <= 0) {
      if (ready < 0 && zmq_errno() != EINTR) rc = 1;
      if (rc != 0) break;
      continue;
    }
    if (zmq_msg_recv(&msg, socket, 0) < 0 || zmq_msg_send(&msg, socket, 0) < 0) {
      if (zmq_errno() == EINTR) continue;
      std::fprintf(stderr, "coupling_echo: %s\n", zmq_strerror(zmq_errno()));
      rc = 1;
      break;
    }
    ++served;
  }
  zmq_msg_close(&msg);
  zmq_close(socket);
  zmq_ctx_term(context);
  std::fprintf(stderr, "coupling_echo: served %ld requests\n", served);
  return rc;
}
