// gen --rows N [--seed S]: writes data.csv, N rows of "id,value" with reproducible values.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

int main(int argc, char** argv) {
  long rows = 1000;
  unsigned seed = 42;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rows") == 0) rows = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--seed") == 0)
      seed = static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
  }
  if (rows <= 0) {
    std::fprintf(stderr, "gen: --rows must be positive\n");
    return 2;
  }
  std::FILE* out = std::fopen("data.csv", "w");
  if (out == nullptr) {
    std::perror("gen: data.csv");
    return 1;
  }
  std::mt19937 rng(seed);
  std::normal_distribution<double> value(50.0, 10.0);
  std::fprintf(out, "id,value\n");
  for (long i = 0; i < rows; ++i) std::fprintf(out, "%ld,%.6f\n", i, value(rng));
  std::fclose(out);
  std::printf("gen: wrote %ld rows to data.csv\n", rows);
  return 0;
}
