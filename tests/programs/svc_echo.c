/* A small network service for the services tests: listens on 127.0.0.1:PORT, answers HTTP GETs
 * with 200 (or echoes a line back for plain TCP), until SIGTERM.
 *
 *   svc_echo PORT [--delay-ms N] [--print] [--file F] [--crash-after-ms N] [--crash-once MARKER]
 *            [--status N]
 *
 * --delay-ms: sleep before listening (a slow start).  --print: print "listening on HOST:PORT"
 * once bound (PORT 0: the port the kernel chose).  --file F: write "HOST:PORT" to F once bound.
 * --crash-after-ms N: exit 3 N ms after binding.  --crash-once MARKER: exit 3 at start unless
 * MARKER exists (and create it), so the first attempt crashes and the restart works.
 * --status N: the HTTP status answered. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop = 0;
static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: svc_echo PORT [options]\n");
    return 2;
  }
  int port = atoi(argv[1]);
  long delay = 0, crash_after = -1;
  int print = 0, status = 200;
  const char* file = NULL;
  const char* marker = NULL;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--delay-ms") == 0 && i + 1 < argc)
      delay = atol(argv[++i]);
    else if (strcmp(argv[i], "--print") == 0)
      print = 1;
    else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
      file = argv[++i];
    else if (strcmp(argv[i], "--crash-after-ms") == 0 && i + 1 < argc)
      crash_after = atol(argv[++i]);
    else if (strcmp(argv[i], "--crash-once") == 0 && i + 1 < argc)
      marker = argv[++i];
    else if (strcmp(argv[i], "--status") == 0 && i + 1 < argc)
      status = atoi(argv[++i]);
    else {
      fprintf(stderr, "svc_echo: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  if (marker != NULL) {
    struct stat st;
    if (stat(marker, &st) != 0) {
      FILE* m = fopen(marker, "w");
      if (m != NULL) fclose(m);
      fprintf(stderr, "svc_echo: crashing on purpose (first start)\n");
      return 3;
    }
  }
  if (delay > 0) usleep((useconds_t)(delay * 1000));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, 64) != 0) {
    perror("svc_echo: bind");
    return 4;
  }
  /* PORT 0: the kernel chose one; report that. */
  socklen_t len = sizeof addr;
  if (getsockname(fd, (struct sockaddr*)&addr, &len) == 0) port = ntohs(addr.sin_port);
  if (print) {
    printf("listening on 127.0.0.1:%d\n", port);
    fflush(stdout);
  }
  if (file != NULL) {
    /* Written aside, then renamed: a file probe that saw the file half-written would hand the
       service's users its path instead of the address (docs/services.md). */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE* f = fopen(tmp, "w");
    if (f != NULL) {
      fprintf(f, "127.0.0.1:%d\n", port);
      if (fclose(f) == 0) rename(tmp, file);
    }
  }
  long started = now_ms();
  while (!stop) {
    if (crash_after >= 0 && now_ms() - started >= crash_after) {
      fprintf(stderr, "svc_echo: crashing on purpose\n");
      return 3;
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    int c = accept(fd, NULL, NULL);
    if (c < 0) continue;
    char buf[1024];
    ssize_t n = recv(c, buf, sizeof buf - 1, 0);
    if (n > 0) {
      buf[n] = 0;
      if (strncmp(buf, "GET ", 4) == 0) {
        char reply[128];
        int len =
            snprintf(reply, sizeof reply, "HTTP/1.0 %d X\r\nContent-Length: 2\r\n\r\nok", status);
        (void)!send(c, reply, (size_t)len, MSG_NOSIGNAL);
      } else {
        (void)!send(c, buf, (size_t)n, MSG_NOSIGNAL);
      }
    }
    close(c);
  }
  close(fd);
  return 0;
}
