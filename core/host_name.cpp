#include "core/host_name.hpp"

#include <unistd.h>

namespace chorus {

std::string host_name() {
  char host[256] = {};  // HOST_NAME_MAX is 64 on Linux; the last byte stays NUL
  return gethostname(host, sizeof host - 1) == 0 && host[0] != '\0' ? host : "localhost";
}

}  // namespace chorus
