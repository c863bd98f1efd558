// Resources: the vector every placement decision compares (cores, memory, GPUs).
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

struct Resources {
  int cores = 0;
  std::int64_t memory_mb = 0;  // 0 = not requested / not tracked
  int gpus = 0;

  bool fits_in(const Resources& free) const {
    return cores <= free.cores && memory_mb <= free.memory_mb && gpus <= free.gpus;
  }
  Resources& operator+=(const Resources& o) {
    cores += o.cores;
    memory_mb += o.memory_mb;
    gpus += o.gpus;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    cores -= o.cores;
    memory_mb -= o.memory_mb;
    gpus -= o.gpus;
    return *this;
  }
  Resources operator*(int n) const { return {cores * n, memory_mb * n, gpus * n}; }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  bool operator==(const Resources&) const = default;
};

// "4 cores, 512 MB, 1 GPU" (zero fields other than cores are omitted).
std::string to_string(const Resources& r);

}  // namespace chorus
