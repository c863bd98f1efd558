// FNV-1a, 64 bit: a stable (across runs and builds) fingerprint for journaled specs.
// Not cryptographic; strings are length-prefixed so ("ab","c") and ("a","bc") differ.
#pragma once

#include <cstdint>
#include <string_view>

namespace chorus {

class Fnv1a {
 public:
  Fnv1a& add(std::string_view s) {
    add(static_cast<std::uint64_t>(s.size()));
    for (unsigned char c : s) mix(c);
    return *this;
  }
  Fnv1a& add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(v >> (8 * i)));
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= 1099511628211ULL;
  }
  std::uint64_t h_ = 14695981039346656037ULL;
};

}  // namespace chorus
