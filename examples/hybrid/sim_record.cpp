#include "examples/hybrid/sim_record.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

namespace chorus::hybrid {

int numbered_name(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix))
    return -1;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoi(digits);
}

Result<SimRecord> read_sim(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return not_found(file.string() + ": cannot open");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(file.string() + ": not valid JSON");
  SimRecord r;
  const char* keys[] = {"a", "b", "value"};
  double* slots[] = {&r.x[0], &r.x[1], &r.value};
  for (int k = 0; k < 3; ++k) {
    if (!j.is_object() || !j.contains(keys[k]) || !j[keys[k]].is_number())
      return invalid_argument(file.string() + ": no numeric \"" + keys[k] + "\"");
    *slots[k] = j[keys[k]].get<double>();
  }
  r.index = numbered_name(file.filename().string(), "sim-", ".json");
  r.round = numbered_name(file.parent_path().filename().string(), "round-", "");
  if (r.round < 0) r.round = 0;
  return r;
}

Result<std::vector<SimRecord>> load_sims(const std::filesystem::path& dir, int only_round) {
  std::error_code ec;
  std::vector<SimRecord> out;
  std::filesystem::directory_iterator rounds(dir, ec);
  if (ec) return not_found(dir.string() + ": " + ec.message());
  for (const auto& round_dir : rounds) {
    const int round = numbered_name(round_dir.path().filename().string(), "round-", "");
    if (round < 0 || !round_dir.is_directory() || (only_round > 0 && round != only_round)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(round_dir.path(), ec)) {
      if (numbered_name(entry.path().filename().string(), "sim-", ".json") < 0) continue;
      auto sim = read_sim(entry.path());
      if (!sim) return sim.status();
      out.push_back(*sim);
    }
    if (ec) return io_error(round_dir.path().string() + ": " + ec.message());
  }
  std::sort(out.begin(), out.end(), [](const SimRecord& p, const SimRecord& q) {
    return p.round != q.round ? p.round < q.round : p.index < q.index;
  });
  return out;
}

}  // namespace chorus::hybrid
