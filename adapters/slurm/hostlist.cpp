#include "adapters/slurm/hostlist.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

namespace chorus {
namespace {

struct Piece {
  std::string text;                  // literal text before the bracket (or the tail)
  std::vector<std::string> numbers;  // the bracket's expanded members; empty: no bracket
};

Status bad(std::string_view expression, const std::string& why) {
  return invalid_argument("bad hostlist '" + std::string(expression) + "': " + why);
}

std::optional<std::uint64_t> parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string padded(std::uint64_t v, std::size_t width) {
  std::string digits = std::to_string(v);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Splits at commas that are not inside brackets.
Result<std::vector<std::string_view>> split_top_level(std::string_view expression) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < expression.size(); ++i) {
    char c = expression[i];
    if (c == '[') {
      if (++depth > 1) return bad(expression, "nested '['");
    } else if (c == ']') {
      if (--depth < 0) return bad(expression, "']' without '['");
    } else if (c == ',' && depth == 0) {
      items.push_back(expression.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return bad(expression, "'[' without ']'");
  items.push_back(expression.substr(start));
  return items;
}

// "1-3,7" -> {1, 2, 3, 7}, each with the width of its range's lower bound.
Status expand_bracket(std::string_view expression, std::string_view body, std::size_t max_hosts,
                      std::vector<std::string>& out) {
  std::size_t start = 0;
  while (start <= body.size()) {
    std::size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view range = body.substr(start, comma - start);
    if (range.empty()) return bad(expression, "empty range in '[" + std::string(body) + "]'");
    std::size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    auto lo = parse_digits(lo_text);
    auto hi = parse_digits(hi_text);
    if (!lo || !hi) {
      return bad(expression, "'" + std::string(range) + "' is not a number or a lo-hi range");
    }
    if (*hi < *lo) {
      return bad(expression, "range '" + std::string(range) + "' ends below its start");
    }
    if (*hi - *lo >= max_hosts || out.size() + (*hi - *lo) >= max_hosts) {
      return bad(expression, "more than " + std::to_string(max_hosts) + " hosts");
    }
    for (std::uint64_t v = *lo; v <= *hi; ++v) out.push_back(padded(v, lo_text.size()));
    start = comma + 1;
  }
  return {};
}

// One item ("a[01-10]b[1-2]") -> its pieces: literal text and bracket groups.
Result<std::vector<Piece>> parse_item(std::string_view expression, std::string_view item,
                                      std::size_t max_hosts) {
  std::vector<Piece> pieces;
  std::size_t pos = 0;
  while (pos < item.size()) {
    std::size_t open = item.find('[', pos);
    Piece piece;
    piece.text =
        std::string(item.substr(pos, open == std::string_view::npos ? item.npos : open - pos));
    if (open == std::string_view::npos) {
      pieces.push_back(std::move(piece));
      break;
    }
    std::size_t close = item.find(']', open);  // balanced: checked by split_top_level
    if (Status s = expand_bracket(expression, item.substr(open + 1, close - open - 1), max_hosts,
                                  piece.numbers);
        !s.ok()) {
      return s;
    }
    pieces.push_back(std::move(piece));
    pos = close + 1;
  }
  return pieces;
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view expression,
                                                 std::size_t max_hosts) {
  auto items = split_top_level(expression);
  if (!items.ok()) return items.status();
  std::vector<std::string> hosts;
  for (std::string_view item : *items) {
    if (item.empty()) return bad(expression, "empty host name");
    auto pieces = parse_item(expression, item, max_hosts);
    if (!pieces.ok()) return pieces.status();
    // The product of the bracket groups, left to right.
    std::vector<std::string> names{""};
    for (const Piece& p : *pieces) {
      for (auto& n : names) n += p.text;
      if (p.numbers.empty()) continue;
      if (names.size() * p.numbers.size() + hosts.size() > max_hosts) {
        return bad(expression, "more than " + std::to_string(max_hosts) + " hosts");
      }
      std::vector<std::string> next;
      next.reserve(names.size() * p.numbers.size());
      for (const auto& n : names) {
        for (const auto& num : p.numbers) next.push_back(n + num);
      }
      names = std::move(next);
    }
    for (auto& n : names) hosts.push_back(std::move(n));
  }
  return hosts;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  struct Split {
    std::string prefix;
    std::string digits;  // empty: the name does not end in digits
  };
  auto split = [](const std::string& h) {
    std::size_t i = h.size();
    while (i > 0 && h[i - 1] >= '0' && h[i - 1] <= '9') --i;
    // Very long digit runs would overflow the range arithmetic: keep such names literal.
    if (h.size() - i > 18) i = h.size();
    return Split{h.substr(0, i), h.substr(i)};
  };

  std::string out;
  std::size_t i = 0;
  while (i < hosts.size()) {
    Split first = split(hosts[i]);
    if (!out.empty()) out += ',';
    if (first.digits.empty()) {
      out += hosts[i++];
      continue;
    }
    // Gather the run of hosts with this prefix, then cut it into ranges.
    std::vector<std::string> run{first.digits};
    std::size_t j = i + 1;
    for (; j < hosts.size(); ++j) {
      Split s = split(hosts[j]);
      if (s.digits.empty() || s.prefix != first.prefix) break;
      run.push_back(s.digits);
    }
    std::string ranges;
    std::size_t k = 0;
    while (k < run.size()) {
      const std::string& lo = run[k];
      std::uint64_t lo_value = *parse_digits(lo);
      std::size_t end = k + 1;
      // A range goes on while the numbers climb by one and print the same at lo's width.
      while (end < run.size() && padded(lo_value + (end - k), lo.size()) == run[end]) ++end;
      if (!ranges.empty()) ranges += ',';
      ranges += lo;
      if (end - k > 1) ranges += "-" + run[end - 1];
      k = end;
    }
    out += first.prefix;
    if (run.size() == 1) {
      out += run[0];
    } else {
      out += "[" + ranges + "]";
    }
    i = j;
  }
  return out;
}

}  // namespace chorus
