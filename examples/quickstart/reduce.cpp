// reduce: reads "count sum sum_of_squares" lines on stdin, prints the overall count, mean and
// standard deviation, and writes them to result.txt.
#include <cmath>
#include <cstdio>

int main() {
  long count = 0, n = 0, parts = 0;
  double sum = 0, sum2 = 0, s = 0, s2 = 0;
  while (std::scanf("%ld %lf %lf", &n, &s, &s2) == 3) {
    count += n;
    sum += s;
    sum2 += s2;
    ++parts;
  }
  if (count == 0) {
    std::fprintf(stderr, "reduce: no input rows\n");
    return 1;
  }
  double mean = sum / static_cast<double>(count);
  double var = sum2 / static_cast<double>(count) - mean * mean;
  char line[160];
  std::snprintf(line, sizeof line, "rows=%ld parts=%ld mean=%.4f stddev=%.4f\n", count, parts, mean,
                std::sqrt(var > 0 ? var : 0));
  std::fputs(line, stdout);
  if (std::FILE* out = std::fopen("result.txt", "w")) {
    std::fputs(line, out);
    std::fclose(out);
  }
  return 0;
}
