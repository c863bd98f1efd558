#include "schedulers/netaware/tree_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
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

// The evaluation layout. A tree of depth D <= kCompleteDepth is stored complete: 2^D - 1 splits
// in heap order (children of k at 2k+1 and 2k+2), a leaf above depth D repeated down both sides
// (so the side a padded split takes does not matter), then 2^D leaf values. Its walk is D steps
// with no data-dependent branch (the side is arithmetic), so the CPU overlaps consecutive trees
// instead of stalling on a mispredicted branch per level. A deeper tree, or one with fewer than
// 2^D / 4 nodes (padding would multiply its memory), keeps the linked `Node` layout. Either way
// one leaf per tree, added in tree order.
constexpr int kCompleteDepth = 10;

struct Split {
  float threshold = 0;
  std::uint16_t feature = 0;
  std::uint16_t missing_right = 0;  // 1: NaN goes to the `no` (right) side
};
static_assert(sizeof(Split) == 8);

struct TreeRef {
  std::uint32_t first = 0;  // complete: first split and first leaf; linked: the root Node
  std::uint32_t first_leaf = 0;
  std::int32_t depth = -1;  // -1: linked layout
};

// kBlock consecutive complete trees of one depth are walked level by level together: their walks
// are independent chains of loads, so interleaving them keeps the CPU busy while each waits.
constexpr std::size_t kBlock = 8;
struct Step {
  std::uint32_t tree = 0;
  std::uint32_t count = 1;  // kBlock: a block; 1: one tree
};

std::string_view to_string(ModelTarget target) {
  switch (target) {
    case ModelTarget::log_seconds:
      return "log_seconds";
    case ModelTarget::seconds:
      return "seconds";
    case ModelTarget::log_ratio:
      return "log_ratio";
  }
  return "log_seconds";
}

std::optional<ModelTarget> parse_model_target(std::string_view text) {
  for (ModelTarget t : {ModelTarget::log_seconds, ModelTarget::seconds, ModelTarget::log_ratio}) {
    if (text == to_string(t)) return t;
  }
  return std::nullopt;
}

double seconds_from(ModelTarget target, double raw, const FeatureVector& x) {
  switch (target) {
    case ModelTarget::seconds:
      return raw;
    case ModelTarget::log_ratio: {
      const double a = x[static_cast<std::size_t>(Feature::analytic_s)];
      return a > 0 ? std::exp(raw) * a : std::numeric_limits<double>::quiet_NaN();
    }
    case ModelTarget::log_seconds:
      break;
  }
  return std::exp(raw);
}

struct TreeModel::Impl {
  std::string path;
  std::vector<Step> steps;
  ModelTarget target = ModelTarget::log_seconds;
  float base_score = 0;
  std::vector<TreeRef> trees;
  std::vector<Split> splits;
  std::vector<float> leaves;
  std::vector<Node> nodes;  // the trees not stored complete

  // The tree's depth and node count. Iterative: a tree may be up to kMaxDepth deep.
  static std::pair<int, std::size_t> shape_of(std::uint32_t n, const std::vector<Node>& all) {
    int deepest = 0;
    std::size_t count = 0;
    std::vector<std::pair<std::uint32_t, int>> stack{{n, 0}};
    while (!stack.empty()) {
      auto [i, d] = stack.back();
      stack.pop_back();
      ++count;
      deepest = std::max(deepest, d);
      if (all[i].feature != kLeaf) {
        stack.push_back({all[i].yes, d + 1});
        stack.push_back({all[i].no, d + 1});
      }
    }
    return {deepest, count};
  }

  void fill(const std::vector<Node>& all, std::uint32_t n, std::uint32_t k, int level, int depth,
            std::uint32_t split0, std::uint32_t leaf0) {
    const Node& node = all[n];
    if (level == depth) {
      leaves[leaf0 + k - ((1u << depth) - 1)] = node.value;
      return;
    }
    if (node.feature == kLeaf) {
      splits[split0 + k] = Split{};  // padding: both sides lead to this leaf
      fill(all, n, 2 * k + 1, level + 1, depth, split0, leaf0);
      fill(all, n, 2 * k + 2, level + 1, depth, split0, leaf0);
      return;
    }
    splits[split0 + k] =
        Split{node.value, node.feature, static_cast<std::uint16_t>(node.missing_yes != 0 ? 0 : 1)};
    fill(all, node.yes, 2 * k + 1, level + 1, depth, split0, leaf0);
    fill(all, node.no, 2 * k + 2, level + 1, depth, split0, leaf0);
  }

  // Lays out the parsed trees (linked `all`, `roots`) for evaluation.
  void build(const std::vector<Node>& all, const std::vector<std::uint32_t>& roots) {
    for (std::uint32_t root : roots) {
      const auto [depth, count] = shape_of(root, all);
      TreeRef t;
      // Complete when shallow and not much sparser than complete (XGBoost's depth-limited trees
      // are near complete); a sparse deep tree would pad to 2^depth entries for a few nodes.
      if (depth <= kCompleteDepth && (std::size_t{1} << depth) <= 4 * count) {
        t.depth = depth;
        t.first = static_cast<std::uint32_t>(splits.size());
        t.first_leaf = static_cast<std::uint32_t>(leaves.size());
        splits.resize(splits.size() + (1u << depth) - 1);
        leaves.resize(leaves.size() + (1u << depth));
        fill(all, root, 0, 0, depth, t.first, t.first_leaf);
      } else {
        // Copied with its subtree, indices rebased into `nodes`.
        t.first = static_cast<std::uint32_t>(nodes.size());
        std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{root, t.first}};
        nodes.emplace_back();
        while (!stack.empty()) {
          auto [from, to] = stack.back();
          stack.pop_back();
          nodes[to] = all[from];
          if (all[from].feature != kLeaf) {
            const auto yes = static_cast<std::uint32_t>(nodes.size());
            nodes.emplace_back();
            const auto no = static_cast<std::uint32_t>(nodes.size());
            nodes.emplace_back();
            nodes[to].yes = yes;
            nodes[to].no = no;
            stack.push_back({all[from].no, no});
            stack.push_back({all[from].yes, yes});
          }
        }
      }
      trees.push_back(t);
    }
    // Blocks of kBlock consecutive complete trees of one depth, walked together.
    for (std::size_t i = 0; i < trees.size();) {
      std::size_t j = i;
      while (j < trees.size() && j - i < kBlock && trees[j].depth >= 0 &&
             trees[j].depth == trees[i].depth)
        ++j;
      if (j - i == kBlock) {
        steps.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(kBlock)});
        i = j;
      } else {
        steps.push_back({static_cast<std::uint32_t>(i), 1});
        ++i;
      }
    }
  }
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
  } catch (const json::exception& e) {
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
  std::optional<ModelTarget> parsed;
  if (target != j.end() && target->is_string())
    parsed = parse_model_target(target->get<std::string>());
  if (parsed) {
    impl->target = *parsed;
  } else {
    return invalid_argument(path + ": \"target\" is " +
                            (target == j.end() ? std::string("missing") : target->dump()) +
                            ", expected \"log_seconds\", \"seconds\" or \"log_ratio\"");
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
  impl->build(p.nodes, p.roots);
  return TreeModel(std::move(impl));
}

double TreeModel::predict_s(const FeatureVector& x) const {
  const Split* splits = impl_->splits.data();
  const float* leaves = impl_->leaves.data();
  const Node* nodes = impl_->nodes.data();
  // Summed in float from base_score, tree by tree, as XGBoost's CPU predictor does: the same
  // additions in the same order give the same bits.
  float sum = impl_->base_score;
  const TreeRef* trees = impl_->trees.data();
  for (const Step& step : impl_->steps) {
    const TreeRef& t = trees[step.tree];
    if (step.count == kBlock) {
      const int depth = t.depth;
      const std::uint32_t n_splits = (1u << depth) - 1;
      const Split* s = splits + t.first;
      const float* lv = leaves + t.first_leaf;
      std::uint32_t k[kBlock] = {};
      for (int level = 0; level < depth; ++level) {
        for (std::size_t j = 0; j < kBlock; ++j) {
          const Split& sp = s[j * n_splits + k[j]];
          const float v = x[sp.feature];
          const std::uint32_t right = static_cast<std::uint32_t>(!(v < sp.threshold)) &
                                      (static_cast<std::uint32_t>(v == v) | sp.missing_right);
          k[j] = 2 * k[j] + 1 + right;
        }
      }
      for (std::size_t j = 0; j < kBlock; ++j) sum += lv[j * (n_splits + 1) + k[j] - n_splits];
      continue;
    }
    if (t.depth >= 0) {
      const Split* s = splits + t.first;
      std::uint32_t k = 0;
      for (int level = 0; level < t.depth; ++level) {
        const Split& sp = s[k];
        const float v = x[sp.feature];
        // `no` (right) when not v < threshold, except a NaN whose missing side is `yes`.
        const std::uint32_t right = static_cast<std::uint32_t>(!(v < sp.threshold)) &
                                    (static_cast<std::uint32_t>(v == v) | sp.missing_right);
        k = 2 * k + 1 + right;
      }
      sum += leaves[t.first_leaf + k - ((1u << t.depth) - 1)];
      continue;
    }
    const Node* n = nodes + t.first;
    while (n->feature != kLeaf) {
      const float v = x[n->feature];
      const bool yes = std::isnan(v) ? n->missing_yes != 0 : v < n->value;
      n = nodes + (yes ? n->yes : n->no);
    }
    sum += n->value;
  }
  return seconds_from(impl_->target, static_cast<double>(sum), x);
}

std::size_t TreeModel::tree_count() const {
  return impl_->trees.size();
}

const std::string& TreeModel::path() const {
  return impl_->path;
}

}  // namespace chorus
