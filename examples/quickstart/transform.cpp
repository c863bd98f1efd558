// transform PART PARTS: reads data.csv, keeps rows with id % PARTS == PART, writes
// out/part-PART.txt with "count sum sum_of_squares" of their values.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: transform PART PARTS\n");
    return 2;
  }
  long part = std::strtol(argv[1], nullptr, 10);
  long parts = std::strtol(argv[2], nullptr, 10);
  if (parts <= 0 || part < 0 || part >= parts) {
    std::fprintf(stderr, "transform: bad part %ld of %ld\n", part, parts);
    return 2;
  }
  std::FILE* in = std::fopen("data.csv", "r");
  if (in == nullptr) {
    std::perror("transform: data.csv");
    return 1;
  }
  char header[64];
  if (std::fgets(header, sizeof header, in) == nullptr) return 1;
  long id = 0, count = 0;
  double v = 0, sum = 0, sum2 = 0;
  while (std::fscanf(in, "%ld,%lf", &id, &v) == 2) {
    if (id % parts != part) continue;
    ++count;
    sum += v;
    sum2 += v * v;
  }
  std::fclose(in);
  mkdir("out", 0755);
  std::string path = "out/part-" + std::to_string(part) + ".txt";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::perror(path.c_str());
    return 1;
  }
  std::fprintf(out, "%ld %.9f %.9f\n", count, sum, sum2);
  std::fclose(out);
  return 0;
}
