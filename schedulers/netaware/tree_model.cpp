#include "schedulers/netaware/tree_model.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace chorus {
namespace {

using json = nlohmann::json;

// One node of the flattened forest, 16 bytes: a split (feature < value ? yes : no; NaN goes to
// the missing side) or a leaf (feature == kLeaf, value = the leaf's output). Children are indices
// into the one array of all trees' nodes; each tree is laid out in preorder with its `yes` child
// right after it, so the usual path walks forward through memory.
struct Node {
  float value = 0;
  std::uint32_t yes = 0;
  std::uint32_t no = 0;
  std::uint16_t feature = 0;
  std::uint8_t missing_yes = 0;
  std::uint8_t unused = 0;
};
static_assert(sizeof(Node) == 16);
constexpr std::uint16_t kLeaf = 0xFFFF;

// Deep enough for any booster we train (max_depth 6 by default; XGBoost's limit for hist is 31
// by memory long before this), shallow enough that a hostile file cannot exhaust the stack of a
// recursive reader: the walk below is iterative anyway.
constexpr int kMaxDepth = 64;
constexpr std::int64_t kMaxNodeId = 1 << 24;

std::string list_text(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out + "]";
}

struct Parser {
  const std::string& path;
  std::vector<Node> nodes;
  std::vector<std::uint32_t> roots;

  Status bad(std::size_t tree, const std::string& what) const {
    return invalid_argument(path + ": malformed tree " + std::to_string(tree) + ": " + what);
  }

  static bool node_id(const json& j, const char* key, std::int64_t& out) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return false;
    out = it->get<std::int64_t>();
    return true;
  }

  Status tree(std::size_t t, const json& root) {
    struct Pending {
      const json* node;
      std::int64_t expected_id;  // the id its parent named; -1 for the root
      std::uint32_t parent;      // index of the parent's Node; unused for the root
      bool is_yes;
      int depth;
    };
    std::vector<Pending> stack{{&root, -1, 0, false, 0}};
    std::unordered_set<std::int64_t> seen;
    roots.push_back(static_cast<std::uint32_t>(nodes.size()));
    while (!stack.empty()) {
      const Pending p = stack.back();
      stack.pop_back();
      const json& j = *p.node;
      if (!j.is_object()) return bad(t, "a node is not an object");
      std::int64_t id = 0;
      if (!node_id(j, "nodeid", id)) return bad(t, "a node has no integer \"nodeid\"");
      if (id < 0 || id >= kMaxNodeId) {
        return bad(t, "node id " + std::to_string(id) + " out of range [0, " +
                          std::to_string(kMaxNodeId) + ")");
      }
      if (p.expected_id >= 0 && id != p.expected_id) {
        return bad(t, "a child has node id " + std::to_string(id) + " where its parent names " +
                          std::to_string(p.expected_id));
      }
      if (!seen.insert(id).second) {
        return bad(t, "node id " + std::to_string(id) + " appears twice (a cycle)");
      }
      if (p.depth > kMaxDepth)
        return bad(t, "deeper than " + std::to_string(kMaxDepth) + " levels");
      const auto index = static_cast<std::uint32_t>(nodes.size());
      if (p.expected_id >= 0) (p.is_yes ? nodes[p.parent].yes : nodes[p.parent].no) = index;
      Node n;
      if (const auto leaf = j.find("leaf"); leaf != j.end()) {
        if (!leaf->is_number()) return bad(t, "leaf " + std::to_string(id) + " is not a number");
        n.feature = kLeaf;
        n.value = static_cast<float>(leaf->get<double>());
        nodes.push_back(n);
        continue;
      }
      const auto split = j.find("split");
      if (split == j.end() || !split->is_string()) {
        return bad(t, "node " + std::to_string(id) + " is neither a leaf nor a split");
      }
      const auto names = feature_names();
      std::size_t f = 0;
      while (f < names.size() && names[f] != split->get_ref<const std::string&>()) ++f;
      if (f == names.size()) {
        return bad(t, "node " + std::to_string(id) + " splits on unknown feature \"" +
                          split->get<std::string>() + "\"");
      }
      const auto cond = j.find("split_condition");
      if (cond == j.end() || !cond->is_number()) {
        return bad(t, "split " + std::to_string(id) + " has no numeric \"split_condition\"");
      }
      std::int64_t yes = 0;
      std::int64_t no = 0;
      std::int64_t missing = 0;
      if (!node_id(j, "yes", yes) || !node_id(j, "no", no) || !node_id(j, "missing", missing)) {
        return bad(
            t, "split " + std::to_string(id) + " lacks an integer \"yes\", \"no\" or \"missing\"");
      }
      if (yes == no || (missing != yes && missing != no)) {
        return bad(t, "split " + std::to_string(id) + ": yes " + std::to_string(yes) + ", no " +
                          std::to_string(no) + ", missing " + std::to_string(missing) +
                          " (missing must be one of two distinct children)");
      }
      const auto children = j.find("children");
      if (children == j.end() || !children->is_array() || children->size() != 2) {
        return bad(t, "split " + std::to_string(id) + " does not have its two children");
      }
      n.feature = static_cast<std::uint16_t>(f);
      n.value = static_cast<float>(cond->get<double>());
      n.missing_yes = missing == yes ? 1 : 0;
      nodes.push_back(n);
      // Find which child is which by id (XGBoost lists yes first; a file need not).
      const json* c_yes = nullptr;
      const json* c_no = nullptr;
      for (const json& c : *children) {
        std::int64_t cid = -1;
        if (c.is_object()) node_id(c, "nodeid", cid);
        if (cid == yes) c_yes = &c;
        if (cid == no) c_no = &c;
      }
      if (c_yes == nullptr || c_no == nullptr) {
        return bad(t, "split " + std::to_string(id) + " names children " + std::to_string(yes) +
                          " and " + std::to_string(no) + " that are not among its children");
      }
      // `no` first on the stack, so `yes` is laid out right after its parent.
      stack.push_back({c_no, no, index, false, p.depth + 1});
      stack.push_back({c_yes, yes, index, true, p.depth + 1});
    }
    return {};
  }
};

}  // namespace

struct TreeModel::Impl {
  std::string path;
  bool log_target = true;
  float base_score = 0;
  std::vector<Node> nodes;
  std::vector<std::uint32_t> roots;
};

TreeModel::TreeModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TreeModel::~TreeModel() = default;
TreeModel::TreeModel(TreeModel&&) noexcept = default;
TreeModel& TreeModel::operator=(TreeModel&&) noexcept = default;

Result<TreeModel> TreeModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open the model file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error(path + ": cannot read the model file");
  return parse(text.str(), path);
}

Result<TreeModel> TreeModel::parse(std::string_view text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return invalid_argument(path + ": not a chorus model (not JSON: " + e.what() + ")");
  }
  if (!j.is_object()) return invalid_argument(path + ": not a chorus model (not a JSON object)");
  const auto format = j.find("format");
  if (format == j.end() || *format != "chorus-jct-model") {
    return invalid_argument(path + ": not a chorus model (\"format\" is " +
                            (format == j.end() ? std::string("missing") : format->dump()) +
                            ", expected \"chorus-jct-model\")");
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || *version != 1) {
    return invalid_argument(path + ": model file version " +
                            (version == j.end() ? std::string("missing") : version->dump()) +
                            ", this build reads version 1");
  }
  const auto features = j.find("features");
  if (features == j.end() || !features->is_array()) {
    return invalid_argument(path + ": a chorus model must list its \"features\"");
  }
  std::vector<std::string> theirs;
  for (const json& f : *features) {
    if (!f.is_string()) return invalid_argument(path + ": \"features\" must be names (strings)");
    theirs.push_back(f.get<std::string>());
  }
  const auto ours_view = feature_names();
  const std::vector<std::string> ours(ours_view.begin(), ours_view.end());
  if (theirs != ours) {
    std::size_t i = 0;
    while (i < theirs.size() && i < ours.size() && theirs[i] == ours[i]) ++i;
    const std::string at =
        i < theirs.size() && i < ours.size() ? "feature " + std::to_string(i + 1) + " is " +
                                                   theirs[i] + " there, " + ours[i] + " here"
        : i < ours.size()
            ? "it lacks " + ours[i] + " (feature " + std::to_string(i + 1) + ")"
            : "it has more: " + theirs[i] + " (feature " + std::to_string(i + 1) + ")";
    return invalid_argument(path + ": trained on other features than this build's (" + at +
                            "): the file has " + list_text(theirs) + ", this build has " +
                            list_text(ours) + "; retrain it with `chorus model train`");
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const auto target = j.find("target");
  if (target != j.end() && *target == "log_seconds") {
    impl->log_target = true;
  } else if (target != j.end() && *target == "seconds") {
    impl->log_target = false;
  } else {
    return invalid_argument(path + ": \"target\" is " +
                            (target == j.end() ? std::string("missing") : target->dump()) +
                            ", expected \"log_seconds\" or \"seconds\"");
  }
  const auto base = j.find("base_score");
  if (base == j.end() || !base->is_number()) {
    return invalid_argument(path + ": \"base_score\" must be a number");
  }
  impl->base_score = static_cast<float>(base->get<double>());
  const auto trees = j.find("trees");
  if (trees == j.end() || !trees->is_array() || trees->empty()) {
    return invalid_argument(path + ": \"trees\" must be a non-empty array");
  }
  Parser p{path, {}, {}};
  for (std::size_t t = 0; t < trees->size(); ++t) {
    if (Status st = p.tree(t, (*trees)[t]); !st.ok()) return st;
  }
  impl->nodes = std::move(p.nodes);
  impl->roots = std::move(p.roots);
  impl->nodes.shrink_to_fit();
  return TreeModel(std::move(impl));
}

double TreeModel::predict_s(const FeatureVector& x) const {
  const Node* nodes = impl_->nodes.data();
  // Summed in float from base_score, tree by tree, as XGBoost's CPU predictor does: the same
  // additions in the same order give the same bits.
  float sum = impl_->base_score;
  for (const std::uint32_t root : impl_->roots) {
    const Node* n = nodes + root;
    while (n->feature != kLeaf) {
      const float v = x[n->feature];
      const bool yes = std::isnan(v) ? n->missing_yes != 0 : v < n->value;
      n = nodes + (yes ? n->yes : n->no);
    }
    sum += n->value;
  }
  return impl_->log_target ? std::exp(static_cast<double>(sum)) : static_cast<double>(sum);
}

std::size_t TreeModel::tree_count() const {
  return impl_->roots.size();
}

const std::string& TreeModel::path() const {
  return impl_->path;
}

}  // namespace chorus
