#include "schedulers/sim/json_value.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace chorus::sim {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Result<JsonValue> document() {
    skip_space();
    auto v = value(0);
    if (!v.ok()) return v;
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the JSON value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status error(const std::string& what) const {
    int line = 1, col = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return invalid_argument(source_ + ":" + std::to_string(line) + ":" + std::to_string(col) +
                            ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Result<JsonValue> value(int depth) {
    if (depth > kMaxDepth) return error("JSON nested too deeply");
    if (pos_ >= text_.size()) return error("unexpected end of input");
    char c = text_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      auto s = string();
      if (!s.ok()) return s.status();
      return JsonValue(std::move(*s));
    }
    if (literal("true")) return JsonValue(true);
    if (literal("false")) return JsonValue(false);
    if (literal("null")) return JsonValue();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return error(std::string("unexpected character '") + c + "'");
  }

  Result<JsonValue> number() {
    std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      std::size_t s = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ > s;
    };
    if (!digits()) return error("malformed number");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digits()) return error("malformed number");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) return error("malformed number");
    }
    std::string s(text_.substr(start, pos_ - start));
    double d = std::strtod(s.c_str(), nullptr);
    if (!std::isfinite(d)) return error("number out of range");
    return JsonValue(d);
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Result<std::string> string() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return error("truncated \\u escape");
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            char h = text_[pos_++];
            cp <<= 4;
            if (h >= '0' && h <= '9')
              cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f')
              cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              cp |= static_cast<unsigned>(h - 'A' + 10);
            else
              return error("bad \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return error(std::string("unknown escape '\\") + e + "'");
      }
    }
    return error("unterminated string");
  }

  Result<JsonValue> array(int depth) {
    ++pos_;
    JsonValue::Array items;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return JsonValue(std::move(items));
    }
    while (true) {
      skip_space();
      auto v = value(depth + 1);
      if (!v.ok()) return v;
      items.push_back(std::move(*v));
      skip_space();
      if (pos_ >= text_.size()) return error("unterminated array");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        return JsonValue(std::move(items));
      }
      return error("expected ',' or ']' in an array");
    }
  }

  Result<JsonValue> object(int depth) {
    ++pos_;
    JsonValue::Object members;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return error("expected a member name");
      auto key = string();
      if (!key.ok()) return key.status();
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return error("expected ':'");
      ++pos_;
      skip_space();
      auto v = value(depth + 1);
      if (!v.ok()) return v;
      members.emplace_back(std::move(*key), std::move(*v));
      skip_space();
      if (pos_ >= text_.size()) return error("unterminated object");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return JsonValue(std::move(members));
      }
      return error("expected ',' or '}' in an object");
    }
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : as_object()) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<JsonValue> JsonValue::parse(std::string_view text, const std::string& source) {
  return Parser(text, source).document();
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double d) {
  if (!std::isfinite(d)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", d);
  return buf;
}

}  // namespace chorus::sim
