#include "schedulers/planners/platform_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "core/text.hpp"

namespace chorus {
namespace {

Status at(const std::string& path, const YAML::Node& node, const std::string& message) {
  const auto mark = node.Mark();
  if (mark.line < 0) return invalid_argument(path + ": " + message);
  return invalid_argument(path + ":" + std::to_string(mark.line + 1) + ":" +
                          std::to_string(mark.column + 1) + ": " + message);
}

Status check_keys(const std::string& path, const YAML::Node& map,
                  const std::vector<std::string>& allowed, const std::string& where) {
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return at(path, kv.first,
                "unknown key '" + key + "' in " + where + did_you_mean(key, allowed));
    }
  }
  return {};
}

template <typename T>
Status read_scalar(const std::string& path, const YAML::Node& map, const char* key, T& out) {
  const YAML::Node v = map[key];
  if (!v) return {};
  try {
    out = v.as<T>();
  } catch (const YAML::Exception&) {
    return at(path, v, std::string("'") + key + "' must be a number");
  }
  return {};
}

}  // namespace

Result<Platform> parse_platform(std::string_view yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    return invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root.IsMap())
    return invalid_argument(path + ": a platform file is a map with machine_types");
  Platform p;
  try {
    if (Status s = check_keys(path, root, {"name", "description", "machine_types"}, "platform");
        !s.ok()) {
      return s;
    }
    if (root["name"]) p.name = root["name"].as<std::string>();
    const YAML::Node types = root["machine_types"];
    if (types && !types.IsSequence()) {
      return at(path, types, "'machine_types' must be a list of machine types");
    }
    if (types) {
      for (const auto& t : types) {
        if (!t.IsMap())
          return at(path, t, "a machine type is a map {name, speed, cores, count, price}");
        if (Status s =
                check_keys(path, t, {"name", "speed", "cores", "count", "price"}, "machine type");
            !s.ok()) {
          return s;
        }
        MachineType m;
        if (t["name"]) m.name = t["name"].as<std::string>();
        for (Status s :
             {read_scalar(path, t, "speed", m.speed), read_scalar(path, t, "cores", m.cores),
              read_scalar(path, t, "count", m.count), read_scalar(path, t, "price", m.price)}) {
          if (!s.ok()) return s;
        }
        p.types.push_back(std::move(m));
      }
    }
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ": " + e.what());
  }
  if (Status s = validate_platform(p); !s.ok()) return invalid_argument(path + ": " + s.message());
  return p;
}

Result<Platform> read_platform_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open the platform file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_platform(buf.str(), path);
}

}  // namespace chorus
