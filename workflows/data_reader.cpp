#include "workflows/data_reader.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/text.hpp"
#include "workflows/key_checker.hpp"

namespace chorus {
namespace {

const KeyChecker& source_keys() {
  static const KeyChecker checker({"address", "probe"}, {});
  return checker;
}

const KeyChecker& data_keys() {
  static const KeyChecker checker(
      {"input", "from", "output", "to", "cpu"}, {}, {},
      {{"size", "for the bytes a task reads, use 'input: 64MB' (and 'output:' for what it writes)"},
       {"source", "for where the input comes from, use 'from: SOURCE'"},
       {"sink", "for where the output goes, use 'to: SOURCE'"}});
  return checker;
}

bool valid_source_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

// "HOST:PORT" or "[v6]:PORT" into the source; reports at `at` what is wrong.
bool parse_address(const std::string& text, Position at, const std::string& label, DataSource& out,
                   DiagnosticList& diags) {
  const std::string usage = " (write HOST:PORT, e.g. 10.0.0.5:9000 or [fd00::5]:9000)";
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) {
      diags.add(at, label + " '" + text + "' opens '[' without closing it" + usage);
      return false;
    }
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      diags.add(at, label + " '" + text + "' has no port" + usage);
      return false;
    }
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      diags.add(at, label + " '" + text + "' has no port" + usage);
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      diags.add(at, label + " '" + text + "': an IPv6 address needs brackets" + usage);
      return false;
    }
  }
  if (host.empty()) {
    diags.add(at, label + " '" + text + "' has no host" + usage);
    return false;
  }
  if (port.empty()) {
    diags.add(at, label + " '" + text + "' has no port" + usage);
    return false;
  }
  const bool digits =
      std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long value = digits && port.size() <= 6 ? std::strtol(port.c_str(), nullptr, 10) : -1;
  if (value < 1 || value > 65535) {
    diags.add(at, label + " '" + text + "': port '" + port + "' is not in 1..65535");
    return false;
  }
  out.host = host;
  out.port = static_cast<int>(value);
  return true;
}

std::optional<std::uint64_t> read_size(const MapEntry& k, const std::string& label,
                                       DiagnosticList& diags) {
  if (!k.value.IsScalar()) {
    diags.add(k.value_pos,
              label + " must be a size such as 64MB or 1.5G, got " + describe_node(k.value));
    return std::nullopt;
  }
  auto bytes = parse_data_bytes(k.value.Scalar());
  if (!bytes.ok()) {
    diags.add(k.value_pos, label + ": " + bytes.status().message());
    return std::nullopt;
  }
  return *bytes;
}

}  // namespace

std::vector<DataSource> read_sources(const MapEntry* entry, DiagnosticList& diags) {
  std::vector<DataSource> out;
  if (entry == nullptr || entry->value.IsNull()) return out;
  if (!entry->value.IsMap()) {
    diags.add(entry->value_pos, "'sources' must be a map of NAME: {address: HOST:PORT}, got " +
                                    describe_node(entry->value));
    return out;
  }
  for (const MapEntry& s : map_entries(entry->value, "in 'sources'", diags)) {
    if (!valid_source_name(s.key)) {
      diags.add(s.key_pos, "source name '" + s.key +
                               "' must be letters, digits, '_', '-' or '.' (tasks name it in "
                               "'from:'/'to:')");
      continue;
    }
    const std::string where = "source '" + s.key + "'";
    if (!s.value.IsMap()) {
      diags.add(s.value_pos, where + " must be a map such as {address: HOST:PORT}, got " +
                                 describe_node(s.value));
      continue;
    }
    DataSource src;
    src.name = s.key;
    src.line = s.key_pos.line;
    src.column = s.key_pos.column;
    bool ok = true, addressed = false;
    for (const MapEntry& k : source_keys().check(s.value, "in " + where, diags)) {
      const std::string label = "'" + k.key + "' of " + where;
      auto text = read_string(k, label, diags);
      if (!text) {
        ok = false;
        continue;
      }
      if (k.key == "address") {
        addressed = true;
        ok = parse_address(*text, k.value_pos, "the address of " + where, src, diags) && ok;
      } else if (*text == "data-server") {
        src.probe = SourceProbe::data_server;
      } else if (*text == "connect") {
        src.probe = SourceProbe::connect;
      } else if (*text == "none") {
        src.probe = SourceProbe::none;
      } else {
        diags.add(k.value_pos, "unknown probe '" + *text + "' of " + where +
                                   did_you_mean(*text, {"data-server", "connect", "none"}) +
                                   "; known: data-server, connect, none");
        ok = false;
      }
    }
    if (!addressed) {
      diags.add(s.value_pos, where + " has no 'address' (HOST:PORT)");
      ok = false;
    }
    if (ok) out.push_back(std::move(src));
  }
  return out;
}

std::optional<DataTemplate> read_data(const MapEntry& e, const std::string& where,
                                      const std::optional<DataTemplate>& base,
                                      const std::vector<DataSource>& sources,
                                      DiagnosticList& diags) {
  const std::string usage = "a map such as {input: 64MB, from: store1, output: 16MB, to: sink}";
  if (!e.value.IsMap()) {
    diags.add(e.value_pos,
              "'data' " + where + " must be " + usage + ", got " + describe_node(e.value));
    return std::nullopt;
  }
  std::vector<std::string> names;
  names.reserve(sources.size());
  for (const DataSource& s : sources) names.push_back(s.name);
  DataTemplate t = base.value_or(DataTemplate{});
  Position input_pos = e.value_pos, output_pos = e.value_pos;
  bool ok = true;
  for (const MapEntry& k : data_keys().check(e.value, "in the data " + where, diags)) {
    const std::string label = "'data." + k.key + "' " + where;
    if (k.key == "input" || k.key == "output") {
      auto bytes = read_size(k, label, diags);
      if (!bytes) {
        ok = false;
      } else if (k.key == "input") {
        t.data.input_bytes = *bytes;
        input_pos = k.value_pos;
      } else {
        t.data.output_bytes = *bytes;
        output_pos = k.value_pos;
      }
    } else if (k.key == "from" || k.key == "to") {
      auto name = read_string(k, label, diags);
      if (!name) {
        ok = false;
        continue;
      }
      auto it = std::find(names.begin(), names.end(), *name);
      if (it == names.end()) {
        ok = false;
        if (names.empty()) {
          diags.add(k.value_pos, label + " names '" + *name +
                                     "', but no sources are declared (add 'sources: {" + *name +
                                     ": {address: HOST:PORT}}' at the top level)");
        } else {
          diags.add(k.value_pos, label + " names an undeclared source '" + *name + "'" +
                                     did_you_mean(*name, names) + "; declared: " + join(names));
        }
        continue;
      }
      const auto id = static_cast<SourceId>(it - names.begin());
      (k.key == "from" ? t.from : t.to) = LocatedText{*name, k.value_pos};
      (k.key == "from" ? t.data.from : t.data.to) = id;
    } else if (k.key == "cpu") {
      auto d = read_duration(k, label, diags);
      if (!d) {
        ok = false;
      } else {
        t.data.cpu = *d;
      }
    }
  }
  if (!ok) return std::nullopt;
  if (t.data.input_bytes > 0 && t.data.from == kNoSource) {
    diags.add(input_pos, "'data.input' " + where +
                             " needs 'from: SOURCE' (the declared source it is read from)");
    return std::nullopt;
  }
  if (t.data.output_bytes > 0 && t.data.to == kNoSource) {
    diags.add(output_pos, "'data.output' " + where +
                              " needs 'to: SOURCE' (the declared source it is written to)");
    return std::nullopt;
  }
  return t;
}

}  // namespace chorus
