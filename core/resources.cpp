#include "core/resources.hpp"

namespace chorus {

std::string to_string(const Resources& r) {
  std::string s = std::to_string(r.cores) + (r.cores == 1 ? " core" : " cores");
  if (r.memory_mb > 0) s += ", " + std::to_string(r.memory_mb) + " MB";
  if (r.gpus > 0) s += ", " + std::to_string(r.gpus) + (r.gpus == 1 ? " GPU" : " GPUs");
  return s;
}

}  // namespace chorus
