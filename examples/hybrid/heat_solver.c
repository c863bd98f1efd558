/* heat_solver CANDIDATES INDEX OUT: the MPI simulation of the hybrid example.
 *
 * Reads candidate INDEX (0-based) of CANDIDATES, a JSON list of flat objects {"a":..,"b":..} with
 * a, b in [0,1], runs a 2-D heat-diffusion problem set by (a, b) and writes OUT as
 * {"a":..,"b":..,"value":..,"ranks":N}. Rank 0 prints the communicator size and the result.
 *
 * Numerics (see README.md): u_t = div(k grad u) + f on the unit square, u = 0 on the boundary and
 * at t = 0, explicit conservative 5-point steps up to t = T_END on an N x N interior grid.
 *   source       f = S exp(-|x - x0|^2 / (2 w^2)), x0 = (0.15 + 0.7 a, 0.15 + 0.7 b)
 *   conductivity k(x, y) = 1 + 2 b x   (heat flows more easily to the right when b is large)
 *   objective    mean temperature over the sensor disc |x - (0.7, 0.6)| <= 0.12 at t = T_END
 * The grid rows are split in contiguous blocks over the ranks; each step exchanges one halo row
 * with each neighbour. The result does not depend on the number of ranks (up to rounding in the
 * final sum).
 *
 * Exit codes: 0 ok, 2 bad arguments or input, 1 cannot write OUT. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 96 };
static const double T_END = 0.04;
static const double SOURCE_STRENGTH = 200.0;
static const double SOURCE_WIDTH = 0.06;
static const double SENSOR_X = 0.7, SENSOR_Y = 0.6, SENSOR_R = 0.12;

static double conductivity(double x, double b) {
  return 1.0 + 2.0 * b * x;
}

/* Reads the whole file into a NUL-terminated buffer the caller frees; NULL on failure. */
static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, len = 0;
  char* buf = malloc(cap);
  size_t got = 0;
  while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len - 1 == 0) {
      char* grown = realloc(buf, cap * 2);
      if (grown == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf != NULL) buf[len] = '\0';
  return buf;
}

/* Finds "key": <number> between begin and end (one flat JSON object). Returns 0 when found. */
static int find_number(const char* begin, const char* end, const char* key, double* out) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  size_t klen = strlen(quoted);
  for (const char* p = begin; p + klen <= end; ++p) {
    if (strncmp(p, quoted, klen) != 0) continue;
    const char* q = p + klen;
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    if (q >= end || *q != ':') continue;
    char* stop = NULL;
    *out = strtod(q + 1, &stop);
    if (stop == q + 1 || stop > end) return -1;
    return 0;
  }
  return -1;
}

/* Loads candidate `index` of the JSON list in `path`; writes a message to err on failure. */
static int load_candidate(const char* path, long index, double* a, double* b, char* err,
                          size_t err_len) {
  char* text = read_file(path);
  if (text == NULL) {
    snprintf(err, err_len, "cannot read %s", path);
    return -1;
  }
  /* Walk the list: the objects at depth 1 are the candidates. Strings hold no braces here. */
  int depth = 0;
  long seen = 0;
  const char* start = NULL;
  int rc = -1;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == '[' || *p == '{') {
      if (*p == '{' && depth == 1) start = p;
      ++depth;
    } else if (*p == ']' || *p == '}') {
      --depth;
      if (*p == '}' && depth == 1) {
        if (seen == index) {
          if (find_number(start, p, "a", a) != 0 || find_number(start, p, "b", b) != 0) {
            snprintf(err, err_len, "%s: candidate %ld has no numeric \"a\" and \"b\"", path, index);
          } else if (!(*a >= 0.0 && *a <= 1.0 && *b >= 0.0 && *b <= 1.0)) {
            snprintf(err, err_len, "%s: candidate %ld is (%g, %g), outside [0,1]^2", path, index,
                     *a, *b);
          } else {
            rc = 0;
          }
          break;
        }
        ++seen;
      }
    }
  }
  if (rc != 0 && err[0] == '\0')
    snprintf(err, err_len, "%s: no candidate %ld (the list has %ld)", path, index, seen);
  free(text);
  return rc;
}

/* Runs the simulation on this rank's block of rows and returns the objective (on every rank). */
static double simulate(double a, double b, int rank, int size) {
  const double h = 1.0 / (N + 1);
  const double kmax = conductivity(1.0, b);
  const double dt = 0.9 * h * h / (4.0 * kmax);
  const int steps = (int)ceil(T_END / dt);
  const double r = (T_END / steps) / (h * h);
  const double step_dt = T_END / steps;

  /* Rows j0 .. j0+rows-1 (0-based interior rows) live here, with ghost rows 0 and rows+1. */
  const int rows = N / size + (rank < N % size ? 1 : 0);
  const int j0 = rank * (N / size) + (rank < N % size ? rank : N % size);
  const int width = N + 2; /* with the boundary columns */
  const size_t cells = (size_t)(rows + 2) * width;
  double* u = calloc(cells, sizeof *u);
  double* next = calloc(cells, sizeof *next);
  double* f = calloc(cells, sizeof *f);
  double* kx = calloc(cells, sizeof *kx); /* k at the face between (i, j) and (i+1, j) */
  double* ky = calloc(cells, sizeof *ky); /* k at the face between (i, j) and (i, j+1) */
  if (u == NULL || next == NULL || f == NULL || kx == NULL || ky == NULL) {
    fprintf(stderr, "heat_solver: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double x0 = 0.15 + 0.7 * a, y0 = 0.15 + 0.7 * b;
  for (int lj = 0; lj < rows + 2; ++lj) {
    const double y = (j0 + lj) * h; /* lj = 1 is interior row j0, at y = (j0 + 1) h */
    for (int i = 0; i < width; ++i) {
      const double x = i * h;
      const size_t c = (size_t)lj * width + i;
      const double d2 = (x - x0) * (x - x0) + (y - y0) * (y - y0);
      f[c] = SOURCE_STRENGTH * exp(-d2 / (2.0 * SOURCE_WIDTH * SOURCE_WIDTH));
      kx[c] = conductivity(x + 0.5 * h, b);
      ky[c] = conductivity(x, b); /* k does not vary with y */
    }
  }
  const int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  for (int s = 0; s < steps; ++s) {
    /* Halo rows: send my first row down and receive the upper neighbour's first into my top
     * ghost, and the reverse. MPI_PROC_NULL leaves the boundary rows at zero. */
    MPI_Sendrecv(u + width, width, MPI_DOUBLE, down, 0, u + (size_t)(rows + 1) * width, width,
                 MPI_DOUBLE, up, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + (size_t)rows * width, width, MPI_DOUBLE, up, 1, u, width, MPI_DOUBLE, down, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int lj = 1; lj <= rows; ++lj) {
      for (int i = 1; i <= N; ++i) {
        const size_t c = (size_t)lj * width + i;
        const double flux = kx[c] * (u[c + 1] - u[c]) - kx[c - 1] * (u[c] - u[c - 1]) +
                            ky[c] * (u[c + width] - u[c]) - ky[c - width] * (u[c] - u[c - width]);
        next[c] = u[c] + r * flux + step_dt * f[c];
      }
    }
    double* t = u;
    u = next;
    next = t;
  }
  double local[2] = {0.0, 0.0}; /* sum of u and count of points in the sensor disc */
  for (int lj = 1; lj <= rows; ++lj) {
    const double y = (j0 + lj) * h;
    for (int i = 1; i <= N; ++i) {
      const double x = i * h;
      if ((x - SENSOR_X) * (x - SENSOR_X) + (y - SENSOR_Y) * (y - SENSOR_Y) <=
          SENSOR_R * SENSOR_R) {
        local[0] += u[(size_t)lj * width + i];
        local[1] += 1.0;
      }
    }
  }
  double total[2];
  MPI_Allreduce(local, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  free(u);
  free(next);
  free(f);
  free(kx);
  free(ky);
  return total[0] / total[1];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Rank 0 reads the input and broadcasts (ok, a, b), so every rank fails the same way. */
  double params[3] = {0.0, 0.0, 0.0};
  if (rank == 0) {
    char err[512] = "";
    char* end = NULL;
    long index = argc == 4 ? strtol(argv[2], &end, 10) : -1;
    if (argc != 4) {
      fprintf(stderr, "usage: heat_solver CANDIDATES.json INDEX OUT.json\n");
    } else if (end == argv[2] || *end != '\0' || index < 0) {
      fprintf(stderr, "heat_solver: INDEX must be a non-negative integer, got '%s'\n", argv[2]);
    } else if (load_candidate(argv[1], index, &params[1], &params[2], err, sizeof err) != 0) {
      fprintf(stderr, "heat_solver: %s\n", err);
    } else {
      params[0] = 1.0;
    }
    printf("heat_solver: %d ranks\n", size);
    fflush(stdout);
  }
  MPI_Bcast(params, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (params[0] != 1.0) {
    MPI_Finalize();
    return 2;
  }
  if (size > N) {
    if (rank == 0) fprintf(stderr, "heat_solver: at most %d ranks (one grid row each)\n", N);
    MPI_Finalize();
    return 2;
  }
  const double t0 = MPI_Wtime();
  const double value = simulate(params[1], params[2], rank, size);
  int rc = 0;
  if (rank == 0) {
    /* Write to a temporary name and rename, so a reader never sees half a file. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
    FILE* out = fopen(tmp, "w");
    if (out == NULL) {
      perror(tmp);
      rc = 1;
    } else {
      fprintf(out, "{\"a\":%.17g,\"b\":%.17g,\"value\":%.17g,\"ranks\":%d}\n", params[1], params[2],
              value, size);
      if (fclose(out) != 0 || rename(tmp, argv[3]) != 0) {
        perror(argv[3]);
        rc = 1;
      }
    }
    printf("heat_solver: a=%.4f b=%.4f value=%.6f (%.2f s)\n", params[1], params[2], value,
           MPI_Wtime() - t0);
  }
  MPI_Finalize();
  return rc;
}
