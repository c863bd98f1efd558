/* spawn_baseline N [INFLIGHT]: the machine's process-launch limit — posix_spawn /bin/true N times
 * keeping INFLIGHT (default 2) children alive, reaping with waitpid. Prints one JSON line with the
 * rate. The reference the `chorus run` launch benchmark is compared to. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char** environ;

int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
  long inflight = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
  if (n <= 0 || inflight <= 0) {
    fprintf(stderr, "usage: spawn_baseline N [INFLIGHT]\n");
    return 2;
  }
  char* child_argv[] = {"/bin/true", NULL};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long started = 0, finished = 0, failed = 0;
  while (finished < n) {
    while (started < n && started - finished < inflight) {
      pid_t pid;
      if (posix_spawn(&pid, "/bin/true", NULL, NULL, child_argv, environ) != 0) {
        perror("posix_spawn");
        return 1;
      }
      ++started;
    }
    int status;
    if (waitpid(-1, &status, 0) > 0) {
      ++finished;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf(
      "{\"tasks\": %ld, \"inflight\": %ld, \"seconds\": %.6f, \"tasks_per_s\": %.1f, \"failed\": "
      "%ld}\n",
      n, inflight, s, (double)n / s, failed);
  return failed == 0 ? 0 : 1;
}
