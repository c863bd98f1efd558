/* mpi_spin STOP_FILE [MAX_SECONDS] [PERIOD_MS] [BUSY_MS]: the MPI job of the mixed-throughput
 * benchmark, a real MPI program that stays up for as long as the work beside it runs. Every period
 * each rank computes for BUSY_MS (default 0), sleeps for the rest of PERIOD_MS (default 10), then
 * the ranks agree in an MPI_Allreduce on whether rank 0 saw STOP_FILE appear or MAX_SECONDS
 * (default 600) pass. Rank 0 prints "mpi_spin: R ranks, N rounds, S s" at the end; exits 1 when it
 * stopped on MAX_SECONDS instead of the stop file (so a run that outlived its work shows as
 * failed).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || argc > 5) {
    if (rank == 0)
      fprintf(stderr, "usage: mpi_spin STOP_FILE [MAX_SECONDS] [PERIOD_MS] [BUSY_MS]\n");
    MPI_Finalize();
    return 2;
  }
  const char* stop_file = argv[1];
  const double max_seconds = argc > 2 ? atof(argv[2]) : 600.0;
  const double period = (argc > 3 ? atof(argv[3]) : 10.0) * 1e-3;
  const double busy = (argc > 4 ? atof(argv[4]) : 0.0) * 1e-3;

  const double start = now_seconds(), wall_start = wall_seconds();
  long rounds = 0;
  int stop = 0;
  /* Read once after the loop: the busy part must not be optimised away, and clang 14 refuses a
     volatile that is only written (-Wunused-but-set-variable). */
  volatile double sink = 0.0;
  while (!stop) {
    const double round_start = now_seconds();
    while (now_seconds() - round_start < busy) sink += 1e-9;
    const double rest = period - (now_seconds() - round_start);
    if (rest > 0) {
      struct timespec ts = {(time_t)rest, (long)((rest - (double)(time_t)rest) * 1e9)};
      nanosleep(&ts, NULL);
    }
    int mine = 0;
    if (rank == 0) {
      if (access(stop_file, F_OK) == 0)
        mine = 1;
      else if (now_seconds() - start > max_seconds)
        mine = 2;
    }
    MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ++rounds;
  }
  if (rank == 0) {
    printf("mpi_spin: %d ranks, %ld rounds, %.2f s, from %.6f to %.6f\n", size, rounds,
           now_seconds() - start, wall_start, wall_seconds());
    fflush(stdout);
  }
  (void)sink;
  MPI_Finalize();
  return stop == 2 ? 1 : 0;
}
