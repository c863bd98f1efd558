#include "workflows/document_check.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include "workflows/node_reader.hpp"

namespace chorus {
namespace {

// What a node costs beyond its text: without aliases a file of at most 16 MiB stays far below
// any budget of 128 MiB even when it is all tiny nodes (each takes at least 2 bytes of text).
constexpr std::uint64_t kNodeBytes = 8;
// yaml-cpp refuses documents nested deeper than 2000; aliases can nest anchored nodes inside
// each other further (and an alias inside its own anchored node, without end). The walk
// recurses, so it stops at this depth.
constexpr std::size_t kMaxDepth = 4000;
// Containers whose expanded size reaches this are remembered, so that each further alias of one
// costs one step instead of a walk of its tree; smaller ones (at most 128 nodes) are walked again.
constexpr std::uint64_t kRememberBytes = 1024;

class DocumentWalk {
 public:
  DocumentWalk(std::uint64_t max_bytes, DiagnosticList& diags) : max_(max_bytes), diags_(diags) {}

  // False when the walk must stop (over budget or a cycle); NUL reports do not stop it. The walk
  // keeps its own stack of open containers instead of recursing: the depth it allows (kMaxDepth,
  // which aliases can reach) would overflow a thread's stack where frames are large (seen under
  // AddressSanitizer, on "tasks: &t [*t]").
  bool walk(const YAML::Node& root) {
    if (!enter(root)) return false;
    while (!open_.empty()) {
      Open& o = open_.back();
      if (o.it == o.end) {
        if (o.key != 0 && total_ - o.start >= kRememberBytes)
          remembered_.emplace(o.key, total_ - o.start);
        open_.pop_back();
        continue;
      }
      // The child is taken and the position advanced before enter(), which may push a frame
      // (and move `o`). Copy-constructed, never assigned: assigning to a YAML::Node that refers
      // to a node would rewrite that node in the document.
      const YAML::Node child = next_child(o);
      if (!enter(child)) return false;
    }
    return true;
  }

 private:
  // A container being walked: where its children are, and the bytes counted when it opened.
  struct Open {
    YAML::Node node;
    YAML::const_iterator it, end;
    bool map = false;
    bool value_next = false;  // a map: the current entry's key was visited, its value is next
    std::uint64_t key = 0;    // identity()
    std::uint64_t start = 0;
  };

  static YAML::Node next_child(Open& o) {
    if (!o.map) return *o.it++;
    if (!o.value_next) {
      o.value_next = true;
      return o.it->first;
    }
    o.value_next = false;
    return (o.it++)->second;
  }

  // Counts `node`; a scalar is checked at once, a container opened (its children are walked by
  // walk()). False when the walk must stop.
  bool enter(const YAML::Node& node) {
    total_ += kNodeBytes;
    last_ = position_of(node, last_);
    if (node.IsScalar()) {
      const std::string& text = node.Scalar();
      total_ += text.size();
      if (total_ > max_) return over_budget(node, text.size());
      check_nul(node, text);
      return true;
    }
    if (total_ > max_) return over_budget(node, 0);
    if (!node.IsMap() && !node.IsSequence()) return true;
    const std::uint64_t key = identity(node);
    if (auto seen = remembered_.find(key); seen != remembered_.end()) {
      total_ += seen->second - kNodeBytes;
      if (total_ > max_) return over_budget(node, 0);
      return true;  // its scalars were checked on the first visit
    }
    if (open_.size() >= kMaxDepth) return too_deep(node);
    open_.push_back(
        {node, node.begin(), node.end(), node.IsMap(), false, key, total_ - kNodeBytes});
    return true;
  }

  // Which node this is: aliases share their anchor's node, and with it its mark. Two distinct
  // containers share a mark only when one is a flow collection that is the other's first key
  // (`{a: 1}: x`), which the style tells apart. 0: no mark (never remembered).
  static std::uint64_t identity(const YAML::Node& node) {
    const YAML::Mark m = node.Mark();
    if (m.pos < 0) return 0;
    const std::uint64_t flow = node.Style() == YAML::EmitterStyle::Flow ? 1 : 0;
    const std::uint64_t map = node.IsMap() ? 2 : 0;
    return ((static_cast<std::uint64_t>(m.pos) + 1) << 2) | map | flow;
  }

  bool over_budget(const YAML::Node& node, std::size_t own) {
    diags_.add(
        position_of(node, last_),
        "this file holds more than " + std::to_string(max_ >> 20) +
            " MiB of YAML once its aliases (*name) are expanded, the limit for a "
            "workflow" +
            (own > 0 ? " (the walk passed it here, at a value of " + std::to_string(own) + " bytes)"
                     : std::string(" (the walk passed it here)")) +
            "; repeat a large value through a placeholder or an env variable instead");
    return false;
  }

  bool too_deep(const YAML::Node& node) {
    bool cycle = false;
    for (const Open& open : open_) cycle = cycle || open.node.is(node);
    diags_.add(position_of(node),
               cycle ? std::string("this node contains an alias of itself (an alias inside the "
                                   "anchored node): the workflow would be infinite")
                     : "nesting is deeper than " + std::to_string(kMaxDepth) +
                           " levels once YAML aliases are expanded; a workflow needs only a few");
    return false;
  }

  void check_nul(const YAML::Node& node, const std::string& text) {
    const std::size_t nul = text.find('\0');
    if (nul == std::string::npos) return;
    // An aliased scalar is the same node each time: DiagnosticList keeps one report per place.
    diags_.add(position_of(node),
               "a NUL character (written \\0, \\x00 or \\u0000) at character " +
                   std::to_string(nul + 1) +
                   " of this string: the operating system would cut a path, an argument or "
                   "a variable there");
  }

  std::uint64_t max_;
  DiagnosticList& diags_;
  std::uint64_t total_ = 0;
  Position last_{1, 1};     // of the last node that had one (null nodes have none)
  std::vector<Open> open_;  // the containers being walked, outermost first
  std::unordered_map<std::uint64_t, std::uint64_t> remembered_;  // identity -> expanded bytes
};

}  // namespace

bool check_document(const YAML::Node& root, std::uint64_t max_bytes, DiagnosticList& diags) {
  const std::size_t before = diags.reports();
  DocumentWalk walk(max_bytes, diags);
  walk.walk(root);
  return diags.reports() == before;
}

}  // namespace chorus
