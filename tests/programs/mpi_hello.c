/* mpi_hello [fail-rank R]: each rank prints "rank R of S sum X" (plus "node N" under Slurm);
 * with fail-rank, rank R writes to stderr and exits 3 (to test how a failing rank fails the
 * task). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  /* Under Slurm, the virtual node the rank runs on (they share one hostname here). */
  const char* node = getenv("SLURMD_NODENAME");
  if (node != NULL) {
    printf("rank %d of %d sum %d node %s\n", rank, size, sum, node);
  } else {
    printf("rank %d of %d sum %d\n", rank, size, sum);
  }
  fflush(stdout);
  if (argc > 2 && strcmp(argv[1], "fail-rank") == 0 && rank == atoi(argv[2])) {
    fprintf(stderr, "rank %d: simulated failure\n", rank);
    fflush(stderr);
    exit(3);
  }
  MPI_Finalize();
  return 0;
}
